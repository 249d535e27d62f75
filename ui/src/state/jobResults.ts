// The result of a scheduled job's run, delivered to the browser (issue 17,
// h17-jobsui): a job whose delivery says "notify" gets a system
// notification (notify.ts: only when permitted and not muted) and an
// in-app toast when one of its runs ends, in every open tab.
//
// run.done reaches every tab on the lifecycle stream, but it does not say
// which job (if any) started the run: GET /api/runs/{id} does (job_id), and
// GET /api/jobs/{id} says whether that job wants to be told. A run is
// looked at once per tab (the stream can replay an event after it
// reopens); two tabs of one browser each show it, and the notification's
// tag lets the system fold their two into one.

import type { Api } from "./api";
import type { Envelope } from "./types";
import type * as P from "./payloads";

/** One run's result, as the toast and the notification say it. */
export interface JobResult { runId: string; jobId: string; jobName: string; status: string; sessionId: string }

interface RunView { id: string; session_id: string; status: string; job_id?: string }
interface JobView { id: string; name: string; delivery?: { notify: boolean } }

/** How many run ids a tab remembers having looked at: far more than can
 * end between two reconnects of the stream. */
const SEEN_MAX = 1000;

export interface JobResultDeps {
  get: Api["get"];
  /** Shows the result (toast and notification); called once per run. */
  show(r: JobResult): void;
}

export function createJobResults(deps: JobResultDeps) {
  const seen = new Set<string>();
  return {
    /** A run.done from the stream: tells when the run was a notifying job's. */
    async runDone(ev: Envelope): Promise<void> {
      if (!ev.run_id || seen.has(ev.run_id)) return;
      seen.add(ev.run_id);
      if (seen.size > SEEN_MAX) seen.delete(seen.values().next().value as string);
      const run = await deps.get<RunView>(`/api/runs/${ev.run_id}`);
      if (!run.ok || !run.value.job_id) return;
      const job = await deps.get<JobView>(`/api/jobs/${run.value.job_id}`);
      if (!job.ok || !job.value.delivery?.notify) return;
      const status = (ev.payload as P.RunDoneP | undefined)?.status || run.value.status;
      deps.show({ runId: ev.run_id, jobId: job.value.id, jobName: job.value.name, status, sessionId: run.value.session_id || ev.session_id });
    },
  };
}

/** "completed", "failed", … as the sentence says it. */
export function resultWords(r: JobResult): string {
  return `Scheduled job “${r.jobName}” ${r.status || "ended"}`;
}
