// The line under a finished run in the transcript: "3 files changed +20
// −5", from the run's changes (its first checkpoint → its last), the same
// live and after a reload. Clicking it opens the Changes tab on the run.

import { useStore } from "../state/context";
import { useView } from "../shell/view";
import { openPaneTab } from "./Pane";
import { summary, useFetched, type Changes } from "./changes";

export function RunChangesLine({ runId }: { runId: string }) {
  const store = useStore();
  const view = useView();
  const { data } = useFetched<Changes>(store.api, `/api/runs/${encodeURIComponent(runId)}/changes`, []);
  if (!data || data.files_changed === 0) return null;
  return (
    <div class="run-changes" data-testid="run-changes" data-run-id={runId}>
      <button
        type="button"
        class="t-link"
        title="Show what this run changed"
        onClick={() => {
          view.changesRun.value = runId;
          view.changesCall.value = null;
          openPaneTab(view, "changes");
        }}
      >
        {summary(data)}
      </button>
    </div>
  );
}

/** On a finished tool call that took a checkpoint: opens the Changes tab on
 * what the call changed. */
export function CallChangesLink({ runId, toolCallId }: { runId: string; toolCallId: string }) {
  const view = useView();
  return (
    <button
      type="button"
      class="t-link tool-changes"
      data-testid="tool-changes"
      title="Show what this call changed in the workspace"
      onClick={() => {
        view.changesRun.value = runId;
        view.changesCall.value = toolCallId;
        openPaneTab(view, "changes");
      }}
    >
      Changes
    </button>
  );
}
