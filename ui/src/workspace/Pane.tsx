// The workspace pane: the right-hand column, one tab at a time — the
// activity feed, and the session's workspace (files, changes, git,
// terminal). The activity tab keeps the narrow column it always had; the
// workspace tabs need room for code, diffs and a terminal, so the pane
// widens for them (see .ws-pane.wide in workspace.css).

import { useStore } from "../state/context";
import type { SessionState } from "../state/types";
import { ActivityPanel } from "../transcript/Activity";
import { IClose } from "../shell/icons";
import { useView } from "../shell/view";
import { ChangesTab } from "./ChangesTab";
import { FilesTab } from "./FilesTab";
import { GitTab } from "./GitTab";
import { PANE_TABS, type PaneTab } from "./tab";
import { TerminalTab } from "./TerminalTab";
import { BrowserTab, usedBrowser } from "./BrowserTab";

export function WorkspacePane({ session }: { session: SessionState | null }) {
  const view = useView();
  const store = useStore();
  const tab = view.paneTab.value;
  const canOperate = store.account.permissions.value.operate;
  return (
    <aside class={"activity-pane ws-pane" + (tab === "activity" ? "" : " wide")} id="activity-pane" aria-label="Workspace">
      <div class="pane-head ws-head">
        <div class="ws-tabs" role="tablist" aria-label="Workspace views">
          {PANE_TABS.filter((t) => t.id !== "browser" || tab === "browser" || usedBrowser(session)).map((t) => (
            <button
              type="button"
              role="tab"
              id={`ws-tab-${t.id}`}
              class={"ws-tab" + (t.id === tab ? " on" : "")}
              aria-selected={t.id === tab}
              aria-controls="ws-tabpanel"
              title={t.title}
              data-testid={`pane-tab-${t.id}`}
              onClick={() => openPaneTab(view, t.id)}
            >
              {t.label}
            </button>
          ))}
        </div>
        <button type="button" class="icon-btn sm" aria-label="Close panel" onClick={() => (view.activityOpen.value = false)}>
          <IClose size={16} />
        </button>
      </div>
      <div class={"pane-body" + (tab === "activity" ? "" : " ws-body")} id="ws-tabpanel" role="tabpanel" aria-labelledby={`ws-tab-${tab}`}>
        {!session ? (
          <p class="pane-empty">Open a session to see what its agent does and the workspace it works in.</p>
        ) : (
          <TabBody tab={tab} session={session} canOperate={canOperate} />
        )}
      </div>
    </aside>
  );
}

function TabBody({ tab, session, canOperate }: { tab: PaneTab; session: SessionState; canOperate: boolean }) {
  switch (tab) {
    case "files": return <FilesTab session={session} canOperate={canOperate} />;
    case "changes": return <ChangesTab session={session} canOperate={canOperate} />;
    case "git": return <GitTab session={session} canOperate={canOperate} />;
    case "terminal": return <TerminalTab session={session} canOperate={canOperate} />;
    case "browser": return <BrowserTab session={session} canOperate={canOperate} />;
    default: return <ActivityPanel session={session} />;
  }
}

/** Shows tab t in the pane (opening the pane), remembered across reloads. */
export function openPaneTab(view: ReturnType<typeof useView>, t: PaneTab): void {
  view.paneTab.value = t;
  view.activityOpen.value = true;
  try {
    localStorage.setItem("caduceus.paneTab", t);
  } catch {
    /* private mode: the choice lasts this page only */
  }
}
