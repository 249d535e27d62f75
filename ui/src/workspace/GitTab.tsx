// The Git tab of the workspace pane: the workspace's branch (with a
// switcher), its changed files grouped as git sees them (staged, unstaged,
// untracked, conflicted) with stage/unstage per file and per group, a diff
// of the file picked, a commit box and the log. It reloads on its button,
// when a run of the session ends (the agent may have changed files) and
// when anyone commits through the panel (git.committed). A viewer sees
// everything and changes nothing: the buttons that write are not shown.

import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import type { ActionError } from "../state/contract";
import { useStore } from "../state/context";
import { GitChanges } from "./GitChanges";
import { GitDiffView } from "./GitDiffView";
import { GitLog } from "./GitLog";
import { gitBase, type GitBranch, type GitPick, type GitStatus } from "./git";
import type { TabProps } from "./tab";
import "./git.css";

export function GitTab({ session, canOperate }: TabProps) {
  const { api } = useStore();
  const base = gitBase(session.id);
  const [status, setStatus] = useState<GitStatus | null>(null);
  const [branches, setBranches] = useState<GitBranch[]>([]);
  const [error, setError] = useState<ActionError | null>(null);
  const [busy, setBusy] = useState(false);
  const [pick, setPick] = useState<GitPick | null>(null);
  const [message, setMessage] = useState("");
  const [notice, setNotice] = useState("");
  // Bumped on every reload so the log and the diff reload with the status.
  const [gen, setGen] = useState(0);
  const live = useRef(true);
  useEffect(() => () => void (live.current = false), []);

  const load = useCallback(async () => {
    const r = await api.get<GitStatus>(`${base}/status`);
    if (!live.current) return;
    if (!r.ok) {
      setError(r.error);
      return;
    }
    setError(null);
    setStatus(r.value);
    setGen((g) => g + 1);
    if (r.value.repository) {
      const b = await api.get<{ branches: GitBranch[] }>(`${base}/branches`);
      if (live.current && b.ok) setBranches(b.value.branches);
    }
  }, [api, base]);

  // Reload when the session changes, a run of it ends, or a commit is heard.
  const ended = session.runs.value.filter((r) => r.terminal).length;
  const lastCommit = session.lastCommit.value;
  useEffect(() => {
    void load();
  }, [load, ended, lastCommit]);
  useEffect(() => {
    setPick(null);
    setMessage("");
    setNotice("");
  }, [session.id]);

  /** Runs a write, then shows its answer (the new status) or its error. */
  const write = async (path: string, body: unknown, then?: (v: any) => void) => {
    setBusy(true);
    setNotice("");
    const r = await api.post<any>(`${base}/${path}`, body);
    if (!live.current) return;
    setBusy(false);
    if (!r.ok) {
      setError(r.error);
      return;
    }
    setError(null);
    then?.(r.value);
    await load();
  };

  const stage = (paths: string[]) => void write("stage", { paths });
  const unstage = (paths: string[]) => void write("unstage", { paths });
  const commit = () =>
    void write("commit", { message }, (v: { hash: string; message: string }) => {
      setMessage("");
      setPick(null);
      setNotice(`Committed ${v.hash.slice(0, 7)}: ${v.message}`);
    });
  const switchTo = (branch: string) => void write("switch", { branch }, () => setPick(null));

  if (!status) {
    return (
      <div class="git-tab" data-testid="git-tab">
        {error ? <GitError error={error} /> : <p class="pane-empty">Reading the repository…</p>}
      </div>
    );
  }
  if (!status.repository) {
    return (
      <div class="git-tab" data-testid="git-tab">
        <div class="git-none" data-testid="git-not-repo">
          <p><strong>This workspace is not a git repository.</strong></p>
          <p class="git-muted">Its directory is not the top of a git work tree, so there is no status, history or commit to show here.</p>
          <button type="button" class="btn btn-sm" data-testid="git-refresh" onClick={() => void load()}>Check again</button>
        </div>
      </div>
    );
  }

  const staged = status.staged ?? [];
  const unstaged = status.unstaged ?? [];
  const untracked = status.untracked ?? [];
  const conflicted = status.conflicted ?? [];
  const clean = staged.length + unstaged.length + untracked.length + conflicted.length === 0;
  const canCommit = canOperate && !busy && staged.length > 0 && conflicted.length === 0 && message.trim() !== "";

  return (
    <div class="git-tab" data-testid="git-tab" aria-busy={busy}>
      <div class="git-head">
        <BranchSwitcher status={status} branches={branches} disabled={!canOperate || busy} onSwitch={switchTo} />
        {status.upstream && (
          <span class="git-muted git-track" title={`Tracking ${status.upstream}`}>
            {status.ahead ? `↑${status.ahead}` : ""} {status.behind ? `↓${status.behind}` : ""} {!status.ahead && !status.behind ? `up to date with ${status.upstream}` : ""}
          </span>
        )}
        <button type="button" class="btn btn-sm git-refresh" data-testid="git-refresh" disabled={busy} onClick={() => void load()} title="Read the status again">
          Refresh
        </button>
      </div>
      {error && <GitError error={error} onClose={() => setError(null)} />}
      {notice && <p class="git-notice" role="status" data-testid="git-notice">{notice}</p>}

      {clean ? (
        <p class="pane-empty" data-testid="git-clean">Nothing to commit: the work tree matches {status.detached ? "HEAD" : status.branch}.</p>
      ) : (
        <GitChanges
          staged={staged} unstaged={unstaged} untracked={untracked} conflicted={conflicted}
          canOperate={canOperate} busy={busy} pick={pick} onPick={setPick}
          onStage={stage} onUnstage={unstage}
        />
      )}

      {pick && <GitDiffView base={base} pick={pick} gen={gen} onClose={() => setPick(null)} />}

      {canOperate && (
        <form class="git-commit" onSubmit={(e) => { e.preventDefault(); if (canCommit) commit(); }}>
          <label for="git-message" class="git-label">Commit message</label>
          <textarea
            id="git-message" class="git-message" data-testid="git-commit-message" rows={3}
            placeholder={staged.length ? "Say what the staged changes do" : "Stage changes to commit them"}
            value={message} onInput={(e) => setMessage((e.target as HTMLTextAreaElement).value)}
            onKeyDown={(e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey) && canCommit) { e.preventDefault(); commit(); } }}
          />
          <div class="git-commit-row">
            <span class="git-muted">{staged.length ? `${staged.length} staged file${staged.length === 1 ? "" : "s"}` : "Nothing staged"}</span>
            <button type="submit" class="btn btn-sm btn-primary" data-testid="git-commit" disabled={!canCommit}
              title={staged.length === 0 ? "Stage changes first" : message.trim() === "" ? "Write a message first" : "Commit the staged changes"}>
              Commit
            </button>
          </div>
        </form>
      )}

      <GitLog base={base} gen={gen} head={status.commit ?? ""} />
    </div>
  );
}

