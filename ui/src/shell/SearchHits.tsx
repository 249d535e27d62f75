// Message search results (issue 15): the sidebar's search box finds words
// in every session's messages, answers and commands; a hit opens its
// session scrolled to the message.

import { useEffect, useState } from "preact/hooks";
import { useStore } from "../state/context";
import { kindLabel, searchMessages, snippetParts, type SearchHit } from "../state/search";
import { sessionPath } from "../state/store";
import { SearchFilterBar } from "./SearchFilterBar";
import { rangeError, readSearchAddress, searchAddress, searchParams, type SearchFilters } from "./searchFilters";
import { useView, type ViewState } from "./view";
import type { Store } from "../state/contract";

/** Hits for q narrowed by filters, searched 200 ms after the last
 * keystroke or change; null while none came back yet. */
export function useSearch(q: string, filters: SearchFilters): SearchHit[] | null {
  const store = useStore();
  const [hits, setHits] = useState<SearchHit[] | null>(null);
  useEffect(() => {
    const text = q.trim();
    if (!text || rangeError(filters)) {
      setHits([]);
      return;
    }
    setHits(null);
    const ac = new AbortController();
    const t = setTimeout(() => {
      void searchMessages(store.api, text, ac.signal, 20, searchParams(filters, Date.now())).then((h) => {
        if (!ac.signal.aborted) setHits(h ?? []);
      });
    }, 200);
    return () => {
      clearTimeout(t);
      ac.abort();
    };
  }, [q, filters]);
  return hits;
}

/** Keeps the search text and filters in the address (replacing the entry:
 * typing is not history), and takes them from it once at start, so a
 * reload shows the same results. */
function useSearchAddress(store: Store, q: string, filters: SearchFilters): void {
  useEffect(() => {
    const start = readSearchAddress(location.search).q;
    if (start && !store.sessionFilter.peek()) store.sessionFilter.value = start;
  }, []);
  useEffect(() => {
    const want = searchAddress(location.search, q, filters);
    if (location.search !== want) history.replaceState(history.state, "", location.pathname + want + location.hash);
  }, [q, filters]);
}

/** Opens a hit's session, scrolled to its item. */
export function openHit(store: Store, view: ViewState, h: SearchHit): void {
  if (h.item_id) view.focusItem.value = { session: h.session_id, item: h.item_id };
  store.selectSession(h.session_id);
  view.sidebarOpen.value = false;
}

export function Snippet({ text }: { text: string }) {
  return (
    <span class="hit-snippet">
      {snippetParts(text).map((p, i) => (p.hit ? <mark key={i}>{p.text}</mark> : p.text))}
    </span>
  );
}

export function SearchHits({ q }: { q: string }) {
  const store = useStore();
  const view = useView();
  const filters = view.searchFilters.value;
  const hits = useSearch(q, filters);
  useSearchAddress(store, q, filters);
  if (!q.trim()) return null;
  const bad = rangeError(filters);
  return (
    <section class="sb-hits" aria-label="Messages" data-testid="search-hits">
      <h3 class="sb-hits-head">In messages</h3>
      <SearchFilterBar />
      {bad && <p class="sb-empty" role="alert">{bad}</p>}
      {!bad && hits === null && <p class="sb-empty">Searching…</p>}
      {!bad && hits !== null && hits.length === 0 && (
        <p class="sb-empty" data-testid="search-no-hits">No message {narrows(filters) ? "matching these filters " : ""}contains “{q.trim()}”.</p>
      )}
      <ul class="sb-list">
        {hits?.map((h) => (
          <li key={h.event_id} class="sb-item sb-hit" data-testid="search-hit" data-session-id={h.session_id} data-item-id={h.item_id} data-kind={h.kind}>
            <a
              class="sb-link sb-hit-link"
              href={sessionPath(h.session_id)}
              onClick={(e) => {
                if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
                e.preventDefault();
                openHit(store, view, h);
              }}
            >
              <span class="sb-hit-top">
                <span class="sb-title">{h.session_title || "New session"}</span>
                <span class="sb-hit-kind">{kindLabel[h.kind] ?? h.kind}</span>
              </span>
              <Snippet text={h.snippet} />
            </a>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** The filters leave some hits out (archived ones aside: the default). */
const narrows = (f: SearchFilters) => f.project !== "" || f.model !== "" || f.range !== "any";
