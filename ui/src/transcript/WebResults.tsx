// web_search's results as a card (issue 18, h18-web; seed 002): titles as
// links, snippets as text. The URLs come from a search engine the model
// queried, so only http(s) ones become links, and they open apart from the
// console (rel=noopener noreferrer: the page gets no handle on this one).

import { asRecord, str } from "./util";

export interface WebResult { title: string; url: string; snippet: string }

/** The href a result may have: an absolute http(s) URL, else none. */
export function safeHref(url: string): string | undefined {
  try {
    const u = new URL(url);
    return u.protocol === "http:" || u.protocol === "https:" ? u.href : undefined;
  } catch {
    return undefined;
  }
}

/** Reads the results out of a web_search result (or a test answer). */
export function webResults(result: unknown): WebResult[] {
  const r = asRecord(result);
  if (!r || !Array.isArray(r.results)) return [];
  const out: WebResult[] = [];
  for (const x of r.results) {
    const o = asRecord(x);
    const url = str(o?.url);
    if (!url) continue;
    out.push({ title: str(o?.title) || url, url, snippet: str(o?.snippet) ?? "" });
  }
  return out;
}

function host(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

export function WebResults({ results, testId = "web-results" }: { results: WebResult[]; testId?: string }) {
  if (results.length === 0) return <div class="tool-empty" data-testid={testId + "-empty"}>No results.</div>;
  return (
    <ol class="web-results" data-testid={testId}>
      {results.map((r, i) => {
        const href = safeHref(r.url);
        return (
          <li key={i} class="web-result" data-testid="web-result">
            {href ? (
              <a class="web-result-title" href={href} target="_blank" rel="noopener noreferrer" data-testid="web-result-link">{r.title}</a>
            ) : (
              <span class="web-result-title" data-testid="web-result-link">{r.title}</span>
            )}
            <span class="web-result-host">{host(r.url)}</span>
            {r.snippet && <p class="web-result-snippet">{r.snippet}</p>}
          </li>
        );
      })}
    </ol>
  );
}
