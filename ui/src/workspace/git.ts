// The Git panel's wire shapes (docs/API.md, "Git") and the small pure
// helpers the tab uses.

export interface GitChange { path: string; orig_path?: string; kind: string }

export interface GitStatus {
  repository: boolean;
  branch?: string;
  detached?: boolean;
  commit?: string;
  upstream?: string;
  ahead?: number;
  behind?: number;
  staged?: GitChange[];
  unstaged?: GitChange[];
  untracked?: string[];
  conflicted?: GitChange[];
}

export interface GitFileDiff { path: string; old_path?: string; added: number; removed: number; binary: boolean; patch: string }
export interface GitDiff { staged: boolean; files: GitFileDiff[]; added: number; removed: number }

export interface GitCommit { hash: string; author: string; email: string; date: string; subject: string }
export interface GitLogPage { commits: GitCommit[]; next?: string }

export interface GitBranch { name: string; commit: string; current: boolean; upstream?: string }

/** Which side of the index a listed file is on. */
export type GitSide = "staged" | "unstaged" | "untracked" | "conflicted";

/** A file picked for the diff viewer. */
export interface GitPick { path: string; side: GitSide }

/** One letter per change kind, as git status -s shows them. */
export const KIND_LETTER: Record<string, string> = {
  modified: "M", added: "A", deleted: "D", renamed: "R", copied: "C", type_changed: "T",
  both_modified: "U", both_added: "U", both_deleted: "U", added_by_us: "U", added_by_them: "U",
  deleted_by_us: "U", deleted_by_them: "U", untracked: "?",
};

/** The paths to send to unstage or stage a change: a rename's source goes
 * with it, so the pair moves as one. */
export function changePaths(cs: GitChange[]): string[] {
  const out: string[] = [];
  for (const c of cs) {
    out.push(c.path);
    if (c.orig_path) out.push(c.orig_path);
  }
  return out;
}

/** The base URL of a session's Git routes. */
export const gitBase = (sessionId: string) => `/api/sessions/${encodeURIComponent(sessionId)}/git`;

/** Splits a path into its directory (with the trailing slash) and name. */
export function splitPath(p: string): [string, string] {
  const trimmed = p.endsWith("/") ? p.slice(0, -1) : p;
  const i = trimmed.lastIndexOf("/");
  return i < 0 ? ["", p] : [p.slice(0, i + 1), p.slice(i + 1)];
}
