// The runner-health banner, above the transcript: runs wait and no runner
// is alive to take them (the web tier runs without one, `serve
// --runner=none`), or the server cannot read its database. Calm, because
// nothing is lost: the runs start as soon as a runner does.

import { useStore } from "../state/context";

export function RunnerBanner() {
  const store = useStore();
  const a = store.runnerAlert.value;
  if (!a) return null;
  return (
    <div class={"runner-banner runner-banner-" + a.kind} data-testid="runner-banner" data-kind={a.kind} role="status">
      <svg class="rb-icon" viewBox="0 0 24 24" width="16" height="16" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true">
        <circle cx="12" cy="12" r="9" />
        <path d="M12 7v5l3 2" />
      </svg>
      {a.kind === "no_runner" ? (
        <span class="rb-text">
          No runner is running — {a.waiting} {a.waiting === 1 ? "run is" : "runs are"} waiting. Start one with <code>caduceus runner</code>.
        </span>
      ) : a.kind === "store_write" ? (
        <span class="rb-text">
          Saving is not possible right now: {a.reason || "the database refuses writes"}. What was saved is safe; this clears when writes work again.
        </span>
      ) : (
        <span class="rb-text">
          The server cannot read its database right now (store unavailable). Runs wait and nothing is lost; this clears when the store is back.
        </span>
      )}
    </div>
  );
}
