// The Providers section: every model provider with where it comes from
// (the environment and config.json are read-only here; those added here
// can be edited, tested and removed). The API key field is write-only:
// the page only ever shows the masked hint the server sends.

import { useSignal } from "@preact/signals";
import { useEffect, useRef } from "preact/hooks";
import { useStore } from "../state/context";
import { ConfirmDialog, trapFocus } from "../shell/Dialog";
import { SOURCE_TEXT, type ProviderInput, type ProviderView } from "./providerTypes";

export function ProvidersPage() {
  const store = useStore();
  const admin = store.account.permissions.value.admin;
  const list = useSignal<ProviderView[] | null>(null);
  const error = useSignal<string | null>(null);
  const editing = useSignal<ProviderView | "new" | null>(null);
  const removing = useSignal<ProviderView | null>(null);

  const load = async () => {
    const r = await store.api.get<{ providers: ProviderView[] }>("/api/providers");
    if (r.ok) {
      list.value = r.value.providers;
      error.value = null;
    } else error.value = r.error.message;
  };
  useEffect(() => void load(), []);

  const remove = async (p: ProviderView) => {
    removing.value = null;
    const r = await store.api.del(`/api/providers/${encodeURIComponent(p.id!)}`);
    if (!r.ok) error.value = r.error.message;
    await load();
  };

  return (
    <div class="settings-section" data-testid="providers-page">
      <p class="page-lead">
        Model providers: OpenAI-compatible servers (OpenAI, OpenRouter, Ollama, vLLM, llama.cpp, LM Studio) and Anthropic.
        Those set by the environment or config.json are shown read-only. API keys are stored encrypted and never shown again.
      </p>
      {admin && (
        <div>
          <button type="button" class="btn btn-primary" data-testid="provider-add" onClick={() => (editing.value = "new")}>Add provider</button>
        </div>
      )}
      {error.value && <p class="form-error" role="alert" data-testid="providers-error">{error.value}</p>}
      {list.value === null ? (
        <p class="page-note">Loading…</p>
      ) : list.value.length === 0 ? (
        <p class="page-note" data-testid="providers-empty">No provider yet: runs use the offline demo model.</p>
      ) : (
        <ul class="rows" data-testid="provider-list">
          {list.value.map((p) => (
            <ProviderRow key={p.id ?? p.name} p={p} admin={admin} onEdit={() => (editing.value = p)} onRemove={() => (removing.value = p)} />
          ))}
        </ul>
      )}
      {editing.value && (
        <ProviderDialog
          initial={editing.value === "new" ? null : editing.value}
          onClose={() => (editing.value = null)}
          onSaved={() => { editing.value = null; void load(); }}
        />
      )}
      {removing.value && (
        <ConfirmDialog
          title={`Remove provider “${removing.value.name}”?`}
          body={<>Sessions using its models will fail to start runs until they pick another model. Its stored API key is deleted.</>}
          confirmLabel="Remove provider"
          confirmTestId="confirm-remove-provider"
          cancelTestId="cancel-remove-provider"
          onCancel={() => (removing.value = null)}
          onConfirm={() => void remove(removing.value!)}
        />
      )}
    </div>
  );
}

