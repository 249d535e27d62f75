// The Terminal tab of the workspace pane (issue 14). Placeholder until its
// feature lands; it must not ship as is.

import type { TabProps } from "./tab";

export function TerminalTab(_: TabProps) {
  return <p class="pane-empty">Terminal: coming.</p>;
}
