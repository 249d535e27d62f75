// Webhooks and triggers (issue 17, h17-hooks). Webhooks post a run's end
// to another system (signed; retried on 5xx); triggers let another system
// start a run with a signed POST. A secret is shown once, when it is made.
// Admins see, test, disable and delete webhooks (their URLs can hold a token); everyone
// who reads sees triggers.

import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { useStore } from "../state/context";

interface Webhook {
  id: string; name: string; url: string; kind: string; events: string[];
  enabled: boolean; signed: boolean; secret?: string;
}
interface Delivery {
  id: string; event: string; run_id?: string; attempt: number; state: string;
  status_code?: number; error?: string; duration_ms: number; created_at: string;
}
interface Trigger {
  id: string; name: string; prompt_template: string; session_policy: string;
  enabled: boolean; url: string; secret?: string;
}

/** A secret shown once, with a reminder that it will not be shown again. */
function SecretOnce(props: { secret: string }) {
  return (
    <p class="page-note hook-secret" role="status" data-testid="hook-secret">
      Secret (shown once; copy it now): <code>{props.secret}</code>
    </p>
  );
}

export function WebhooksPage() {
  const store = useStore();
  const hooks = useSignal<Webhook[] | null>(null);
  const error = useSignal<string | null>(null);
  const secret = useSignal<string | null>(null);
  const open = useSignal<string | null>(null);
  const log = useSignal<Delivery[]>([]);

  const load = async () => {
    const r = await store.api.get<{ webhooks: Webhook[] }>("/api/webhooks");
    if (!r.ok) {
      error.value = r.error.message;
      return;
    }
    hooks.value = r.value.webhooks;
    error.value = null;
  };
  const loadLog = async (id: string) => {
    const r = await store.api.get<{ deliveries: Delivery[] }>(`/api/webhooks/${id}/deliveries`);
    log.value = r.ok ? r.value.deliveries : [];
  };
  useEffect(() => void load(), []);

  const create = async (e: Event) => {
    e.preventDefault();
    // Kept now: after an await the event no longer has a currentTarget.
    const el = e.currentTarget as HTMLFormElement;
    const form = new FormData(el);
    const r = await store.api.post<Webhook>("/api/webhooks", {
      name: String(form.get("name") ?? ""), url: String(form.get("url") ?? ""), kind: String(form.get("kind") ?? "json"),
    });
    if (!r.ok) {
      error.value = r.error.message;
      return;
    }
    el.reset();
    secret.value = r.value.secret ?? null;
    await load();
  };
  const test = async (id: string) => {
    const r = await store.api.post(`/api/webhooks/${id}/test`);
    if (!r.ok) error.value = r.error.message;
    open.value = id;
    // The test is sent in the background: its outcome shows in a moment.
    setTimeout(() => void loadLog(id), 1500);
  };
  const toggle = async (h: Webhook) => {
    const r = await store.api.patch(`/api/webhooks/${h.id}`, { enabled: !h.enabled });
    if (!r.ok) error.value = r.error.message;
    await load();
  };
  const remove = async (id: string) => {
    const r = await store.api.del(`/api/webhooks/${id}`);
    if (!r.ok) error.value = r.error.message;
    await load();
  };

  return (
    <div class="settings-section hooks-page" data-testid="webhooks-page">
      <p class="page-lead">
        When a run completes, fails or expires, each webhook gets a POST: signed JSON (X-Caduceus-Signature), or a Slack message.
        A 5xx or a network error is retried four times; the server reaches whatever address you give it, internal ones included.
      </p>
      {error.value && <p class="form-error" role="alert">{error.value}</p>}
      {secret.value && <SecretOnce secret={secret.value} />}
      <form class="form-row hook-form" data-testid="webhook-form" onSubmit={(e) => void create(e)}>
        <label class="field"><span class="field-label">Name</span><input class="input input-sm" name="name" required data-testid="webhook-name" /></label>
        <label class="field hook-url"><span class="field-label">URL</span><input class="input input-sm" name="url" type="url" required placeholder="https://" data-testid="webhook-url" /></label>
        <label class="field"><span class="field-label">Kind</span>
          <select class="input input-sm" name="kind"><option value="json">JSON (signed)</option><option value="slack">Slack</option></select>
        </label>
        <button type="submit" class="btn btn-sm" data-testid="webhook-add">Add webhook</button>
      </form>
      <ul class="rows">
        {hooks.value?.map((h) => (
          <li key={h.id} class="row" data-testid="webhook-row" data-name={h.name}>
            <div class="row-main">
              <span class="row-title">{h.name}{h.enabled ? "" : " (disabled)"}</span>
              <span class="row-sub">{h.kind} · {h.url} · {h.events.join(", ")}</span>
              {open.value === h.id && (
                <ul class="hook-log" data-testid="delivery-log">
                  {log.value.length === 0 && <li class="page-note">No delivery yet.</li>}
                  {log.value.map((d) => (
                    <li key={d.id} class={"hook-attempt hook-" + d.state} data-testid="delivery" data-state={d.state}>
                      {d.event} · attempt {d.attempt} · {d.state}{d.status_code ? ` (${d.status_code})` : ""}
                      {d.error ? ` · ${d.error}` : ""} · {d.duration_ms} ms
                    </li>
                  ))}
                </ul>
              )}
            </div>
            <div class="row-actions">
              <button type="button" class="btn btn-sm" onClick={() => void test(h.id)} data-testid="webhook-test">Test</button>
              <button type="button" class="btn btn-sm" onClick={() => void toggle(h)} data-testid="webhook-toggle">{h.enabled ? "Disable" : "Enable"}</button>
              <button type="button" class="btn btn-sm" onClick={() => {
                open.value = open.peek() === h.id ? null : h.id;
                if (open.value) void loadLog(h.id);
              }}>Deliveries</button>
              <button type="button" class="btn btn-sm" onClick={() => void remove(h.id)}>Delete</button>
            </div>
          </li>
        ))}
      </ul>
    </div>
  );
}

