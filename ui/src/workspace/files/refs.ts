// File references: paths the agent writes as inline code (`src/a.go:12`)
// become links that open the Files tab's viewer at the line — but only
// those the server resolves inside the session's workspace. Each mention is
// resolved once per session (lazily, when a finished message shows it).

import { signal, type Signal } from "@preact/signals";
import type { Store } from "../../state/contract";
import { resolveRef, type Ref } from "./api";

/** What the Files tab should open next; n changes on every request so the
 * same place can be opened twice. */
export interface FileTarget { session: string; path: string; line: number; n: number }

/** A person's unsaved text, with the version it was begun from: it
 * outlives the tab (switching tabs, the pane remounting on a resize), and
 * a save sends that version, so a change made meanwhile is still caught. */
export interface Draft {
  text: string; etag: string;
  /** A save was refused: the version now on disk ("" deleted), and why. */
  conflict?: { etag: string; message: string };
}

interface RefState {
  target: Signal<FileTarget | null>;
  /** The last target the Files tab acted on (a remounted tab must not
   * act on it again). */
  handled: number;
  /** session id -> mention -> the checked reference (null: not a file). */
  cache: Map<string, Map<string, Promise<Ref | null>>>;
  /** session id -> the file open in the Files tab. */
  open: Map<string, { path: string; line: number }>;
  /** session id + "\n" + path -> the unsaved edit. */
  drafts: Map<string, Draft>;
}

// Per store, so a test mounting a store of its own starts clean.
const states = new WeakMap<Store, RefState>();

export function refState(store: Store): RefState {
  let s = states.get(store);
  if (!s) {
    s = { target: signal(null), handled: 0, cache: new Map(), open: new Map(), drafts: new Map() };
    states.set(store, s);
  }
  return s;
}

/** Asks the Files tab to show path at line. */
export function openFile(store: Store, session: string, path: string, line: number): void {
  const t = refState(store).target;
  t.value = { session, path, line, n: (t.peek()?.n ?? 0) + 1 };
}

// A path-looking mention: no spaces, a slash or an extension, an optional
// position. Anything else is never sent to the server.
const MENTION = /^(\.{0,2}\/)?[\w@+~-][\w.@+~/-]*(\.[A-Za-z0-9_]+|\/[\w.-]+)(:\d+(:\d+)?|#L\d+)?$/;

export function looksLikePath(s: string): boolean {
  return s.length <= 300 && MENTION.test(s) && !s.includes("//") && !/^\d/.test(s) && !/^https?:/.test(s);
}

function resolveCached(store: Store, session: string, mention: string): Promise<Ref | null> {
  const st = refState(store);
  let m = st.cache.get(session);
  if (!m) st.cache.set(session, (m = new Map()));
  let p = m.get(mention);
  if (!p) {
    p = resolveRef(store.api, session, mention).then((r) => (r.ok && r.value.exists && r.value.kind === "file" ? r.value : null));
    m.set(mention, p);
  }
  return p;
}

/** Turns the inline code of el that names files of the session's workspace
 * into links (class file-ref, data-path, data-line). */
export function markFileRefs(store: Store, session: string, el: HTMLElement): void {
  for (const code of el.querySelectorAll<HTMLElement>("code")) {
    if (code.closest("pre, a")) continue;
    const text = (code.textContent ?? "").trim();
    if (!looksLikePath(text)) continue;
    resolveCached(store, session, text).then((ref) => {
      if (!ref || !code.isConnected || code.closest("a")) return;
      const a = document.createElement("a");
      a.className = "file-ref";
      a.href = "#L" + (ref.line ?? 1);
      a.dataset.path = ref.path;
      a.dataset.line = String(ref.line ?? 0);
      a.title = `Open ${ref.path}${ref.line ? ` at line ${ref.line}` : ""} in Files`;
      a.setAttribute("data-testid", "file-ref");
      code.replaceWith(a);
      a.append(code);
    });
  }
}

/** Handles a click on a file-ref link; true when it was one. */
export function clickFileRef(store: Store, session: string, e: MouseEvent): boolean {
  const a = (e.target as Element | null)?.closest?.("a.file-ref") as HTMLAnchorElement | null;
  if (!a || !a.dataset.path) return false;
  e.preventDefault();
  openFile(store, session, a.dataset.path, Number(a.dataset.line) || 0);
  return true;
}
