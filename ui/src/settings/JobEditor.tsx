// The one editor of a scheduled job, for a new job (POST) and an existing
// one (PATCH with only the fields that changed, so that a save does not
// undo what someone else changed meanwhile in a field left alone). The
// schedule is checked by the server as it is typed (debounced): its next
// five fire times and its words, or the error, inline, with Save disabled.

import { useEffect, useRef, useState } from "preact/hooks";
import { useStore } from "../state/context";
import type { ActionError } from "../state/contract";
import type { Profile } from "../state/types";
import { loadProfiles } from "./Profiles";
import { EXPIRIES, scheduleWords, type Job } from "./jobs";

interface Webhook { id: string; name: string; kind: string; enabled: boolean }

/** What the editor sends: the job's editable fields. */
interface Draft {
  name: string; prompt: string; profile_id: string; workspace: string;
  schedule: { kind: string; expr: string; tz: string };
  enabled: boolean; repeat_limit: number; overlap: string; missed: string; session: string;
  run_expiry_seconds: number; delivery: { notify: boolean; webhook_ids: string[] };
}

const localZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";

function draftOf(j: Job | null): Draft {
  if (!j) {
    return {
      name: "", prompt: "", profile_id: "", workspace: "", schedule: { kind: "cron", expr: "0 9 * * 1-5", tz: localZone() },
      enabled: true, repeat_limit: 0, overlap: "skip", missed: "once", session: "new", run_expiry_seconds: 0,
      delivery: { notify: false, webhook_ids: [] },
    };
  }
  return {
    name: j.name, prompt: j.prompt, profile_id: j.profile_id ?? "", workspace: j.workspace ?? "",
    schedule: { kind: j.schedule.kind, expr: j.schedule.expr, tz: j.schedule.tz ?? "" },
    enabled: j.enabled, repeat_limit: j.repeat_limit ?? 0, overlap: j.overlap, missed: j.missed, session: j.session,
    run_expiry_seconds: j.run_expiry_seconds ?? 0,
    delivery: { notify: !!j.delivery?.notify, webhook_ids: [...(j.delivery?.webhook_ids ?? [])] },
  };
}

/** The fields of `d` that differ from `from` (all of them for a new job). */
function changes(d: Draft, from: Draft | null): Partial<Draft> {
  if (!from) return { ...d };
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(d) as (keyof Draft)[]) {
    if (JSON.stringify(d[k]) !== JSON.stringify(from[k])) out[k] = d[k];
  }
  return out as Partial<Draft>;
}

/** Which field a refusal is about, so that it shows beside that field:
 * the server's details.field where it sends one, else the field its
 * message starts with (the jobs package names it first). */
function fieldOf(e: ActionError): string {
  const f = e.details?.field;
  if (typeof f === "string") return f;
  if (e.code === "invalid_schedule") return "schedule";
  if (e.code === "unknown_webhook") return "delivery";
  const m = /^(name|prompt|profile_id|workspace|overlap|missed|session|repeat_limit|run_expiry|delivery|webhook)/.exec(e.message);
  if (!m) return "";
  return m[1] === "run_expiry" ? "run_expiry_seconds" : m[1] === "webhook" ? "delivery" : m[1];
}

interface Preview { state: "checking" | "ok" | "error"; fires: string[]; words: string; error: string }

/** GET /api/schedules/preview for the schedule being typed, 250 ms after
 * the last keystroke; an older answer never overwrites a newer one. */
function usePreview(kind: string, expr: string, tz: string): Preview {
  const store = useStore();
  const [p, setP] = useState<Preview>({ state: "checking", fires: [], words: "", error: "" });
  useEffect(() => {
    const ctl = new AbortController();
    setP((old) => ({ ...old, state: old.state === "error" ? "error" : "checking" }));
    const q = new URLSearchParams({ kind, expr, tz: kind === "cron" ? tz : "" });
    const t = setTimeout(() => {
      void store.api.get<{ fires: string[]; words?: string }>(`/api/schedules/preview?${q}`, ctl.signal).then((r) => {
        if (ctl.signal.aborted) return;
        setP(r.ok
          ? { state: "ok", fires: r.value.fires, words: r.value.words || scheduleWords({ kind, expr, tz }), error: "" }
          : { state: "error", fires: [], words: "", error: r.error.message });
      });
    }, 250);
    return () => { clearTimeout(t); ctl.abort(); };
  }, [kind, expr, tz]);
  return p;
}

