// The command palette (Ctrl/Cmd-K, issue 15): one box that finds slash
// commands, sessions by title and words in every message. Arrow keys move,
// Enter picks: a command goes to the composer, a session opens, a message
// opens its session scrolled to it.

import { Fragment, type ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { useStore } from "../state/context";
import { kindLabel } from "../state/search";
import { trapFocus } from "./Dialog";
import { openHit, Snippet, useSearch } from "./SearchHits";
import { filterSummary } from "./SearchFilterBar";
import { noFilters } from "./searchFilters";
import { useView } from "./view";

interface Entry {
  key: string;
  group: "Commands" | "Sessions" | "Messages";
  testid: string;
  label: ComponentChildren;
  detail?: ComponentChildren;
  pick: () => void;
}

const MAX_PER_GROUP = 6;

export function Palette() {
  const store = useStore();
  const view = useView();
  const [q, setQ] = useState("");
  const [sel, setSel] = useState(0);
  const box = useRef<HTMLDivElement>(null);
  const input = useRef<HTMLInputElement>(null);
  const close = () => (view.paletteOpen.value = false);
  useEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    input.current?.focus();
    const release = trapFocus(box.current!, close);
    return () => {
      release();
      if (before && document.contains(before) && view.composerInsert.peek() === null) before.focus();
    };
  }, []);
  // Message hits take the sidebar's search filters (issue 15), said above
  // the list with one click to clear them.
  const filters = view.searchFilters.value;
  const hits = useSearch(q, filters);
  const filtered = filterSummary(
    filters,
    (id) => view.organise.projects.value.find((p) => p.id === id)?.name ?? "Unknown project",
    (ref) => store.models.value.find((m) => m.ref === ref)?.label ?? ref,
  );

  const text = q.trim().toLowerCase();
  const word = text.replace(/^\//, "");
  const entries: Entry[] = [];
  if (store.account.permissions.value.operate && store.activeId.value) {
    for (const c of store.commands.value.filter((c) => c.name.toLowerCase().includes(word)).slice(0, text.startsWith("/") ? 20 : MAX_PER_GROUP)) {
      entries.push({
        key: "c:" + c.name, group: "Commands", testid: "palette-command",
        label: <>/{c.name}{c.args && <span class="pal-args"> {c.args}</span>}</>,
        detail: c.description,
        pick: () => (view.composerInsert.value = `/${c.name}${c.args ? " " : ""}`),
      });
    }
  }
  if (!text.startsWith("/")) {
    for (const s of store.sessions.value.filter((s) => (s.title || "New session").toLowerCase().includes(text)).slice(0, MAX_PER_GROUP)) {
      entries.push({
        key: "s:" + s.id, group: "Sessions", testid: "palette-session",
        label: s.title || "New session",
        pick: () => store.selectSession(s.id),
      });
    }
    for (const h of (text ? hits ?? [] : []).slice(0, MAX_PER_GROUP * 2)) {
      entries.push({
        key: "m:" + h.event_id, group: "Messages", testid: "palette-hit",
        label: <><span class="pal-kind">{kindLabel[h.kind] ?? h.kind}</span> {h.session_title || "New session"}</>,
        detail: <Snippet text={h.snippet} />,
        pick: () => openHit(store, view, h),
      });
    }
  }
  const cur = Math.min(sel, Math.max(0, entries.length - 1));
  const pick = (e: Entry) => {
    close();
    e.pick();
  };
  useEffect(() => {
    box.current?.querySelector(".pal-item.sel")?.scrollIntoView({ block: "nearest" });
  }, [cur]);

  let lastGroup = "";
  return (
    <div class="modal-backdrop pal-backdrop" onMouseDown={(e) => e.target === e.currentTarget && close()}>
      <div class="modal pal" ref={box} role="dialog" aria-modal="true" aria-label="Command palette" data-testid="palette">
        <input
          ref={input}
          class="pal-input"
          data-testid="palette-input"
          type="search"
          placeholder="Search sessions and messages, or / for commands"
          aria-label="Search sessions, messages and commands"
          aria-controls="pal-list"
          aria-activedescendant={entries[cur] ? "pal-" + cur : undefined}
          value={q}
          onInput={(e) => {
            setQ(e.currentTarget.value);
            setSel(0);
          }}
          onKeyDown={(e) => {
            if (e.key === "ArrowDown" || e.key === "ArrowUp") {
              e.preventDefault();
              const n = entries.length;
              if (n) setSel((cur + (e.key === "ArrowDown" ? 1 : n - 1)) % n);
            } else if (e.key === "Enter" && entries[cur]) {
              e.preventDefault();
              pick(entries[cur]);
            }
          }}
        />
        {filtered && !q.trim().startsWith("/") && (
          <div class="pal-filters" data-testid="palette-filters">
            <span class="pal-filters-text">Messages: {filtered}</span>
            <button type="button" class="sf-clear" onClick={() => (view.searchFilters.value = noFilters)}>Clear filters</button>
          </div>
        )}
        <ul class="pal-list" id="pal-list" role="listbox" aria-label="Results">
          {entries.map((e, i) => {
            const head = e.group !== lastGroup;
            lastGroup = e.group;
            return (
              <Fragment key={e.key}>
                {head && <li class="pal-group" role="presentation">{e.group}</li>}
                <li
                  id={"pal-" + i}
                  role="option"
                  aria-selected={i === cur}
                  class={"pal-item" + (i === cur ? " sel" : "")}
                  data-testid={e.testid}
                  onMouseMove={() => i !== cur && setSel(i)}
                  onClick={() => pick(e)}
                >
                  <span class="pal-label">{e.label}</span>
                  {e.detail && <span class="pal-detail">{e.detail}</span>}
                </li>
              </Fragment>
            );
          })}
          {text && hits === null && <li class="pal-note" role="presentation">Searching messages…</li>}
          {entries.length === 0 && (hits !== null || !text) && <li class="pal-note" role="presentation" data-testid="palette-empty">Nothing found.</li>}
        </ul>
      </div>
    </div>
  );
}
