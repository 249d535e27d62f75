// The in-app word that a scheduled job's run ended (issue 17,
// state/jobResults.ts): "Scheduled job “Morning report” completed — Open",
// Open going to the run's session. Polite, not an alert: nothing failed
// here. It stays a little longer than an error toast, since the person was
// not waiting for it.

import { useSignalEffect } from "@preact/signals";
import { useStore } from "../state/context";
import { resultWords } from "../state/jobResults";
import { toneClass } from "./status";
import { openPage, useView } from "./view";
import { IClose } from "./icons";

const SHOW_MS = 12_000;

export function JobToast() {
  const store = useStore();
  const view = useView();
  const r = store.jobResult.value;
  useSignalEffect(() => {
    const cur = store.jobResult.value;
    if (!cur) return;
    const timer = setTimeout(() => store.jobResult.value === cur && (store.jobResult.value = null), SHOW_MS);
    return () => clearTimeout(timer);
  });
  const open = () => {
    if (!r) return;
    store.jobResult.value = null;
    store.selectSession(r.sessionId);
    openPage(view, "chat");
  };
  return (
    <div class="toast-region job-toast-region" aria-live="polite">
      {r && (
        <div class={`toast job-toast ${toneClass(r.status)}`} data-testid="job-toast" data-run={r.runId} role="status">
          <span class="job-toast-dot" aria-hidden="true" />
          <span class="toast-text">{resultWords(r)} —</span>
          <button type="button" class="btn btn-sm" data-testid="job-toast-open" onClick={open}
            aria-label={`Open the session of ${resultWords(r)}`}>Open</button>
          <button type="button" class="icon-btn sm" aria-label="Dismiss" onClick={() => (store.jobResult.value = null)}>
            <IClose size={15} />
          </button>
        </div>
      )}
    </div>
  );
}
