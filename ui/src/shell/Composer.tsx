// The composer: an auto-growing textarea (Enter sends, Shift+Enter breaks
// the line, Esc stops the run), Send and Stop, the queued tray above it, and
// slash commands with an autocomplete menu fed by GET /api/commands. The
// commands run here through the store; an unknown one is an error in the
// composer, never a message to the agent.

import { exportSession } from "./exportImport";
import { useComputed, useSignal, useSignalEffect } from "@preact/signals";
import { useEffect, useLayoutEffect, useRef } from "preact/hooks";
import type { ActionError, Store } from "../state/contract";
import { useStore } from "../state/context";
import { defaultModelLabel } from "../state/store";
import { stoppableRun } from "../state/reducer";
import type { Command, SessionState } from "../state/types";
import { isMac } from "./format";
import { requestTranscriptPin } from "../transcript/pin";
import { runStatusOf, statusDetail } from "./Header";
import { useRetryTick } from "./useRetryTick";
import { IClose, ISend, IStop } from "./icons";
import { newSession } from "./newSession";
import { deleteWithUndo } from "./organise";
import { useView, type ViewState } from "./view";
import { AttachButton, AttachmentChips, attachError, useAttachments } from "./Attach";

/** The composer shows a failure of what it sent next to the text it gave
 * back; the store also raised the same failure as a toast, which would say
 * it a second time, so that toast is taken down (before it is painted: both
 * happen in the same task). */
function ownError(store: Store, err: ActionError): string {
  if (store.toast.peek() === err) store.toast.value = null;
  return err.message;
}

interface MenuEntry { key: string; kind: "command" | "model"; label: string; hint: string; cmd?: Command; value: string }

/** What the slash menu offers for the text typed so far (null: no menu). */
function menuFor(text: string, commands: Command[], store: Store): MenuEntry[] | null {
  if (!text.startsWith("/") || text.startsWith("//") || text.includes("\n")) return null;
  const m = /^\/(\S*)(\s+([\s\S]*))?$/.exec(text);
  if (!m) return null;
  const [, name, withArgs, arg = ""] = m;
  if (!withArgs) {
    const q = name.toLowerCase();
    return commands
      .filter((c) => c.name.startsWith(q))
      .map((c) => ({ key: c.name, kind: "command", label: `/${c.name}`, hint: c.description, cmd: c, value: c.name }));
  }
  if (name === "model") {
    const q = arg.trim().toLowerCase();
    const all = [{ ref: "", label: defaultModelLabel(store.meta.peek()), provider: "" }, ...store.models.peek()];
    return all
      .filter((mo) => !q || mo.ref.toLowerCase().includes(q) || mo.label.toLowerCase().includes(q))
      .map((mo) => ({ key: `model:${mo.ref}`, kind: "model", label: mo.ref || "default", hint: mo.ref ? mo.label : mo.label, value: mo.ref || "default" }));
  }
  return null;
}

/** What a viewer has where the composer would be. */
export const READ_ONLY_HINT = "You can read; starting and approving needs the operator role.";

export function Composer({ session }: { session: SessionState | null }) {
  const store = useStore();
  if (!store.account.permissions.value.operate) {
    return (
      <div class="composer-wrap">
        <p class="read-only-hint" data-testid="read-only-hint" role="note">{READ_ONLY_HINT}</p>
      </div>
    );
  }
  return <Editor session={session} />;
}

