// The Git tab's changed files, grouped as git sees them. A row opens its
// diff; its button stages or unstages that file, the group's button every
// file of the group. Viewers get the list without the buttons.

import { changePaths, KIND_LETTER, splitPath, type GitChange, type GitPick, type GitSide } from "./git";

interface Props {
  staged: GitChange[];
  unstaged: GitChange[];
  untracked: string[];
  conflicted: GitChange[];
  canOperate: boolean;
  busy: boolean;
  pick: GitPick | null;
  onPick: (p: GitPick) => void;
  onStage: (paths: string[]) => void;
  onUnstage: (paths: string[]) => void;
}

export function GitChanges(p: Props) {
  const untracked: GitChange[] = p.untracked.map((path) => ({ path, kind: "untracked" }));
  return (
    <div class="git-groups">
      {p.conflicted.length > 0 && (
        <Group side="conflicted" title="Conflicts" changes={p.conflicted} {...p}
          action={{ label: "Mark resolved", all: "Stage all", run: (c) => p.onStage(changePaths(c)) }} />
      )}
      {p.staged.length > 0 && (
        <Group side="staged" title="Staged" changes={p.staged} {...p}
          action={{ label: "Unstage", all: "Unstage all", run: (c) => p.onUnstage(changePaths(c)) }} />
      )}
      {p.unstaged.length > 0 && (
        <Group side="unstaged" title="Not staged" changes={p.unstaged} {...p}
          action={{ label: "Stage", all: "Stage all", run: (c) => p.onStage(changePaths(c)) }} />
      )}
      {untracked.length > 0 && (
        <Group side="untracked" title="Untracked" changes={untracked} {...p}
          action={{ label: "Stage", all: "Stage all", run: (c) => p.onStage(c.map((x) => x.path)) }} />
      )}
    </div>
  );
}

interface GroupProps extends Props {
  side: GitSide;
  title: string;
  changes: GitChange[];
  action: { label: string; all: string; run: (cs: GitChange[]) => void };
}

function Group({ side, title, changes, action, canOperate, busy, pick, onPick }: GroupProps) {
  return (
    <section class="git-group" data-testid={`git-group-${side}`} aria-label={title}>
      <header class="git-group-head">
        <h3>{title} <span class="git-count">{changes.length}</span></h3>
        {canOperate && (
          <button type="button" class="btn btn-sm" data-testid={`git-${side}-all`} disabled={busy}
            onClick={() => action.run(changes)}>
            {action.all}
          </button>
        )}
      </header>
      <ul class="git-files">
        {changes.map((c) => {
          const [dir, name] = splitPath(c.path);
          const on = pick?.path === c.path && pick.side === side;
          return (
            <li key={c.path} class={"git-file" + (on ? " on" : "")} data-testid="git-file" data-path={c.path} data-side={side}>
              <button type="button" class="git-file-open" aria-pressed={on} title={`${c.kind.replace(/_/g, " ")}: ${c.path}`}
                onClick={() => onPick({ path: c.path, side })}>
                <span class={`git-kind k-${c.kind}`} aria-label={c.kind.replace(/_/g, " ")}>{KIND_LETTER[c.kind] ?? "?"}</span>
                <span class="git-name">{name}</span>
                {dir && <span class="git-dir">{dir}</span>}
                {c.orig_path && <span class="git-dir">← {c.orig_path}</span>}
              </button>
              {canOperate && (
                <button type="button" class="btn btn-sm git-file-act" data-testid={`git-${side === "staged" ? "unstage" : "stage"}`}
                  disabled={busy} aria-label={`${action.label} ${c.path}`} onClick={() => action.run([c])}>
                  {action.label}
                </button>
              )}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
