// The Git tab of the workspace pane (issue 14). Placeholder until its
// feature lands; it must not ship as is.

import type { TabProps } from "./tab";

export function GitTab(_: TabProps) {
  return <p class="pane-empty">Git: coming.</p>;
}
