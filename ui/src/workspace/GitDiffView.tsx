// The diff of the file picked in the Git tab: staged (index against HEAD)
// or not (work tree against index), drawn with the transcript's Diff.

import { useEffect, useState } from "preact/hooks";
import type { ActionError } from "../state/contract";
import { useStore } from "../state/context";
import { Diff } from "../transcript/Diff";
import type { GitDiff, GitPick } from "./git";

export function GitDiffView({ base, pick, gen, onClose }: { base: string; pick: GitPick; gen: number; onClose: () => void }) {
  const { api } = useStore();
  const [diff, setDiff] = useState<GitDiff | null>(null);
  const [error, setError] = useState<ActionError | null>(null);
  useEffect(() => {
    setDiff(null);
    setError(null);
    if (pick.side === "untracked") return;
    const ctl = new AbortController();
    const q = new URLSearchParams({ path: pick.path });
    if (pick.side === "staged") q.set("staged", "1");
    void api.get<GitDiff>(`${base}/diff?${q}`, ctl.signal).then((r) => {
      if (ctl.signal.aborted) return;
      if (r.ok) setDiff(r.value);
      else setError(r.error);
    });
    return () => ctl.abort();
  }, [api, base, pick.path, pick.side, gen]);

  const f = diff?.files[0];
  return (
    <section class="git-diff" data-testid="git-diff" aria-label={`Diff of ${pick.path}`}>
      <header class="git-diff-head">
        <span class="git-diff-path">{pick.path}</span>
        <span class="git-muted">{pick.side === "staged" ? "staged" : pick.side === "untracked" ? "untracked" : "not staged"}</span>
        <button type="button" class="btn btn-sm" data-testid="git-diff-close" onClick={onClose}>Close</button>
      </header>
      {pick.side === "untracked" ? (
        <p class="pane-empty">A new file git does not track yet: stage it to see it as a diff.</p>
      ) : error ? (
        <p class="git-error" role="alert">{error.message}</p>
      ) : !diff ? (
        <p class="pane-empty">Loading the diff…</p>
      ) : !f ? (
        <p class="pane-empty">No differences on this side any more.</p>
      ) : f.binary ? (
        <p class="pane-empty">A binary file: no line diff.</p>
      ) : (
        <Diff diff={f.patch.replace(/^(?:(?!@@)[^\n]*\n)*/, "")} collapsedLines={400} />
      )}
    </section>
  );
}