function BranchSwitcher({ status, branches, disabled, onSwitch }: {
  status: GitStatus; branches: GitBranch[]; disabled: boolean; onSwitch: (b: string) => void;
}) {
  if (status.detached) {
    return (
      <span class="git-branch" data-testid="git-branch-name">
        detached at <code>{(status.commit ?? "").slice(0, 7)}</code>
      </span>
    );
  }
  const names = branches.map((b) => b.name);
  if (status.branch && !names.includes(status.branch)) names.unshift(status.branch); // a branch with no commit yet
  return (
    <label class="git-branch">
      <span class="git-label">Branch</span>
      <select
        data-testid="git-branch" value={status.branch} disabled={disabled || names.length < 2}
        onChange={(e) => {
          const sel = e.target as HTMLSelectElement;
          const v = sel.value;
          // The select shows the branch the work tree is on: back to it
          // until the switch succeeds (the reload then moves it), so a
          // refused switch does not leave the wrong name showing.
          if (status.branch) sel.value = status.branch;
          if (v !== status.branch) onSwitch(v);
        }}
      >
        {names.map((n) => <option key={n} value={n}>{n}</option>)}
      </select>
    </label>
  );
}

function GitError({ error, onClose }: { error: ActionError; onClose?: () => void }) {
  return (
    <div class="git-error" role="alert" data-testid="git-error" data-code={error.code}>
      <span>{error.message}</span>
      {onClose && <button type="button" class="btn btn-sm" onClick={onClose}>Dismiss</button>}
    </div>
  );
}
