// What a run that does not execute waits for, in words (docs/API.md,
// "waiting"). The header's badge title, the queued note under a message
// and the tests read these.

import type { Run } from "../state/types";

function ordinal(n: number): string {
  const s = ["th", "st", "nd", "rd"];
  const v = n % 100;
  return n + (s[(v - 20) % 10] || s[v] || s[0]);
}

/** "Waiting for a runner — none is running" and the like; "" when the run
 * does not wait or the reason is not known yet. */
export function waitingText(run: Run): string {
  const w = run.waiting;
  if (!w) return "";
  switch (w.reason) {
    case "person":
      return "";
    case "previous_run":
      return "Waits for the session's previous message to finish";
    case "runner":
      return "Waiting for a runner — none is running";
    case "runner_slot":
      if (!w.position) return "Waiting for a runner";
      return w.position === 1 ? "Next in line for a runner" : `${ordinal(w.position)} in line for a runner`;
    case "retry":
      return "Waiting to retry";
  }
  return "";
}

/** A run whose question was answered and that waits for a runner to take
 * it again. */
export function answeredWaiting(run: Run | null | undefined): boolean {
  return !!run && (run.status === "awaiting_approval" || run.status === "awaiting_clarify") && !!run.waiting && run.waiting.reason !== "person";
}