function Editor({ session }: { session: SessionState | null }) {
  const store = useStore();
  const view = useView();
  // The draft belongs to the session in the address, known before its
  // state loads (on /s/<id> the composer is usable at once): keying by the
  // loaded state's id would file early typing under "" and drop it.
  const sid = store.activeId.value ?? session?.id ?? "";
  const text = useSignal(view.drafts.get(sid) ?? "");
  const prevSid = useRef(sid);
  const sidLoaded = useRef(!!session);
  if (session && session.id === sid) sidLoaded.current = true;
  const error = useSignal<string | null>(null);
  const sel = useSignal(0);
  const menuClosed = useSignal(false); // Esc hides the menu until the text changes
  const composing = useRef(false);
  const area = useRef<HTMLTextAreaElement>(null);
  const status = runStatusOf(session);
  useRetryTick(session?.busyRun.value);
  const detail = statusDetail(session, status);
  const busy = !!session?.busyRun.value;
  // Stop also takes back a message still waiting for a runner.
  const stoppable = !!session && !!stoppableRun(session);

  const menu = useComputed(() => (menuClosed.value ? null : menuFor(text.value, store.commands.value, store)));

  // Files need a session to be saved in: the first one attached starts it,
  // once, however many are attached together.
  const starting = useRef<Promise<string | null> | null>(null);
  const ensureSession = (): Promise<string | null> => {
    if (store.activeId.peek()) return Promise.resolve(null);
    starting.current ??= store.createSession().then((err) => {
      starting.current = null;
      return err ? ownError(store, err) : null;
    });
    return starting.current;
  };
  const att = useAttachments(store, ensureSession);
  const dragging = useSignal(false);

  // Drafts survive switching sessions. Text typed for a session that never
  // loaded (e.g. its address named a deleted one) moves to the next one
  // rather than vanishing.
  useEffect(() => {
    const prev = prevSid.current;
    if (prev === sid) return;
    const orphan = prev !== "" && !sidLoaded.current ? view.drafts.get(prev) ?? "" : "";
    prevSid.current = sid;
    sidLoaded.current = !!session && session.id === sid;
    if (orphan && !view.drafts.get(sid)) {
      view.drafts.set(sid, orphan);
      view.drafts.delete(prev);
    }
    text.value = view.drafts.get(sid) ?? "";
    error.value = null;
    // Uploads belong to the session they were saved in; a session the
    // first attachment started is the same one, not another.
    if (prev !== "") att.clear();
  }, [sid]);

  // Grow with the text up to ~40% of the viewport, then scroll inside.
  useLayoutEffect(() => {
    const el = area.current;
    if (!el) return;
    el.style.height = "auto";
    el.style.height = `${Math.min(el.scrollHeight, Math.round(window.innerHeight * 0.4))}px`;
  }, [text.value]);

  const setText = (v: string) => {
    text.value = v;
    view.drafts.set(sid, v);
    menuClosed.value = false;
    sel.value = 0;
    if (error.value) error.value = null;
  };  // A command picked in the palette (Ctrl/Cmd-K).
  useSignalEffect(() => {
    const v = view.composerInsert.value;
    if (v === null) return;
    view.composerInsert.value = null;
    setText(v);
    requestAnimationFrame(() => area.current?.focus());
  });


  // steer: deliver into the running run at its next step (text only).
  const submit = async (steer = false) => {
    const raw = text.value;
    const files = att.ready;
    if (att.uploading) return;
    if (!raw.trim() && !files.length) return;
    if (!files.length && raw.startsWith("/") && !raw.startsWith("//")) {
      const err = await runCommand(raw.trim(), store, view);
      if (err) {
        error.value = err;
        return;
      }
      setText("");
      return;
    }
    // "//text" sends "/text": a way to start a message with a slash.
    const content = raw.startsWith("//") ? raw.slice(1) : raw;
    setText("");
    // No session yet: the first message starts one.
    if (!store.activeId.peek()) {
      const err = await store.createSession();
      if (err) {
        setText(raw);
        error.value = ownError(store, err);
        return;
      }
    }
    // Sending while scrolled up: jump to the bottom to follow the answer.
    const target = store.activeId.peek();
    if (target) requestTranscriptPin(target);
    const err = await store.send(content, files, steer && !files.length ? "steer" : undefined);
    if (!err && files.length) att.clear();
    if (err) {
      // Give the text back so nothing typed is lost.
      if (!text.value) setText(raw);
      error.value = ownError(store, err);
    }
  };

  const pick = (e: MenuEntry, run: boolean) => {
    if (e.kind === "command") {
      const takesArgs = !!e.cmd?.args;
      setText(`/${e.value}${takesArgs || !run ? " " : ""}`);
      if (run && !takesArgs) void submit();
    } else {
      setText(`/model ${e.value}`);
      if (run) void submit();
    }
    area.current?.focus();
  };

  const onKeyDown = (e: KeyboardEvent) => {
    // An IME is composing: Enter confirms the composition, not the message.
    if (e.isComposing || composing.current || e.keyCode === 229) return;
    const items = menu.value;
    if (items && items.length) {
      if (e.key === "ArrowDown" || e.key === "ArrowUp") {
        e.preventDefault();
        const d = e.key === "ArrowDown" ? 1 : -1;
        sel.value = (sel.value + d + items.length) % items.length;
        return;
      }
      if (e.key === "Tab" || (e.key === "Enter" && !e.shiftKey)) {
        const it = items[Math.min(sel.value, items.length - 1)];
        // Enter on an exact, complete command line runs it as typed.
        const exact = e.key === "Enter" && it.kind === "command" && !it.cmd?.args && text.value.trim() === `/${it.value}`;
        e.preventDefault();
        if (exact) void submit();
        else pick(it, e.key === "Enter");
        return;
      }
      if (e.key === "Escape") {
        e.preventDefault();
        menuClosed.value = true;
        return;
      }
    }
    if (e.key === "Enter" && !e.shiftKey) {
      e.preventDefault();
      // Ctrl/Cmd+Enter while the agent works steers it instead of queueing.
      void submit(busy && (e.ctrlKey || e.metaKey));
    } else if (e.key === "Escape" && stoppable) {
      e.preventDefault();
      void store.stop();
    }
  };

  const items = menu.value;
  const queued = session?.queued.value ?? [];
  const blank = !text.value.trim() && !att.ready.length;
  const shownError = error.value ?? attachError(att) ?? noImagesNote(store, att.list.value.some((p) => (p.att?.kind ?? (p.preview ? "image" : "file")) === "image"));
  const onDrop = (e: DragEvent) => {
    const files = Array.from(e.dataTransfer?.files ?? []);
    dragging.value = false;
    if (!files.length) return;
    e.preventDefault();
    att.add(files);
  };

  return (
    <div
      class={"composer-wrap" + (dragging.value ? " dragging" : "")}
      data-testid="composer-wrap"
      onDragOver={(e) => {
        if (!e.dataTransfer?.types.includes("Files")) return;
        e.preventDefault();
        dragging.value = true;
      }}
      onDragLeave={(e) => {
        if (!(e.currentTarget as HTMLElement).contains(e.relatedTarget as Node | null)) dragging.value = false;
      }}
      onDrop={onDrop}
    >
      {view.helpOpen.value && <HelpPanel />}
      {queued.length > 0 && (
        <div class="queued" aria-label="Queued messages">
          <div class="queued-head">Queued · sent when the current run finishes</div>
          <ul>
            {queued.map((q) => (
              <li key={q.run_id} class="queued-item" data-testid="queued-item" data-run-id={q.run_id}>
                <span class="queued-text" title={q.text}>{q.text}</span>
                <button type="button" class="icon-btn sm" data-testid="queued-remove" aria-label="Remove queued message" title="Remove" onClick={() => void store.cancelRun(q.run_id)}>
                  <IClose size={15} />
                </button>
              </li>
            ))}
          </ul>
        </div>
      )}
      <AttachmentChips a={att} />
      <div class="composer-box">
        {items && items.length > 0 && (
          <ul class="slash-menu" data-testid="slash-menu" role="listbox" id="slash-menu" aria-label="Commands">
            {items.map((it, i) => (
              <li
                key={it.key}
                id={`slash-opt-${i}`}
                role="option"
                aria-selected={i === sel.value}
                class={"slash-item" + (i === sel.value ? " sel" : "")}
                data-testid={it.kind === "command" ? "slash-item" : "slash-arg"}
                data-command={it.kind === "command" ? it.value : "model"}
                data-value={it.kind === "model" ? it.value : undefined}
                onMouseDown={(e) => e.preventDefault() /* keep focus in the textarea */}
                onMouseEnter={() => (sel.value = i)}
                onClick={() => pick(it, true)}
              >
                <span class="slash-name">{it.label}{it.cmd?.args && <span class="slash-args"> {it.cmd.args}</span>}</span>
                <span class="slash-hint">{it.hint}</span>
              </li>
            ))}
          </ul>
        )}
        <textarea
          ref={area}
          data-testid="composer"
          class="composer"
          rows={1}
          placeholder={session ? (busy ? "Queue a message…" : "Message the agent…") : "Message the agent to start a session…"}
          aria-label="Message"
          aria-autocomplete="list"
          aria-controls={items && items.length ? "slash-menu" : undefined}
          aria-activedescendant={items && items.length ? `slash-opt-${sel.value}` : undefined}
          aria-invalid={shownError ? true : undefined}
          aria-describedby={shownError ? "composer-error" : "composer-hint"}
          value={text.value}
          onInput={(e) => setText(e.currentTarget.value)}
          onKeyDown={onKeyDown}
          onPaste={(e) => {
            const files = Array.from(e.clipboardData?.files ?? []);
            if (!files.length) return;
            e.preventDefault();
            att.add(files);
          }}
          onCompositionStart={() => (composing.current = true)}
          onCompositionEnd={() => (composing.current = false)}
        />
        <div class="composer-actions">
          <AttachButton onFiles={(f) => att.add(f)} />
          {stoppable && (
            <button type="button" class="btn btn-stop" data-testid="stop" onClick={() => void store.stop()} disabled={status === "cancelling"} title="Stop the run (Esc)">
              <IStop size={14} /> {status === "cancelling" ? "Stopping" : "Stop"}
            </button>
          )}
          {busy && (
            <button type="button" class="btn btn-steer" data-testid="steer" disabled={!text.value.trim() || att.list.value.length > 0} onClick={() => void submit(true)} title="Steer: the running agent reads this after its current step (Ctrl+Enter)">
              Steer
            </button>
          )}
          <button type="button" class="btn btn-primary btn-send" data-testid="send" disabled={blank || att.uploading} onClick={() => void submit()} aria-label={busy ? "Queue message" : "Send message"} title={busy ? "Queue (Enter)" : "Send (Enter)"}>
            <ISend size={16} />
          </button>
        </div>
      </div>
      <div class="composer-foot">
        {shownError ? (
          <span class="composer-error" data-testid="composer-error" id="composer-error" role="alert">{shownError}</span>
        ) : detail ? (
          <span class="composer-status" data-testid="composer-status" id="composer-hint" role="status">
            {detail} · <kbd>Esc</kbd> stop
          </span>
        ) : (
          <span class="composer-hint" id="composer-hint">
            <kbd>Enter</kbd> send · <kbd>Shift</kbd>+<kbd>Enter</kbd> new line{busy && <> · <kbd>Ctrl</kbd>+<kbd>Enter</kbd> steer · <kbd>Esc</kbd> stop</>} · <kbd>/</kbd> commands
          </span>
        )}
      </div>
    </div>
  );
}

