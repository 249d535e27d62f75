// A paused run (h16-budgets): why it paused, and what a person can do —
// resume it, raising the limit it reached (offered at double), or stop it.

import { useState } from "preact/hooks";
import { useStore } from "../state/context";
import type { Item, Run } from "../state/types";
import { IconPlay, IconStop } from "./icons";

/** What each limit is called, and its unit, in the form. */
export const LIMIT_TEXT: Record<string, { label: string; step: string }> = {
  max_tokens: { label: "Token budget", step: "1" },
  max_cost_usd: { label: "Cost budget (USD)", step: "0.01" },
  max_wall_seconds: { label: "Wall time (seconds)", step: "1" },
  max_tool_calls: { label: "Tool calls", step: "1" },
  max_consecutive_errors: { label: "Consecutive failed calls", step: "1" },
};

/** The pause's code, reason and details: from its notice in the
 * transcript, else from the run as GET /api/runs gave it. */
function causeOf(run: Run, cause?: Item): { code: string; reason: string; details: Record<string, unknown> } {
  if (cause && cause.code) {
    const text = cause.text ?? "";
    return { code: cause.code, reason: text.replace(/^Paused: /, ""), details: cause.details ?? {} };
  }
  return { code: run.paused?.code ?? "", reason: run.paused?.reason ?? "Paused.", details: run.paused?.details ?? {} };
}

export function PausedBar({ run, cause }: { run: Run; cause?: Item }) {
  const store = useStore();
  const operate = store.account.permissions.value.operate;
  const c = causeOf(run, cause);
  const limit = typeof c.details.limit === "string" ? c.details.limit : "";
  const max = typeof c.details.max_value === "number" ? c.details.max_value : 0;
  // The server's day is configuration (Settings → Budgets), not raised here.
  const raisable = c.code === "budget_exceeded" && limit in LIMIT_TEXT && c.details.scope !== "day";
  const [value, setValue] = useState(raisable && max > 0 ? String(limit === "max_cost_usd" ? +(max * 2).toFixed(4) : max * 2) : "");
  const [busy, setBusy] = useState<"" | "resume" | "stop">("");
  const [error, setError] = useState("");

  const resume = async (e: Event) => {
    e.preventDefault();
    setError("");
    let budget: Record<string, number> | undefined;
    if (raisable) {
      const n = Number(value);
      if (!value || !isFinite(n) || n <= max) {
        setError(`Enter a limit above ${max}.`);
        return;
      }
      budget = { [limit]: n };
    }
    setBusy("resume");
    const err = await store.resume(run.id, budget);
    if (err) {
      setBusy("");
      setError(err.message);
    }
  };
  const stop = async () => {
    setBusy("stop");
    if (await store.cancelRun(run.id)) setBusy("");
  };
  const title = c.code === "looks_stuck" ? "Paused: the agent looks stuck" : c.code === "budget_exceeded" ? "Paused: a budget was reached" : "Paused";

  return (
    <form class="resume-bar resume-paused paused-bar" data-testid="paused-bar" data-run-id={run.id} data-code={c.code} onSubmit={(e) => void resume(e)}>
      <div class="paused-text">
        <strong>{title}</strong>
        <span data-testid="paused-reason">{c.reason}</span>
      </div>
      {operate && (
        <div class="paused-actions">
          {raisable && (
            <label class="paused-limit">
              <span>{LIMIT_TEXT[limit].label}</span>
              <input type="number" class="input input-sm" data-testid="paused-limit" min={0} step={LIMIT_TEXT[limit].step}
                value={value} onInput={(e) => setValue((e.target as HTMLInputElement).value)} />
            </label>
          )}
          <button type="submit" class="btn btn-sm btn-primary" data-testid="resume-run" disabled={busy !== ""} aria-busy={busy === "resume"}>
            <IconPlay size={12} /> {busy === "resume" ? "Resuming…" : raisable ? "Raise and resume" : "Resume"}
          </button>
          <button type="button" class="btn btn-sm" data-testid="stop-paused" disabled={busy !== ""} onClick={() => void stop()}>
            <IconStop size={12} /> Stop
          </button>
        </div>
      )}
      {error && <p class="form-error" role="alert" data-testid="paused-error">{error}</p>}
    </form>
  );
}