function ProviderRow({ p, admin, onEdit, onRemove }: { p: ProviderView; admin: boolean; onEdit: () => void; onRemove: () => void }) {
  const store = useStore();
  const testing = useSignal(false);
  const result = useSignal<{ ok: boolean; text: string; models?: string[] } | null>(null);
  const test = async () => {
    testing.value = true;
    result.value = null;
    const r = await store.api.post<{ models: string[] }>(`/api/providers/${encodeURIComponent(p.id!)}/test`);
    testing.value = false;
    result.value = r.ok
      ? { ok: true, text: r.value.models.length ? `${r.value.models.length} model${r.value.models.length === 1 ? "" : "s"}` : "reachable, no models listed", models: r.value.models }
      : { ok: false, text: r.error.message };
  };
  return (
    <li class={"row provider-row" + (p.enabled ? "" : " row-off")} data-testid="provider-row" data-name={p.name} data-source={p.source}>
      <div class="row-main">
        <span class="row-title">{p.name}</span>
        <span class="row-sub">
          <span class={"source-badge source-" + p.source} data-testid="provider-source" title={`Set by: ${SOURCE_TEXT[p.source] ?? p.source}`}>
            {p.source === "database" ? "database" : p.source}
          </span>
          <span>{p.kind === "anthropic" ? "Anthropic" : "OpenAI-compatible"}</span>
          {p.base_url && <code class="provider-url" title={p.base_url}>{p.base_url}</code>}
          {!p.enabled && <span>disabled</span>}
        </span>
        <span class="row-sub">
          key: {p.has_key ? <code class="token-prefix" data-testid="provider-key">{p.api_key || "set"}</code> : <span data-testid="provider-key">none</span>}
          {p.default_model && <span>default model {p.default_model}</span>}
          {p.headers && p.headers.length > 0 && <span data-testid="provider-headers">headers {p.headers.join(", ")}</span>}
        </span>
        {p.error && <span class="form-error" data-testid="provider-error">{p.error}</span>}
      </div>
      <div class="row-actions">
        {p.read_only ? (
          <span class="row-state" title="Change it where it is set: the environment or config.json">read-only</span>
        ) : admin ? (
          <>
            <button type="button" class="btn btn-sm" data-testid="provider-test" disabled={testing.value} onClick={() => void test()}>{testing.value ? "Testing…" : "Test"}</button>
            <button type="button" class="btn btn-sm" data-testid="provider-edit" onClick={onEdit}>Edit</button>
            <button type="button" class="btn btn-sm btn-danger-quiet" data-testid="provider-remove" onClick={onRemove}>Remove</button>
          </>
        ) : null}
      </div>
      {result.value && (
        <div class={"provider-test " + (result.value.ok ? "ok" : "bad")} role="status" data-testid="provider-test-result" data-ok={String(result.value.ok)}>
          <span>{result.value.ok ? "Connected: " : "Failed: "}{result.value.text}</span>
          {result.value.models && result.value.models.length > 0 && (
            <ul class="provider-models" data-testid="provider-models">
              {result.value.models.map((m) => <li key={m}><code>{m}</code></li>)}
            </ul>
          )}
        </div>
      )}
    </li>
  );
}

