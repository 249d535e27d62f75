// The lazy file tree: a directory's entries are fetched when it is first
// opened, a page at a time ("more" fetches the next).

import { useEffect, useState } from "preact/hooks";
import type { Api } from "../../state/api";
import { listDir, type Entry } from "./api";

interface Dir { entries: Entry[]; next?: string; loading: boolean; error?: string }

export function Tree({ api, sid, filter, selected, onOpen }: {
  api: Api; sid: string; filter: string; selected: string | null; onOpen: (path: string) => void;
}) {
  const [dirs, setDirs] = useState<Map<string, Dir>>(new Map());
  const [expanded, setExpanded] = useState<Set<string>>(new Set([""]));

  const load = async (path: string, cursor?: string) => {
    setDirs((m) => new Map(m).set(path, { ...(m.get(path) ?? { entries: [] }), loading: true }));
    const r = await listDir(api, sid, path, cursor);
    setDirs((m) => {
      const prev = m.get(path)?.entries ?? [];
      const d: Dir = r.ok
        ? { entries: cursor ? [...prev, ...r.value.entries] : r.value.entries, next: r.value.next || undefined, loading: false }
        : { entries: prev, loading: false, error: r.error.message };
      return new Map(m).set(path, d);
    });
  };

  useEffect(() => {
    setDirs(new Map());
    setExpanded(new Set([""]));
    void load("");
  }, [sid]);

  const toggle = (path: string) => {
    const open = !expanded.has(path);
    setExpanded((s) => {
      const n = new Set(s);
      if (open) n.add(path);
      else n.delete(path);
      return n;
    });
    if (open && !dirs.has(path)) void load(path);
  };

  const f = filter.trim().toLowerCase();
  const render = (path: string, depth: number) => {
    const d = dirs.get(path);
    if (!d) return null;
    const shown = d.entries.filter((e) => !f || e.kind === "dir" || e.name.toLowerCase().includes(f));
    return (
      <>
        {shown.map((e) => (
          <li key={e.path} role="treeitem" aria-expanded={e.kind === "dir" ? expanded.has(e.path) : undefined}>
            <button
              type="button"
              class={"ft-row" + (e.ignored ? " ignored" : "") + (selected === e.path ? " on" : "")}
              style={{ paddingLeft: `${8 + depth * 14}px` }}
              data-testid="file-row"
              data-path={e.path}
              data-kind={e.kind}
              title={e.path}
              onClick={() => (e.kind === "dir" ? toggle(e.path) : e.kind === "file" || e.kind === "symlink" ? onOpen(e.path) : undefined)}
            >
              <span class="ft-icon" aria-hidden="true">{e.kind === "dir" ? (expanded.has(e.path) ? "▾" : "▸") : e.kind === "symlink" ? "↪" : "·"}</span>
              <span class="ft-name">{e.name}</span>
            </button>
            {e.kind === "dir" && expanded.has(e.path) && <ul role="group">{render(e.path, depth + 1)}</ul>}
          </li>
        ))}
        {d.loading && <li class="ft-note">Loading…</li>}
        {d.error && <li class="ft-note err">{d.error}</li>}
        {!d.loading && d.next && (
          <li>
            <button type="button" class="ft-more" style={{ paddingLeft: `${8 + depth * 14}px` }} onClick={() => void load(path, d.next)}>
              More…
            </button>
          </li>
        )}
        {!d.loading && !d.error && d.entries.length === 0 && <li class="ft-note" style={{ paddingLeft: `${8 + depth * 14}px` }}>empty</li>}
      </>
    );
  };

  return (
    <ul class="ft-tree" role="tree" aria-label="Workspace files" data-testid="file-tree">
      {render("", 0)}
    </ul>
  );
}
