// Scheduled jobs (issue 17, h17-jobs): a prompt sent on a schedule. The
// list says each schedule in words with its next run and last result;
// the editor previews the next five fire times as the schedule is typed.
// Readers see the jobs; operators run, pause and resume them; admins
// create and delete them.

import { useSignal } from "@preact/signals";
import { useEffect, useState } from "preact/hooks";
import { useStore } from "../state/context";
import { openPage, useView } from "../shell/view";

interface Schedule { kind: string; expr: string; tz: string }
interface Job {
  id: string; name: string; prompt: string; schedule: Schedule; enabled: boolean;
  overlap: string; missed: string; session: string;
  next_fire_at: string | null; last_run_id: string; last_run_status: string;
}
interface JobRun { run_id: string; session_id: string; fire_at: string; manual: boolean; status: string; created_at: string | null; ended_at: string | null; cost_usd: number }

const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

/** A schedule in words where it is a common shape; the expression otherwise. */
export function scheduleWords(s: Schedule): string {
  if (s.kind === "interval") return s.expr.startsWith("every") ? s.expr : `every ${s.expr}`;
  if (s.kind === "once") return `once, at ${new Date(s.expr).toLocaleString()}`;
  const zone = s.tz || "UTC";
  const f = s.expr.trim().split(/\s+/);
  if (f.length === 5 && /^\d+$/.test(f[0]) && /^\d+$/.test(f[1]) && f[2] === "*" && f[3] === "*") {
    const at = `${f[1].padStart(2, "0")}:${f[0].padStart(2, "0")}`;
    const days = f[4] === "*" ? "every day" : f[4] === "1-5" ? "every weekday" : /^\d$/.test(f[4]) ? `every ${DAYS[Number(f[4]) % 7]}` : `on days ${f[4]}`;
    return `${days} at ${at}, ${zone}`;
  }
  return `${s.expr} (${zone})`;
}

const when = (t: string | null) => (t ? new Date(t).toLocaleString() : "—");

