// The note under a message whose run no runner has taken yet: it says what
// the run waits for (a runner, a free slot and its place in line, the
// previous message) and offers to take the message back.

import { useState } from "preact/hooks";
import { useStore } from "../state/context";
import { waitingText } from "../shell/waiting";

export function QueuedNote({ runId }: { runId: string }) {
  const store = useStore();
  const [busy, setBusy] = useState(false);
  const run = store.active.value?.runs.value.find((r) => r.id === runId);
  if (!run || run.status !== "queued") return null;
  const why = waitingText(run);
  const cancel = async () => {
    setBusy(true);
    if (await store.cancelRun(runId)) setBusy(false);
  };
  return (
    <div class="queued-note" data-testid="queued-note" data-reason={run.waiting?.reason ?? ""} data-position={run.waiting?.position ?? ""} role="status">
      <span class="qn-dot" aria-hidden="true" />
      <span class="qn-text">Queued{why ? ` · ${why}` : ""}</span>
      {store.account.permissions.value.operate && (
        <button type="button" class="link-btn" data-testid="queued-cancel" disabled={busy} onClick={() => void cancel()}>
          {busy ? "Cancelling…" : "Cancel"}
        </button>
      )}
    </div>
  );
}
