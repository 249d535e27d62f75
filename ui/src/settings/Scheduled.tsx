// Scheduled jobs (issue 17, h17-jobs): a prompt sent on a schedule. The
// list says each schedule in words with its next run, last result and
// delivery; one editor (JobEditor) creates a job and edits one in place.
// Readers see the jobs; operators run, pause and resume them; admins
// create, edit and delete them.

import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { useStore } from "../state/context";
import { openPage, useView } from "../shell/view";
import { toneClass } from "../shell/status";
import { JobEditor } from "./JobEditor";
import { deliveryWords, scheduleWords, type Job } from "./jobs";

export { scheduleWords } from "./jobs";

interface JobRun { run_id: string; session_id: string; fire_at: string; manual: boolean; status: string; created_at: string | null; ended_at: string | null; cost_usd: number }

const when = (t: string | null) => (t ? new Date(t).toLocaleString() : "—");

export function ScheduledPage() {
  const store = useStore();
  const perms = store.account.permissions.value;
  const jobs = useSignal<Job[] | null>(null);
  const error = useSignal<string | null>(null);
  const open = useSignal<string | null>(null);
  // The job in the editor: its id, "new", or none.
  const editing = useSignal<string | null>(null);

  const load = async () => {
    const r = await store.api.get<{ jobs: Job[] }>("/api/jobs");
    if (!r.ok) {
      error.value = "The scheduled jobs could not be loaded.";
      return;
    }
    jobs.value = r.value.jobs;
    error.value = null;
  };
  useEffect(() => {
    void load();
    const t = setInterval(() => void load(), 5000);
    return () => clearInterval(t);
  }, []);

  const act = async (j: Job, what: "run" | "pause" | "resume" | "delete") => {
    const r = what === "delete" ? await store.api.del(`/api/jobs/${j.id}`) : await store.api.post(`/api/jobs/${j.id}/${what}`);
    error.value = r.ok ? null : r.error.message;
    await load();
  };

  // Closing the editor gives the keyboard back to the button that opened it.
  const close = () => {
    const was = editing.value;
    editing.value = null;
    requestAnimationFrame(() => document.querySelector<HTMLElement>(
      was === "new" ? "[data-testid=job-new]" : `[data-testid=job-row][data-id="${was}"] [data-testid=job-edit]`)?.focus());
  };

  return (
    <div class="settings-section scheduled-page" data-testid="scheduled-page">
      <p class="page-lead">A scheduled job sends its prompt on a schedule, unattended, each run in a new session or in one that accumulates.</p>
      {error.value && <p class="form-error" role="alert">{error.value}</p>}
      {jobs.value && jobs.value.length === 0 && <p class="page-note">No scheduled job yet.</p>}
      <ul class="rows">
        {jobs.value?.map((j) => (
          <li key={j.id} class={`row job-row${j.enabled ? "" : " row-off"}`} data-testid="job-row" data-name={j.name} data-id={j.id}>
            <div class="row-main">
              <span class="row-title">{j.name}</span>
              <span class="job-schedule" data-testid="job-schedule">{scheduleWords(j.schedule)}{j.enabled ? "" : " — paused"}</span>
              <span class="row-sub">
                <span>Next: {j.enabled ? when(j.next_fire_at) : "paused"}</span>
                <span>Last: {j.last_run_status
                  ? <span class={`badge ${toneClass(j.last_run_status)}`} data-testid="job-last"><span class="dot" />{j.last_run_status}</span>
                  : "none yet"}</span>
                <span data-testid="job-delivery-short">{deliveryWords(j.delivery)}</span>
              </span>
            </div>
            <div class="row-actions">
              {perms.operate && <button class="btn btn-sm" data-testid="job-run" onClick={() => void act(j, "run")}>Run now</button>}
              {perms.operate && (j.enabled
                ? <button class="btn btn-sm" data-testid="job-pause" onClick={() => void act(j, "pause")}>Pause</button>
                : <button class="btn btn-sm" data-testid="job-resume" onClick={() => void act(j, "resume")}>Resume</button>)}
              <button class="btn btn-sm" data-testid="job-history" aria-expanded={open.value === j.id}
                onClick={() => (open.value = open.value === j.id ? null : j.id)}>History</button>
              {perms.admin && <button class="btn btn-sm" data-testid="job-edit" aria-expanded={editing.value === j.id}
                onClick={() => (editing.value = editing.value === j.id ? null : j.id)}>Edit</button>}
              {perms.admin && <button class="btn btn-sm btn-danger" data-testid="job-delete" onClick={() => confirm(`Delete "${j.name}"?`) && void act(j, "delete")}>Delete</button>}
            </div>
            {editing.value === j.id && <JobEditor key={j.id} job={j} onSaved={load} onClose={close} />}
            {open.value === j.id && <JobHistory id={j.id} lastRun={j.last_run_id} />}
          </li>
        ))}
      </ul>
      {/* Not before the list: the button would move under the pointer as it came. */}
      {perms.admin && jobs.value && (editing.value === "new"
        ? <JobEditor key="new" job={null} onSaved={load} onClose={close} />
        : <button class="btn btn-sm job-new" data-testid="job-new" onClick={() => (editing.value = "new")}>New scheduled job</button>)}
    </div>
  );
}

// The history is read again when the job's last run changes (a fire, or
// run now), so it does not lag the row above it.
function JobHistory(props: { id: string; lastRun: string }) {
  const store = useStore();
  const view = useView();
  const runs = useSignal<JobRun[] | null>(null);
  useEffect(() => {
    void store.api.get<{ runs: JobRun[] }>(`/api/jobs/${props.id}/runs`).then((r) => r.ok && (runs.value = r.value.runs));
  }, [props.id, props.lastRun]);
  if (!runs.value) return null;
  if (runs.value.length === 0) return <p class="page-note">No run yet.</p>;
  return (
    <table class="job-history" data-testid="job-history-table">
      <thead><tr><th>Due</th><th>Status</th><th>Duration</th><th>Cost</th><th /></tr></thead>
      <tbody>
        {runs.value.map((r) => (
          <tr key={r.run_id}>
            <td>{when(r.fire_at)}{r.manual ? " (run now)" : ""}</td>
            <td><span class={`job-status ${toneClass(r.status)}`}>{r.status || "deleted"}</span></td>
            <td>{r.created_at && r.ended_at ? `${Math.round((Date.parse(r.ended_at) - Date.parse(r.created_at)) / 1000)} s` : "—"}</td>
            <td>${r.cost_usd.toFixed(4)}</td>
            <td>{r.status && <a href="#" onClick={(e) => { e.preventDefault(); store.selectSession(r.session_id); openPage(view, "chat"); }}>Open session</a>}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