export function TriggersPage() {
  const store = useStore();
  const admin = store.account.permissions.value.admin;
  const triggers = useSignal<Trigger[] | null>(null);
  const error = useSignal<string | null>(null);
  const secret = useSignal<string | null>(null);

  const load = async () => {
    const r = await store.api.get<{ triggers: Trigger[] }>("/api/triggers");
    if (!r.ok) {
      error.value = r.error.message;
      return;
    }
    triggers.value = r.value.triggers;
    error.value = null;
  };
  useEffect(() => void load(), []);

  const create = async (e: Event) => {
    e.preventDefault();
    // Kept now: after an await the event no longer has a currentTarget.
    const el = e.currentTarget as HTMLFormElement;
    const form = new FormData(el);
    const r = await store.api.post<Trigger>("/api/triggers", {
      name: String(form.get("name") ?? ""), prompt_template: String(form.get("prompt_template") ?? ""),
      session_policy: String(form.get("session_policy") ?? "new"),
    });
    if (!r.ok) {
      error.value = r.error.message;
      return;
    }
    el.reset();
    secret.value = r.value.secret ?? null;
    await load();
  };
  const toggle = async (t: Trigger) => {
    const r = await store.api.patch(`/api/triggers/${t.id}`, { enabled: !t.enabled });
    if (!r.ok) error.value = r.error.message;
    await load();
  };
  const rotate = async (t: Trigger) => {
    const r = await store.api.patch<Trigger>(`/api/triggers/${t.id}`, { rotate_secret: true });
    if (!r.ok) error.value = r.error.message;
    else secret.value = r.value.secret ?? null;
    await load();
  };
  const remove = async (id: string) => {
    const r = await store.api.del(`/api/triggers/${id}`);
    if (!r.ok) error.value = r.error.message;
    await load();
  };

  return (
    <div class="settings-section hooks-page" data-testid="triggers-page">
      <p class="page-lead">
        Another system starts a run by POSTing JSON to a trigger's address, signed with its secret; the prompt template
        is filled from the body ({"{{.field}}"}). Unsigned, stale or replayed calls start nothing.
      </p>
      {error.value && <p class="form-error" role="alert">{error.value}</p>}
      {secret.value && <SecretOnce secret={secret.value} />}
      {admin && (
        <form class="form-row hook-form" data-testid="trigger-form" onSubmit={(e) => void create(e)}>
          <label class="field"><span class="field-label">Name</span><input class="input input-sm" name="name" required data-testid="trigger-name" /></label>
          <label class="field hook-url"><span class="field-label">Prompt template</span>
            <input class="input input-sm" name="prompt_template" required placeholder="Deploy {{.ref}}" data-testid="trigger-template" />
          </label>
          <label class="field"><span class="field-label">Sessions</span>
            <select class="input input-sm" name="session_policy">
              <option value="new">A new one per call</option><option value="accumulate">One for every call</option>
            </select>
          </label>
          <button type="submit" class="btn btn-sm" data-testid="trigger-add">Add trigger</button>
        </form>
      )}
      <ul class="rows">
        {triggers.value?.map((t) => (
          <li key={t.id} class="row" data-testid="trigger-row" data-name={t.name}>
            <div class="row-main">
              <span class="row-title">{t.name}{t.enabled ? "" : " (disabled)"}</span>
              <span class="row-sub">POST {location.origin + t.url} · {t.session_policy} · {t.prompt_template}</span>
            </div>
            {admin && (
              <div class="row-actions">
                <button type="button" class="btn btn-sm" onClick={() => void toggle(t)} data-testid="trigger-toggle">{t.enabled ? "Disable" : "Enable"}</button>
                <button type="button" class="btn btn-sm" onClick={() => void rotate(t)} data-testid="trigger-rotate">New secret</button>
                <button type="button" class="btn btn-sm" onClick={() => void remove(t.id)}>Delete</button>
              </div>
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}
