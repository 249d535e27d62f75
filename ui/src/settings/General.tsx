// The General section: the console's settings (default model, approval
// mode and timeout, retries, notifications). A value the environment,
// the command line or config.json fixes is shown as such and cannot be
// changed here.

import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { useStore } from "../state/context";
import { SOURCE_TEXT, type Notifications, type SettingsView } from "./providerTypes";

interface Model { ref: string }
interface ModelProvider { name: string; models: Model[] }

export function GeneralPage() {
  const store = useStore();
  const admin = store.account.permissions.value.admin;
  const view = useSignal<SettingsView | null>(null);
  const refs = useSignal<string[]>([]);
  const error = useSignal<string | null>(null);
  const saved = useSignal(false);
  const busy = useSignal(false);

  const load = async () => {
    const r = await store.api.get<SettingsView>("/api/settings");
    if (r.ok) view.value = r.value;
    else error.value = r.error.message;
    const m = await store.api.get<{ providers: ModelProvider[] }>("/api/models");
    if (m.ok) refs.value = m.value.providers.flatMap((p) => p.models.map((x) => x.ref));
  };
  useEffect(() => void load(), []);

  const v = view.value;
  if (!v) return <div class="settings-section" data-testid="general-page">{error.value ? <p class="form-error" role="alert">{error.value}</p> : <p class="page-note">Loading…</p>}</div>;
  const fixed = (k: string) => v.fixed[k];
  const ro = (k: string) => !admin || !!fixed(k);
  const note = (k: string) => {
    const f = fixed(k);
    return f ? <span class="setting-fixed" data-testid={`setting-fixed-${k}`}>Set by the {SOURCE_TEXT[f.source] ?? f.source}: {JSON.stringify(f.value)} (read-only)</span> : null;
  };
  const eff = v.effective;

  const submit = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    const body: Record<string, unknown> = {};
    const put = (k: string, val: unknown, dflt: unknown) => {
      if (ro(k)) return;
      // A value equal to the default is stored as no value, so a later
      // change of the default reaches it.
      body[k] = JSON.stringify(val) === JSON.stringify(dflt) && !(k in v.values) ? undefined : val;
      if (body[k] === undefined) delete body[k];
    };
    put("default_model", String(f.get("default_model") ?? "").trim(), v.defaults.default_model);
    put("approval_mode", String(f.get("approval_mode")), v.defaults.approval_mode);
    put("approval_timeout", String(f.get("approval_timeout") ?? "").trim() || "0s", v.defaults.approval_timeout);
    put("max_retries", Number(f.get("max_retries")), v.defaults.max_retries);
    put("retry_backoff", String(f.get("retry_backoff") ?? "").trim() || "0s", v.defaults.retry_backoff);
    const n: Notifications = {
      approvals: f.get("n_approvals") === "on", questions: f.get("n_questions") === "on",
      run_failed: f.get("n_run_failed") === "on", run_done: f.get("n_run_done") === "on",
    };
    put("notifications", n, v.defaults.notifications);
    if (Object.keys(body).length === 0) {
      saved.value = true;
      return;
    }
    busy.value = true;
    const r = await store.api.patch<SettingsView>("/api/settings", body);
    busy.value = false;
    if (!r.ok) {
      error.value = r.error.message;
      saved.value = false;
      return;
    }
    error.value = null;
    view.value = r.value;
    saved.value = true;
  };

  return (
    <div class="settings-section" data-testid="general-page">
      <p class="page-lead">Defaults for new runs. Values set by the environment, the command line or config.json win and are shown read-only.</p>
      <form class="card settings-form" onSubmit={submit} noValidate onInput={() => (saved.value = false)} data-testid="general-form">
        <label class="setting">
          <span class="field-label">Default model</span>
          <input class="input mono" name="default_model" list="general-models" data-testid="setting-default_model" disabled={ro("default_model")}
            defaultValue={eff.default_model} placeholder="empty: the first configured provider's" />
          <datalist id="general-models">{refs.value.map((r) => <option key={r} value={r} />)}</datalist>
          {note("default_model")}
        </label>
        <label class="setting">
          <span class="field-label">Approval mode</span>
          <select class="input" name="approval_mode" data-testid="setting-approval_mode" disabled={ro("approval_mode")} defaultValue={eff.approval_mode}>
            <option value="manual">manual — ask before every command and edit</option>
            <option value="smart">smart — ask for what looks risky</option>
            <option value="off">off — never ask</option>
          </select>
          {note("approval_mode")}
        </label>
        <label class="setting">
          <span class="field-label">Approval timeout</span>
          <input class="input mono" name="approval_timeout" data-testid="setting-approval_timeout" disabled={ro("approval_timeout")} defaultValue={eff.approval_timeout} placeholder="0s: wait for ever" />
          {note("approval_timeout")}
        </label>
        <label class="setting">
          <span class="field-label">Automatic retries of a failed run</span>
          <input class="input" name="max_retries" type="number" min={0} max={100} data-testid="setting-max_retries" disabled={ro("max_retries")} defaultValue={String(eff.max_retries)} />
          {note("max_retries")}
        </label>
        <label class="setting">
          <span class="field-label">Wait before the first retry</span>
          <input class="input mono" name="retry_backoff" data-testid="setting-retry_backoff" disabled={ro("retry_backoff")} defaultValue={eff.retry_backoff} placeholder="e.g. 2s" />
          {note("retry_backoff")}
        </label>
        <fieldset class="setting" disabled={ro("notifications")}>
          <legend class="field-label">Notify me of</legend>
          <div class="setting-checks">
            <label class="check"><input type="checkbox" name="n_approvals" data-testid="setting-n-approvals" defaultChecked={eff.notifications.approvals} /> approvals</label>
            <label class="check"><input type="checkbox" name="n_questions" defaultChecked={eff.notifications.questions} /> questions</label>
            <label class="check"><input type="checkbox" name="n_run_failed" defaultChecked={eff.notifications.run_failed} /> failed runs</label>
            <label class="check"><input type="checkbox" name="n_run_done" defaultChecked={eff.notifications.run_done} /> finished runs</label>
          </div>
          {note("notifications")}
        </fieldset>
        {error.value && <p class="form-error" role="alert" data-testid="general-error">{error.value}</p>}
        {admin && (
          <div class="form-row">
            <button type="submit" class="btn btn-primary" data-testid="general-save" disabled={busy.value}>{busy.value ? "Saving…" : "Save"}</button>
            {saved.value && <span class="settings-saved" role="status" data-testid="general-saved">Saved</span>}
          </div>
        )}
      </form>
    </div>
  );
}
