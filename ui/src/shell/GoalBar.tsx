// The session's goal under the header: its text, status and how much of
// each limit the runs under it used, with pause / resume / clear for those
// who may operate. Shown while the session has a goal that is not cleared.

import { useState } from "preact/hooks";
import { useStore } from "../state/context";
import type { Goal, SessionState } from "../state/types";
import { tokens } from "./format";

const STATUS_TEXT: Record<Goal["status"], string> = {
  active: "Working on it", paused: "Paused", met: "Met", blocked: "Blocked", cleared: "Cleared",
};

const REASON_TEXT: Record<string, string> = {
  limit_runs: "run limit reached", limit_tokens: "token limit reached", limit_cost: "cost limit reached",
  limit_duration: "time limit reached", run_cancelled: "a run was stopped", run_failed: "a run failed", run_expired: "a run expired", paused: "paused by a person",
};

/** "2 / 5 runs · 12.3k tokens · $0.04 of $1.00": what the goal used,
 * against its limits. */
export function goalUsage(g: Goal): string {
  const parts = [g.max_runs ? `${g.runs} / ${g.max_runs} runs` : `${g.runs} runs`];
  if (g.tokens || g.max_tokens) parts.push(g.max_tokens ? `${tokens(g.tokens)} / ${tokens(g.max_tokens)} tokens` : `${tokens(g.tokens)} tokens`);
  if (g.max_cost_usd) parts.push(`$${g.cost_usd.toFixed(2)} / $${g.max_cost_usd.toFixed(2)}`);
  if (g.max_duration_ms) parts.push(`limit ${Math.round(g.max_duration_ms / 60000)} min`);
  return parts.join(" · ");
}

export function GoalBar({ session }: { session: SessionState | null }) {
  const store = useStore();
  const [error, setError] = useState<string | null>(null);
  const g = session?.goal.value;
  if (!g || g.status === "cleared") return null;
  const operate = store.account.permissions.value.operate;
  const act = async (p: Promise<{ message: string } | null>) => {
    const err = await p;
    setError(err ? err.message : null);
  };
  const why = g.status === "paused" && g.reason ? REASON_TEXT[g.reason] : undefined;
  return (
    <section class={"goal-bar goal-" + g.status} data-testid="goal-bar" data-status={g.status} aria-label="Goal">
      <span class="goal-status" data-testid="goal-status">{STATUS_TEXT[g.status]}{why ? ` (${why})` : ""}</span>
      <span class="goal-text" title={g.text} data-testid="goal-text">{g.text}</span>
      <span class="goal-usage" data-testid="goal-usage">{goalUsage(g)}</span>
      {g.note && <span class="goal-note" title={g.note}>“{g.note}”</span>}
      {operate && (
        <span class="goal-actions">
          {g.status === "active" ? (
            <button type="button" class="btn btn-sm" data-testid="goal-pause" onClick={() => void act(store.putGoal({ status: "paused" }))}>Pause</button>
          ) : (
            <button type="button" class="btn btn-sm" data-testid="goal-resume" onClick={() => void act(store.putGoal({ status: "active" }))}>Resume</button>
          )}
          <button type="button" class="btn btn-sm" data-testid="goal-clear" onClick={() => void act(store.clearGoal())}>Clear</button>
        </span>
      )}
      {error && <span class="goal-error" role="alert">{error}</span>}
    </section>
  );
}