/** Says so before sending when an image is attached and the session's
 * model is listed as one without image input (the server refuses such a
 * message; a model the list does not name is left to the server). */
function noImagesNote(store: Store, hasImage: boolean): string | null {
  if (!hasImage) return null;
  const id = store.activeId.value;
  const ref = store.sessions.value.find((x) => x.id === id)?.model || store.meta.value?.default_model || "";
  const m = store.models.value.find((x) => x.ref === ref);
  return m && !m.images ? `The model ${ref} does not take images: choose one that does, or remove the image.` : null;
}

/** Runs a slash command; returns an error text for the composer. */
async function runCommand(line: string, store: Store, view: ViewState): Promise<string | null> {
  const m = /^\/(\S+)\s*([\s\S]*)$/.exec(line);
  const name = m?.[1] ?? "";
  const arg = (m?.[2] ?? "").trim();
  if (!store.commands.peek().some((c) => c.name === name)) return `Unknown command /${name} — type /help`;
  const needSession = () => (store.activeId.peek() ? null : "Open or create a session first (/new).");
  switch (name) {
    case "new": {
      const err = await newSession(store);
      return err ? ownError(store, err) : null;
    }
    case "stop": {
      const err = await store.stop();
      return err ? ownError(store, err) : null;
    }
    // Budgets (h16-budgets): the run pauses at its next step boundary.
    case "pause": {
      const run = store.active.peek()?.busyRun.peek();
      if (!run || !["queued", "running", "awaiting_approval", "awaiting_clarify"].includes(run.status)) return "Nothing is running to pause.";
      const err = await store.pauseRun(run.id);
      return err ? ownError(store, err) : null;
    }
    case "goal": {
      const no = needSession();
      if (no) return no;
      const [sub, ...rest] = arg.split(/\s+/);
      const text = rest.join(" ").trim();
      const goal = store.active.peek()?.goal.peek();
      let err = null;
      switch (sub) {
        case "set":
          if (!text) return "Usage: /goal set <text>";
          err = await store.putGoal({ text });
          break;
        case "show":
        case "":
          return goal && goal.status !== "cleared" ? null : "This session has no goal. Set one: /goal set <text>";
        case "pause":
          err = await store.putGoal({ status: "paused" });
          break;
        case "resume":
          err = await store.putGoal({ status: "active" });
          break;
        case "clear":
          err = await store.clearGoal();
          break;
        default:
          return "Usage: /goal set <text> | show | pause | resume | clear";
      }
      return err ? ownError(store, err) : null;
    }
    case "steer": {
      const no = needSession();
      if (no) return no;
      if (!arg) return "Usage: /steer <text>";
      const err = await store.send(arg, undefined, "steer");
      return err ? ownError(store, err) : null;
    }
    case "help":
      view.helpOpen.value = true;
      return null;
    case "compact": {
      const no = needSession();
      if (no) return no;
      const err = await store.compact();
      return err ? ownError(store, err) : null;
    }
    case "branch": {
      const no = needSession();
      if (no) return no;
      const items = store.active.peek()?.items.peek() ?? [];
      const last = [...items].reverse().map((m) => m.sig.peek()).find((it) => (it.kind === "user" || it.kind === "assistant") && !it.open && !it.queued);
      if (!last) return "Nothing to branch from yet: send a message first.";
      const err = await store.branch(last.id);
      return err ? ownError(store, err) : null;
    }
    case "export": {
      const no = needSession();
      if (no) return no;
      const format = arg || "md";
      if (format !== "md" && format !== "json") return "Usage: /export [md|json]";
      const err = await exportSession(store, store.activeId.peek()!, format);
      return err ? ownError(store, err) : null;
    }
    case "title": {
      const no = needSession();
      if (no) return no;
      if (!arg) return "Usage: /title <title>";
      const err = await store.renameSession(store.activeId.peek()!, arg);
      return err ? ownError(store, err) : null;
    }
    case "delete": {
      // Like the sidebar's delete: gone at once, undone from the toast.
      const no = needSession();
      if (no) return no;
      const id = store.activeId.peek()!;
      const s = store.sessions.peek().find((x) => x.id === id);
      deleteWithUndo(store, view.organise, [id], "Deleted “" + (s?.title || "New session") + "”");
      return null;
    }
    case "pin":
    case "archive": {
      // Organising sessions: each toggles.
      const no = needSession();
      if (no) return no;
      const id = store.activeId.peek()!;
      const s = store.sessions.peek().find((x) => x.id === id);
      const err = await store.organise(id, name === "pin" ? { pinned: !s?.pinned } : { archived: !s?.archived_at });
      return err ? ownError(store, err) : null;
    }
    case "model": {
      const no = needSession();
      if (no) return no;
      if (!arg) return "Usage: /model <model> (or /model default)";
      const ref = arg === "default" ? "" : arg;
      if (ref && !store.models.peek().some((mo) => mo.ref === ref)) return `Unknown model “${ref}”. Type /model and a space to see the list.`;
      const err = await store.setModel(ref);
      return err ? ownError(store, err) : null;
    }
    // Versions of a conversation (issue 15).
    case "retry": {
      const no = needSession();
      if (no) return no;
      const run = lastRun(store, "user");
      if (!run) return "Nothing to retry yet.";
      const err = await store.retry(run, arg || undefined);
      return err ? ownError(store, err) : null;
    }
    case "continue": {
      const no = needSession();
      if (no) return no;
      const run = lastRun(store);
      if (!run) return "Nothing to continue yet.";
      const err = await store.continueRun(run);
      return err ? ownError(store, err) : null;
    }
    case "undo": {
      const no = needSession();
      if (no) return no;
      const restore = arg === "restore";
      const n = restore ? 0 : arg ? Number(arg) : 1;
      if (!restore && (!Number.isInteger(n) || n < 1)) return "Usage: /undo [n] (or /undo restore)";
      const err = await store.undo(n, restore);
      return err ? ownError(store, err) : null;
    }
    default:
      // Listed by the server but not known to this UI (a newer server).
      return `/${name} is not supported by this version of the UI.`;
  }
}