export function ScheduledPage() {
  const store = useStore();
  const perms = store.account.permissions.value;
  const jobs = useSignal<Job[] | null>(null);
  const error = useSignal<string | null>(null);
  const open = useSignal<string | null>(null);

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

  return (
    <div class="settings-section scheduled-page" data-testid="scheduled-page">
      <p class="page-lead">A scheduled job sends its prompt on a schedule, unattended, each run in a new session or in one that accumulates.</p>
      {error.value && <p class="form-error" role="alert">{error.value}</p>}
      {jobs.value && jobs.value.length === 0 && <p class="page-note">No scheduled job yet.</p>}
      <ul class="rows">
        {jobs.value?.map((j) => (
          <li key={j.id} class="row job-row" data-testid="job-row" data-name={j.name}>
            <div class="row-main">
              <span class="row-title">{j.name}</span>
              <span class="page-note" data-testid="job-schedule">{scheduleWords(j.schedule)}{j.enabled ? "" : " — paused"}</span>
              <span class="page-note">Next: {j.enabled ? when(j.next_fire_at) : "paused"} · Last: {j.last_run_status || "none yet"}</span>
            </div>
            <div class="row-actions">
              {perms.operate && <button class="btn btn-sm" data-testid="job-run" onClick={() => void act(j, "run")}>Run now</button>}
              {perms.operate && (j.enabled
                ? <button class="btn btn-sm" data-testid="job-pause" onClick={() => void act(j, "pause")}>Pause</button>
                : <button class="btn btn-sm" data-testid="job-resume" onClick={() => void act(j, "resume")}>Resume</button>)}
              <button class="btn btn-sm" data-testid="job-history" onClick={() => (open.value = open.value === j.id ? null : j.id)}>History</button>
              {perms.admin && <button class="btn btn-sm btn-danger" data-testid="job-delete" onClick={() => confirm(`Delete "${j.name}"?`) && void act(j, "delete")}>Delete</button>}
            </div>
            {open.value === j.id && <JobHistory id={j.id} lastRun={j.last_run_id} />}
          </li>
        ))}
      </ul>
      {perms.admin && <JobForm onSaved={load} />}
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
            <td>{r.status || "deleted"}</td>
            <td>{r.created_at && r.ended_at ? `${Math.round((Date.parse(r.ended_at) - Date.parse(r.created_at)) / 1000)} s` : "—"}</td>
            <td>${r.cost_usd.toFixed(4)}</td>
            <td>{r.status && <a href="#" onClick={(e) => { e.preventDefault(); store.selectSession(r.session_id); openPage(view, "chat"); }}>Open session</a>}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function JobForm(props: { onSaved: () => Promise<void> }) {
  const store = useStore();
  const [kind, setKind] = useState("cron");
  const [expr, setExpr] = useState("0 9 * * 1-5");
  const [tz, setTz] = useState(Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC");
  const [preview, setPreview] = useState<{ fires?: string[]; error?: string }>({});
  const [msg, setMsg] = useState<string | null>(null);

  useEffect(() => {
    const ctl = new AbortController();
    const q = new URLSearchParams({ kind, expr, tz: kind === "cron" ? tz : "" });
    const t = setTimeout(() => {
      void store.api.get<{ fires: string[] }>(`/api/schedules/preview?${q}`, ctl.signal).then((r) => {
        if (!ctl.signal.aborted) setPreview(r.ok ? { fires: r.value.fires } : { error: r.error.message });
      });
    }, 250);
    return () => { clearTimeout(t); ctl.abort(); };
  }, [kind, expr, tz]);

  const save = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const r = await store.api.post("/api/jobs", {
      name: String(form.get("name") ?? ""), prompt: String(form.get("prompt") ?? ""),
      schedule: { kind, expr, tz: kind === "cron" ? tz : "" },
      overlap: String(form.get("overlap")), missed: String(form.get("missed")), session: String(form.get("session")),
    });
    if (!r.ok) {
      setMsg(r.error.message);
      return;
    }
    setMsg(null);
    (e.currentTarget as HTMLFormElement | null)?.reset();
    await props.onSaved();
  };

  return (
    <form class="job-form" data-testid="job-form" onSubmit={(e) => void save(e)}>
      <h2 class="section-title">New scheduled job</h2>
      <label class="field"><span class="field-label">Name</span><input class="input" name="name" data-testid="job-name" required /></label>
      <label class="field"><span class="field-label">Prompt</span><textarea class="input" name="prompt" data-testid="job-prompt" required /></label>
      <label class="field"><span class="field-label">Schedule</span>
        <select class="input input-sm" value={kind} data-testid="job-kind" onChange={(e) => setKind(e.currentTarget.value)}>
          <option value="cron">cron</option><option value="interval">interval</option><option value="once">once</option>
        </select>
        <input class="input" value={expr} data-testid="job-expr" onInput={(e) => setExpr(e.currentTarget.value)} />
        {kind === "cron" && <input class="input input-sm" value={tz} data-testid="job-tz" onInput={(e) => setTz(e.currentTarget.value)} />}
      </label>
      {preview.error ? <p class="form-error" role="alert" data-testid="job-preview-error">{preview.error}</p> : (
        <ol class="page-note" data-testid="job-preview">{preview.fires?.map((f) => <li key={f}>{new Date(f).toLocaleString()}</li>)}</ol>
      )}
      <label class="field"><span class="field-label">While the last run is busy</span>
        <select class="input input-sm" name="overlap"><option value="skip">skip</option><option value="queue">queue</option><option value="replace">replace</option></select></label>
      <label class="field"><span class="field-label">Runs missed while down</span>
        <select class="input input-sm" name="missed"><option value="once">run once</option><option value="skip">skip</option></select></label>
      <label class="field"><span class="field-label">Session</span>
        <select class="input input-sm" name="session"><option value="new">a new one per run</option><option value="accumulate">one that accumulates</option></select></label>
      <button type="submit" class="btn btn-sm" data-testid="job-save" disabled={!!preview.error}>Create</button>
      {msg && <p class="form-error" role="alert">{msg}</p>}
    </form>
  );
}