export function JobEditor(props: { job: Job | null; onSaved: () => Promise<void>; onClose: () => void }) {
  const store = useStore();
  const original = useRef(props.job ? draftOf(props.job) : null);
  const [d, setD] = useState<Draft>(() => draftOf(props.job));
  const [profiles, setProfiles] = useState<Profile[]>([]);
  const [hooks, setHooks] = useState<Webhook[] | null>(null);
  const [err, setErr] = useState<{ field: string; message: string } | null>(null);
  const [saving, setSaving] = useState(false);
  const first = useRef<HTMLInputElement>(null);
  const form = useRef<HTMLFormElement>(null);
  const preview = usePreview(d.schedule.kind, d.schedule.expr, d.schedule.tz);
  const uid = props.job?.id ?? "new";
  const id = (f: string) => `job-${uid}-${f}`;

  useEffect(() => {
    first.current?.focus();
    void loadProfiles(store).then((l) => l && setProfiles(l));
    void store.api.get<{ webhooks: Webhook[] }>("/api/webhooks").then((r) => setHooks(r.ok ? r.value.webhooks : []));
  }, []);

  const set = <K extends keyof Draft>(k: K, v: Draft[K]) => setD((o) => ({ ...o, [k]: v }));
  const setSched = (k: "kind" | "expr" | "tz", v: string) => setD((o) => ({ ...o, schedule: { ...o.schedule, [k]: v } }));
  const toggleHook = (hid: string, on: boolean) => setD((o) => ({
    ...o, delivery: { ...o.delivery, webhook_ids: on ? [...o.delivery.webhook_ids, hid] : o.delivery.webhook_ids.filter((x) => x !== hid) },
  }));

  const save = async (e: Event) => {
    e.preventDefault();
    if (preview.state === "error" || saving) return;
    const body = changes(d, original.current);
    // A new job's delivery is sent only when it delivers somewhere: the
    // default needs no saying, and a server from before delivery refuses
    // the field.
    if (!original.current && !d.delivery.notify && d.delivery.webhook_ids.length === 0) delete body.delivery;
    if (body.schedule && d.schedule.kind !== "cron") body.schedule = { ...d.schedule, tz: "" };
    setSaving(true);
    const r = props.job
      ? await store.api.patch<Job>(`/api/jobs/${props.job.id}`, body)
      : await store.api.post<Job>("/api/jobs", body);
    setSaving(false);
    if (!r.ok) {
      setErr({ field: fieldOf(r.error), message: r.error.message });
      // The keyboard goes to the field refused (Save was disabled while
      // saving, which dropped the focus).
      requestAnimationFrame(() => (form.current?.querySelector<HTMLElement>("[aria-invalid=true]") ?? form.current?.querySelector<HTMLElement>("[data-testid=job-save]"))?.focus());
      return;
    }
    setErr(null);
    await props.onSaved();
    props.onClose();
  };

  // The error beside its field; one the editor cannot place goes under Save.
  const errFor = (f: string) => err && err.field === f
    ? <p class="form-error" role="alert" id={id(f + "-err")} data-testid={`job-error-${f}`}>{err.message}</p> : null;
  const invalid = (f: string) => (err?.field === f ? { "aria-invalid": true, "aria-describedby": id(f + "-err") } : {});
  const placed = ["name", "prompt", "profile_id", "workspace", "schedule", "repeat_limit", "overlap", "missed", "session", "run_expiry_seconds", "delivery"];
  const expiries = EXPIRIES.some(([s]) => s === d.run_expiry_seconds) ? EXPIRIES : [...EXPIRIES, [d.run_expiry_seconds, `${d.run_expiry_seconds} s`] as [number, string]];
  const schedBad = preview.state === "error";

  return (
    <form ref={form} class="job-form" data-testid="job-form" aria-label={props.job ? `Edit ${props.job.name}` : "New scheduled job"}
      onSubmit={(e) => void save(e)} onKeyDown={(e) => e.key === "Escape" && (e.preventDefault(), props.onClose())}>
      <h2 class="section-title">{props.job ? `Edit “${props.job.name}”` : "New scheduled job"}</h2>
      <label class="field"><span class="field-label">Name</span>
        <input ref={first} class="input" name="name" data-testid="job-name" required value={d.name} {...invalid("name")}
          onInput={(e) => set("name", e.currentTarget.value)} /></label>
      {errFor("name")}
      <label class="field"><span class="field-label">Prompt</span>
        <textarea class="input job-prompt" name="prompt" data-testid="job-prompt" required value={d.prompt} {...invalid("prompt")}
          onInput={(e) => set("prompt", e.currentTarget.value)} /></label>
      {errFor("prompt")}
      <div class="job-form-row">
        <label class="field"><span class="field-label">Profile</span>
          <select class="input" data-testid="job-profile" value={d.profile_id} {...invalid("profile_id")}
            onChange={(e) => set("profile_id", e.currentTarget.value)}>
            <option value="">The default</option>
            {profiles.map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}
            {d.profile_id && !profiles.some((p) => p.id === d.profile_id) && <option value={d.profile_id}>{d.profile_id}</option>}
          </select></label>
        <label class="field"><span class="field-label">Workspace</span>
          <input class="input mono" data-testid="job-workspace" value={d.workspace} placeholder="the server's default" {...invalid("workspace")}
            onInput={(e) => set("workspace", e.currentTarget.value)} /></label>
      </div>
      {errFor("profile_id")}{errFor("workspace")}

      <fieldset class="job-fieldset">
        <legend class="field-label">Schedule</legend>
        <div class="job-form-row">
          <label class="field job-kind"><span class="field-label">Kind</span>
            <select class="input" value={d.schedule.kind} data-testid="job-kind" onChange={(e) => setSched("kind", e.currentTarget.value)}>
              <option value="cron">cron</option><option value="interval">interval</option><option value="once">once</option>
            </select></label>
          <label class="field job-expr"><span class="field-label">{d.schedule.kind === "cron" ? "Expression" : d.schedule.kind === "interval" ? "Every" : "At (RFC 3339)"}</span>
            <input class="input mono" value={d.schedule.expr} data-testid="job-expr" aria-invalid={schedBad || err?.field === "schedule"}
              aria-describedby={id("schedule-preview")} spellcheck={false} autocomplete="off"
              placeholder={d.schedule.kind === "cron" ? "0 9 * * 1-5" : d.schedule.kind === "interval" ? "every 2h" : "2026-12-01T09:00:00Z"}
              onInput={(e) => setSched("expr", e.currentTarget.value)} /></label>
          {d.schedule.kind === "cron" && (
            <label class="field job-tz"><span class="field-label">Time zone</span>
              <input class="input" value={d.schedule.tz} data-testid="job-tz" spellcheck={false} autocomplete="off"
                onInput={(e) => setSched("tz", e.currentTarget.value)} /></label>
          )}
        </div>
        <div class="job-preview-area" id={id("schedule-preview")} aria-live="polite">
          {schedBad ? <p class="form-error" data-testid="job-preview-error">{preview.error}</p> : (
            <>
              <p class="job-words" data-testid="job-preview-words">{preview.words || "…"}</p>
              <ol class="page-note job-fires" data-testid="job-preview" aria-label="The next five fire times">
                {preview.fires.map((f) => <li key={f}>{new Date(f).toLocaleString()}</li>)}
              </ol>
            </>
          )}
        </div>
        {errFor("schedule")}
      </fieldset>

      <div class="job-form-row">
        <label class="field"><span class="field-label">Repeat limit</span>
          <input class="input" type="number" min={0} step={1} data-testid="job-repeat" value={d.repeat_limit} {...invalid("repeat_limit")}
            aria-describedby={id("repeat-hint")} onInput={(e) => set("repeat_limit", Math.max(0, Math.floor(Number(e.currentTarget.value) || 0)))} />
          <span class="page-note" id={id("repeat-hint")}>0: no limit{props.job ? ` (${props.job.fire_count} fired so far)` : ""}</span></label>
        <label class="field"><span class="field-label">Run expiry</span>
          <select class="input" data-testid="job-expiry" value={String(d.run_expiry_seconds)} {...invalid("run_expiry_seconds")}
            onChange={(e) => set("run_expiry_seconds", Number(e.currentTarget.value))}>
            {expiries.map(([s, w]) => <option key={s} value={String(s)}>{w}</option>)}
          </select></label>
      </div>
      {errFor("repeat_limit")}{errFor("run_expiry_seconds")}
      <div class="job-form-row">
        <label class="field"><span class="field-label">While the last run is busy</span>
          <select class="input" data-testid="job-overlap" value={d.overlap} onChange={(e) => set("overlap", e.currentTarget.value)}>
            <option value="skip">skip this one</option><option value="queue">queue it</option><option value="replace">replace the busy run</option>
          </select></label>
        <label class="field"><span class="field-label">Runs missed while down</span>
          <select class="input" data-testid="job-missed" value={d.missed} onChange={(e) => set("missed", e.currentTarget.value)}>
            <option value="once">run once</option><option value="skip">skip</option>
          </select></label>
        <label class="field"><span class="field-label">Session</span>
          <select class="input" data-testid="job-session" value={d.session} onChange={(e) => set("session", e.currentTarget.value)}>
            <option value="new">a new one per run</option><option value="accumulate">one that accumulates</option>
          </select></label>
      </div>
      {errFor("overlap")}{errFor("missed")}{errFor("session")}
      <label class="job-check"><input type="checkbox" data-testid="job-enabled" checked={d.enabled}
        onChange={(e) => set("enabled", e.currentTarget.checked)} /> Enabled (runs on its schedule)</label>

      <fieldset class="job-fieldset" data-testid="job-delivery">
        <legend class="field-label">Delivery of each run's result</legend>
        <label class="job-check"><input type="checkbox" data-testid="job-notify" checked={d.delivery.notify}
          onChange={(e) => set("delivery", { ...d.delivery, notify: e.currentTarget.checked })} /> Browser notification</label>
        {hooks && hooks.length === 0 && (
          <p class="page-note" data-testid="job-no-webhooks">No webhook is configured. <a href="#settings/webhooks">Add one in Webhooks</a> to post results to another system.</p>
        )}
        {hooks && hooks.length > 0 && (
          <ul class="job-hooks" aria-label="Webhooks">
            {hooks.map((h) => (
              <li key={h.id}><label class="job-check"><input type="checkbox" data-testid="job-webhook" data-id={h.id}
                checked={d.delivery.webhook_ids.includes(h.id)} onChange={(e) => toggleHook(h.id, e.currentTarget.checked)} />
                {" "}{h.name} <span class="page-note">({h.kind}{h.enabled ? "" : ", disabled"})</span></label></li>
            ))}
          </ul>
        )}
        {errFor("delivery")}
      </fieldset>

      <div class="job-form-actions">
        <button type="submit" class="btn btn-sm btn-primary" data-testid="job-save" disabled={schedBad || saving}
          aria-describedby={schedBad ? id("schedule-preview") : undefined}>{props.job ? "Save" : "Create"}</button>
        <button type="button" class="btn btn-sm" data-testid="job-cancel" onClick={props.onClose}>Cancel</button>
      </div>
      {err && !placed.includes(err.field) && <p class="form-error" role="alert" data-testid="job-error">{err.message}</p>}
    </form>
  );
}
