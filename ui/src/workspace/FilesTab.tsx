// The Files tab of the workspace pane (issue 14): the session's workspace
// as a lazy tree with a filter, name and content search, and a viewer with
// an editor for people allowed to operate (viewers read only). File
// references in the transcript open the viewer here, at their line.

import { useEffect, useRef, useState } from "preact/hooks";
import { useStore } from "../state/context";
import type { TabProps } from "./tab";
import { searchFiles, type SearchResult } from "./files/api";
import { refState } from "./files/refs";
import { Tree } from "./files/Tree";
import { Viewer } from "./files/Viewer";
import "./files/files.css";

export function FilesTab({ session, canOperate }: TabProps) {
  const store = useStore();
  const sid = session.id;
  const rs = refState(store);
  const target = rs.target.value;
  const [open, setOpenState] = useState<{ path: string; line: number } | null>(rs.open.get(sid) ?? null);
  const setOpen = (o: { path: string; line: number } | null) => {
    if (o) rs.open.set(sid, o);
    else rs.open.delete(sid);
    setOpenState(o);
  };
  const [filter, setFilter] = useState("");
  const [query, setQuery] = useState("");
  const [kind, setKind] = useState<"name" | "content">("name");
  const [results, setResults] = useState<SearchResult | null>(null);
  const [searchError, setSearchError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  // Bumped by Refresh: the tree is listed afresh (the agent changes files).
  const [treeKey, setTreeKey] = useState(0);
  const abort = useRef<AbortController | null>(null);

  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    setOpenState(rs.open.get(sid) ?? null);
    setResults(null);
    setQuery("");
  }, [sid]);
  // A file reference clicked in the transcript, once.
  useEffect(() => {
    if (target && target.n > rs.handled && target.session === sid) {
      rs.handled = target.n;
      setOpen({ path: target.path, line: target.line });
    }
  }, [target?.n]);

  const search = async (e: Event) => {
    e.preventDefault();
    abort.current?.abort();
    if (!query.trim()) {
      setResults(null);
      return;
    }
    const ac = (abort.current = new AbortController());
    const r = await searchFiles(store.api, sid, query, kind, ac.signal);
    if (ac.signal.aborted) return;
    if (r.ok) {
      setResults(r.value);
      setSearchError(null);
    } else {
      setResults(null);
      setSearchError(r.error.message);
    }
  };

  if (open) {
    return (
      <div class="files" data-testid="files-tab">
        <Viewer
          api={store.api}
          sid={sid}
          path={open.path}
          line={open.line}
          canOperate={canOperate}
          drafts={rs.drafts}
          onClose={() => setOpen(null)}
          onSaved={(m) => setNotice(m)}
        />
        {notice && <p class="files-notice" role="status" onAnimationEnd={() => setNotice(null)}>{notice}</p>}
      </div>
    );
  }

  return (
    <div class="files" data-testid="files-tab">
      {!canOperate && (
        <div class="files-ws">
          <span class="files-ro" data-testid="files-readonly">read only: you may browse, not edit</span>
        </div>
      )}
      <form class="files-search" onSubmit={search} role="search">
        <input
          type="search"
          class="files-input"
          placeholder="Search files…"
          aria-label="Search the workspace"
          data-testid="files-search"
          value={query}
          onInput={(e) => {
            const v = (e.target as HTMLInputElement).value;
            setQuery(v);
            if (!v) setResults(null);
          }}
        />
        <select aria-label="Search in" value={kind} data-testid="files-search-kind" onChange={(e) => setKind((e.target as HTMLSelectElement).value as "name" | "content")}>
          <option value="name">names</option>
          <option value="content">contents</option>
        </select>
        <button type="submit" class="btn btn-sm">Search</button>
      </form>
      {searchError && <p class="ft-note err" role="alert">{searchError}</p>}
      {results ? (
        <div class="files-results" data-testid="search-results">
          <div class="files-results-head">
            {results.matches.length === 0 ? "No matches" : `${results.matches.length}${results.truncated ? "+" : ""} matches`}
            <button type="button" class="btn btn-sm" onClick={() => setResults(null)}>Back to files</button>
          </div>
          <ul>
            {results.matches.map((m, i) => (
              <li key={i}>
                <button type="button" class="ft-row" data-testid="search-hit" disabled={m.kind === "dir"} onClick={() => setOpen({ path: m.path, line: m.line ?? 0 })}>
                  <span class="ft-name">{m.path}{m.line ? `:${m.line}` : ""}</span>
                  {m.preview && <span class="sr-preview">{m.preview}</span>}
                </button>
              </li>
            ))}
          </ul>
        </div>
      ) : (
        <>
          <div class="files-filter-row">
          <input
            type="text"
            class="files-input files-filter"
            placeholder="Filter the tree by name"
            aria-label="Filter the tree"
            data-testid="files-filter"
            value={filter}
            onInput={(e) => setFilter((e.target as HTMLInputElement).value)}
          />
          <button type="button" class="btn btn-sm" data-testid="files-refresh" title="List the files again" onClick={() => setTreeKey((k) => k + 1)}>
            Refresh
          </button>
          </div>
          <Tree key={treeKey} api={store.api} sid={sid} filter={filter} selected={null} onOpen={(p) => setOpen({ path: p, line: 0 })} />
        </>
      )}
    </div>
  );
}