function ProviderDialog({ initial, onClose, onSaved }: { initial: ProviderView | null; onClose: () => void; onSaved: () => void }) {
  const store = useStore();
  const box = useRef<HTMLDivElement>(null);
  const form = useRef<HTMLFormElement>(null);
  const first = useRef<HTMLInputElement>(null);
  const kind = useSignal<string>(initial?.kind ?? "openai");
  const error = useSignal<string | null>(null);
  const busy = useSignal(false);
  useEffect(() => {
    first.current?.focus();
    return trapFocus(box.current!, onClose);
  }, []);

  const submit = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(form.current!);
    const str = (k: string) => String(f.get(k) ?? "").trim();
    const body: ProviderInput = {
      name: str("name"), kind: kind.peek(), base_url: str("base_url"), default_model: str("default_model"),
      models: str("models").split(/[\s,]+/).filter(Boolean), enabled: f.get("enabled") === "on",
    };
    const key = String(f.get("api_key") ?? "");
    // An empty key field keeps the stored key; "remove" clears it.
    if (key !== "") body.api_key = key;
    if (f.get("remove_key") === "on") body.api_key = "";
    // Headers, one "Name: value" a line: written whole or not at all.
    const lines = String(f.get("headers") ?? "").split("\n").map((l) => l.trim()).filter(Boolean);
    if (lines.length > 0) {
      const h: Record<string, string> = {};
      for (const l of lines) {
        const i = l.indexOf(":");
        if (i <= 0) {
          error.value = "Write each header as Name: value, one a line.";
          return;
        }
        h[l.slice(0, i).trim()] = l.slice(i + 1).trim();
      }
      body.headers = h;
    }
    if (f.get("remove_headers") === "on") body.headers = {};
    busy.value = true;
    const r = initial?.id
      ? await store.api.patch(`/api/providers/${encodeURIComponent(initial.id)}`, body)
      : await store.api.post("/api/providers", body);
    busy.value = false;
    if (!r.ok) {
      error.value = r.error.message;
      return;
    }
    onSaved();
  };

  return (
    <div class="modal-backdrop" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div ref={box} class="modal provider-dialog" role="dialog" aria-modal="true" aria-labelledby="prov-title" data-testid="provider-dialog">
      <form ref={form} class="settings-form" onSubmit={submit} noValidate autocomplete="off">
        <h2 id="prov-title" class="modal-title">{initial ? `Edit ${initial.name}` : "Add a provider"}</h2>
        <label class="field">
          <span class="field-label">Kind</span>
          <select class="input" name="kind" data-testid="provider-kind" value={kind.value} onChange={(e) => (kind.value = e.currentTarget.value)}>
            <option value="openai">OpenAI-compatible (OpenAI, OpenRouter, Ollama, vLLM, llama.cpp, LM Studio)</option>
            <option value="anthropic">Anthropic</option>
          </select>
        </label>
        <label class="field">
          <span class="field-label">Name</span>
          <input ref={first} class="input" name="name" data-testid="provider-name" maxLength={64} defaultValue={initial?.name ?? ""} placeholder="e.g. local (models are local/<model>)" />
        </label>
        <label class="field">
          <span class="field-label">Base URL</span>
          <input class="input mono" name="base_url" data-testid="provider-base-url" inputMode="url" defaultValue={initial?.base_url ?? ""}
            placeholder={kind.value === "anthropic" ? "empty: api.anthropic.com" : "e.g. http://127.0.0.1:11434/v1 (empty: api.openai.com)"} />
        </label>
        <label class="field">
          <span class="field-label">API key {initial?.has_key && <span class="setting-fixed">(stored: {initial.api_key || "set"}; leave empty to keep it)</span>}</span>
          <input class="input mono" name="api_key" type="password" data-testid="provider-api-key" autocomplete="new-password" spellcheck={false} placeholder={initial?.has_key ? "unchanged" : "optional for local servers"} />
        </label>
        {initial?.has_key && (
          <label class="check"><input type="checkbox" name="remove_key" data-testid="provider-remove-key" /> Remove the stored key</label>
        )}
        <label class="field">
          <span class="field-label">Default model</span>
          <input class="input mono" name="default_model" data-testid="provider-default-model" defaultValue={initial?.default_model ?? ""} placeholder="empty: the first listed" />
        </label>
        <label class="field">
          <span class="field-label">Models</span>
          <input class="input mono" name="models" data-testid="provider-models-input" defaultValue={(initial?.models ?? []).join(", ")} placeholder="empty: ask the server" />
        </label>
        <label class="field">
          <span class="field-label">Extra headers {initial?.headers?.length ? <span class="setting-fixed">(stored: {initial.headers.join(", ")}; values hidden; leave empty to keep them, or write them all anew)</span> : null}</span>
          <textarea class="input mono provider-headers-input" name="headers" rows={2} data-testid="provider-headers-input" spellcheck={false}
            placeholder={"optional, one a line, e.g.\nHTTP-Referer: https://example.org"} />
        </label>
        {initial?.headers && initial.headers.length > 0 && (
          <label class="check"><input type="checkbox" name="remove_headers" data-testid="provider-remove-headers" /> Remove the stored headers</label>
        )}
        <label class="check"><input type="checkbox" name="enabled" data-testid="provider-enabled" defaultChecked={initial?.enabled ?? true} /> Enabled</label>
        {error.value && <p class="form-error" role="alert" data-testid="provider-dialog-error">{error.value}</p>}
        <div class="modal-actions">
          <button type="button" class="btn" data-testid="provider-cancel" onClick={onClose}>Cancel</button>
          <button type="submit" class="btn btn-primary" data-testid="provider-save" disabled={busy.value}>{busy.value ? "Saving…" : "Save"}</button>
        </div>
      </form>
      </div>
    </div>
  );
}