function HelpPanel() {
  const store = useStore();
  const view = useView();
  const close = () => (view.helpOpen.value = false);
  return (
    <section class="help-panel" data-testid="help-panel" aria-label="Help">
      <div class="help-head">
        <h2>Commands and keys</h2>
        <button type="button" class="icon-btn sm" aria-label="Close help" onClick={close}><IClose size={15} /></button>
      </div>
      <div class="help-cols">
        <dl class="help-list">
          {store.commands.value.map((c) => (
            <div key={c.name}>
              <dt><code>/{c.name}{c.args ? ` ${c.args}` : ""}</code></dt>
              <dd>{c.description}</dd>
            </div>
          ))}
        </dl>
        <dl class="help-list">
          <div><dt><kbd>Enter</kbd></dt><dd>Send (queued while the agent works)</dd></div>
          <div><dt><kbd>Shift</kbd>+<kbd>Enter</kbd></dt><dd>New line</dd></div>
          <div><dt><kbd>Esc</kbd></dt><dd>Stop the running agent</dd></div>
          <div><dt><kbd>{isMac() ? "⌘" : "Ctrl"}</kbd>+<kbd>K</kbd></dt><dd>Search sessions</dd></div>
          <div><dt><kbd>/</kbd></dt><dd>Focus the message box</dd></div>
          <div><dt><code>//text</code></dt><dd>Send a message that starts with “/”</dd></div>
        </dl>
      </div>
    </section>
  );
}

/** The run of the conversation's last item (of kind, when given). */
function lastRun(store: Store, kind?: string): string | null {
  const items = store.active.peek()?.items.peek() ?? [];
  for (let i = items.length - 1; i >= 0; i--) {
    const it = items[i].sig.peek();
    if (!kind || it.kind === kind) return it.run_id;
  }
  return null;
}
