// What every tab of the workspace pane gets: the open session and what the
// principal may do with it. Tabs fetch through the store's API client
// (useStore().api), which carries the credentials and the CSRF header.

import type { SessionState } from "../state/types";

export interface TabProps {
  session: SessionState;
  /** The principal may change things (start, save, revert, commit, open a
   * terminal); false: a viewer, who reads only. */
  canOperate: boolean;
}

/** The tabs of the workspace pane, in order. */
export type PaneTab = "activity" | "files" | "changes" | "git" | "terminal" | "browser";

export const PANE_TABS: { id: PaneTab; label: string; title: string }[] = [
  { id: "activity", label: "Activity", title: "What the agent is doing: turns, reasoning and tool calls" },
  { id: "files", label: "Files", title: "Browse, view and edit the session's workspace" },
  { id: "changes", label: "Changes", title: "What each run changed, with checkpoints and rollback" },
  { id: "git", label: "Git", title: "The workspace's git status, diff, log and commits" },
  { id: "terminal", label: "Terminal", title: "A shell in the workspace" },
  // Listed only for a session whose agent used the browser (h18-browser).
  { id: "browser", label: "Browser", title: "The page the agent's browser is on and its screenshots" },
];

export const isPaneTab = (s: string | null): s is PaneTab => PANE_TABS.some((t) => t.id === s);
