// The Git tab's log: newest first, a page at a time ("Show more" follows
// the cursor the server handed out, so the pages stay one history even if
// HEAD moves meanwhile). It reloads from the top when the tab does.

import { useEffect, useState } from "preact/hooks";
import type { ActionError } from "../state/contract";
import { useStore } from "../state/context";
import { ago } from "../shell/format";
import type { GitCommit, GitLogPage } from "./git";

const PAGE = 20;

export function GitLog({ base, gen, head }: { base: string; gen: number; head: string }) {
  const { api } = useStore();
  const [commits, setCommits] = useState<GitCommit[]>([]);
  const [next, setNext] = useState("");
  const [error, setError] = useState<ActionError | null>(null);
  const [loading, setLoading] = useState(false);

  const fetchPage = async (cursor: string, signal?: AbortSignal) => {
    setLoading(true);
    const q = new URLSearchParams({ limit: String(PAGE) });
    if (cursor) q.set("cursor", cursor);
    const r = await api.get<GitLogPage>(`${base}/log?${q}`, signal);
    if (signal?.aborted) return;
    setLoading(false);
    if (!r.ok) {
      setError(r.error);
      return;
    }
    setError(null);
    setCommits((cs) => (cursor ? [...cs, ...r.value.commits] : r.value.commits));
    setNext(r.value.next ?? "");
  };

  useEffect(() => {
    const ctl = new AbortController();
    void fetchPage("", ctl.signal);
    return () => ctl.abort();
  }, [base, gen, head]);

  const now = Date.now();
  return (
    <section class="git-log" data-testid="git-log" aria-label="History">
      <h3 class="git-log-title">History</h3>
      {error && <p class="git-error" role="alert">{error.message}</p>}
      {commits.length === 0 && !loading && !error && <p class="pane-empty">No commits yet.</p>}
      <ol class="git-commits">
        {commits.map((c) => (
          <li key={c.hash} class="git-commit-item" data-testid="git-log-item" data-hash={c.hash}>
            <span class="git-subject">{c.subject}</span>
            <span class="git-meta">
              <code title={c.hash}>{c.hash.slice(0, 7)}</code> · <span title={c.email}>{c.author}</span> · <time dateTime={c.date} title={new Date(c.date).toLocaleString()}>{ago(c.date, now)}</time>
            </span>
          </li>
        ))}
      </ol>
      {next && (
        <button type="button" class="btn btn-sm git-more" data-testid="git-log-more" disabled={loading} onClick={() => void fetchPage(next)}>
          Show older commits
        </button>
      )}
    </section>
  );
}
