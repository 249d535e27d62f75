// Profiles (issue 16, h16-profiles): the agents of this server. The list
// shows each with its colour; a profile is created, edited, duplicated
// and deleted here (admins), and a session can be started with it.
// Anyone who may read sees the list.

import { useSignal } from "@preact/signals";
import { useEffect, useState } from "preact/hooks";
import { useStore } from "../state/context";
import type { Store } from "../state/contract";
import type { Profile } from "../state/types";
import { ConfirmDialog } from "../shell/Dialog";
import { openPage, useView } from "../shell/view";

export interface ToolInfo { name: string; description: string }

export const APPROVAL_TEXT: Record<Profile["approval_mode"], string> = {
  "": "Server default",
  manual: "Manual — ask before every command",
  smart: "Smart — ask before risky commands",
  off: "Off — never ask",
};

/** Fetches the live profiles; null while loading or on failure. */
export async function loadProfiles(store: Store): Promise<Profile[] | null> {
  const r = await store.api.get<{ profiles: Profile[] }>("/api/profiles");
  return r.ok ? r.value.profiles : null;
}

export function ProfilesPage() {
  const store = useStore();
  const admin = store.account.permissions.value.admin;
  const operate = store.account.permissions.value.operate;
  const profiles = useSignal<Profile[] | null>(null);
  const tools = useSignal<ToolInfo[]>([]);
  const error = useSignal<string | null>(null);
  const editing = useSignal<Profile | "new" | null>(null);
  const deleting = useSignal<Profile | null>(null);
  const view = useView();

  const load = async () => {
    const list = await loadProfiles(store);
    if (list) {
      profiles.value = list;
      error.value = null;
    } else error.value = "The profiles could not be loaded.";
  };
  useEffect(() => {
    void load();
    void store.api.get<{ tools: ToolInfo[] }>("/api/tools").then(async (r) => {
      if (!r.ok) return;
      // MCP servers (h18-mcpwire): a profile enables all of a server's
      // tools by the server's entry, mcp__<server>.
      const m = await store.api.get<{ servers: { name: string }[] }>("/api/mcp/servers");
      const mcp = m.ok ? m.value.servers.map((sv) => ({ name: "mcp__" + sv.name, description: `Every tool of the MCP server ${sv.name}` })) : [];
      tools.value = [...r.value.tools, ...mcp];
    });
  }, []);

  const duplicate = async (p: Profile) => {
    const r = await store.api.post<Profile>(`/api/profiles/${p.id}/duplicate`);
    if (!r.ok) {
      error.value = r.error.message;
      return;
    }
    await load();
    editing.value = r.value;
  };
  const remove = async (p: Profile) => {
    const r = await store.api.del(`/api/profiles/${p.id}`);
    if (!r.ok) error.value = r.error.message;
    if (editing.peek() !== null && editing.peek() !== "new" && (editing.peek() as Profile).id === p.id) editing.value = null;
    await load();
  };
  const startSession = async (p: Profile) => {
    const err = await store.createSession(undefined, undefined, p.id);
    if (err) {
      error.value = err.message;
      return;
    }
    openPage(view, "chat");
  };

  const current = editing.value;
  return (
    <div class="settings-section" data-testid="profiles-page">
      <p class="page-lead">
        A profile is an agent: its instructions join the system prompt of every run of its sessions, and it brings its own model, tools and approval mode. A new session takes its project's profile, else the default one.
      </p>
      {admin && current === null && (
        <div>
          <button type="button" class="btn" data-testid="profile-new" onClick={() => (editing.value = "new")}>New profile</button>
        </div>
      )}
      {current !== null && (
        <ProfileForm key={current === "new" ? "new" : current.id} profile={current === "new" ? null : current} tools={tools.value}
          onDone={async (saved) => {
            editing.value = null;
            if (saved) await load();
          }} />
      )}
      {error.value && <p class="form-error" role="alert" data-testid="profiles-error">{error.value}</p>}
      <h2 class="section-title">Profiles</h2>
      {profiles.value === null ? (
        <p class="page-note">Loading…</p>
      ) : profiles.value.length === 0 ? (
        <p class="page-note" data-testid="profiles-empty">No profile yet: runs use the server's prompt, model and approval mode.</p>
      ) : (
        <ul class="rows" data-testid="profile-list">
          {profiles.value.map((p) => (
            <li key={p.id} class="row prf-row" data-testid="profile-row" data-id={p.id} data-name={p.name}>
              <span class="prf-avatar" style={{ background: p.color }} aria-hidden="true">{initial(p.name)}</span>
              <div class="row-main">
                <span class="row-title">
                  {p.name}
                  {p.default && <span class="prf-badge" data-testid="profile-default">default</span>}
                </span>
                <span class="row-sub">{summary(p)}</span>
              </div>
              <div class="row-actions">
                {operate && <button type="button" class="btn btn-sm" data-testid="profile-start" onClick={() => void startSession(p)}>New session</button>}
                {admin && <button type="button" class="btn btn-sm" data-testid="profile-edit" onClick={() => (editing.value = p)}>Edit</button>}
                {admin && <button type="button" class="btn btn-sm" data-testid="profile-duplicate" onClick={() => void duplicate(p)}>Duplicate</button>}
                {admin && <button type="button" class="btn btn-sm btn-danger-quiet" data-testid="profile-delete" onClick={() => (deleting.value = p)}>Delete</button>}
              </div>
            </li>
          ))}
        </ul>
      )}
      {deleting.value && (
        <ConfirmDialog
          title={`Delete ${deleting.value.name}?`}
          body={<>Sessions that use it keep working without it, and their history keeps what each run ran with. This cannot be undone.</>}
          confirmLabel="Delete"
          confirmTestId="confirm-profile-delete"
          cancelTestId="cancel-profile-delete"
          onCancel={() => (deleting.value = null)}
          onConfirm={() => {
            const p = deleting.value!;
            deleting.value = null;
            void remove(p);
          }}
        />
      )}
    </div>
  );
}

function initial(name: string): string {
  return (name.trim()[0] ?? "?").toUpperCase();
}

function summary(p: Profile): string {
  return [
    p.model ? `Model ${p.model}${p.fallbacks.length ? ` (then ${p.fallbacks.join(", ")})` : ""}` : "Server's model",
    p.tools.length ? `${p.tools.length} tools` : "all tools",
    p.approval_mode ? `approval ${p.approval_mode}` : "",
  ].filter(Boolean).join(" · ");
}

function ProfileForm({ profile, tools, onDone }: { profile: Profile | null; tools: ToolInfo[]; onDone: (saved: boolean) => void }) {
  const store = useStore();
  const models = store.models.value;
  const [name, setName] = useState(profile?.name ?? "");
  const [color, setColor] = useState(profile?.color ?? "#6366f1");
  const [instructions, setInstructions] = useState(profile?.instructions ?? "");
  const [model, setModel] = useState(profile?.model ?? "");
  const [fallbacks, setFallbacks] = useState<string[]>(profile?.fallbacks ?? []);
  const [enabled, setEnabled] = useState<string[]>(profile?.tools ?? []);
  const [mode, setMode] = useState<Profile["approval_mode"]>(profile?.approval_mode ?? "");
  const [workspace, setWorkspace] = useState(profile?.workspace ?? "");
  const [isDefault, setDefault] = useState(profile?.default ?? false);
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);

  const refs = models.map((m) => m.ref);
  const modelOptions = (value: string) => (
    <>
      {value && !refs.includes(value) && <option value={value}>{value}</option>}
      {models.map((m) => <option key={m.ref} value={m.ref}>{m.provider} · {m.label}</option>)}
    </>
  );
  const toggleTool = (n: string, on: boolean) => setEnabled(on ? [...enabled, n] : enabled.filter((x) => x !== n));

  const save = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    // Tools in the server's order; none checked enables all.
    const body = { name, color, instructions, model, fallbacks: fallbacks.filter(Boolean), tools: [...tools.map((t) => t.name).filter((n) => enabled.includes(n)),
      // MCP names listed (through the API) but not offered here are kept.
      ...enabled.filter((n) => n.startsWith("mcp__") && !tools.some((t) => t.name === n))],
      approval_mode: mode, workspace, default: isDefault };
    const r = profile ? await store.api.patch<Profile>(`/api/profiles/${profile.id}`, body) : await store.api.post<Profile>("/api/profiles", body);
    setBusy(false);
    if (!r.ok) {
      setError(r.error.message);
      return;
    }
    onDone(true);
  };

  return (
    <form class="card prf-form" onSubmit={save} noValidate data-testid="profile-form" aria-label={profile ? `Edit ${profile.name}` : "New profile"}>
      <h3 class="section-title">{profile ? `Edit ${profile.name}` : "New profile"}</h3>
      <div class="form-row">
        <label class="field grow">
          <span class="field-label">Name</span>
          <input class="input" data-testid="profile-name" value={name} maxLength={100} autoComplete="off" onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label class="field">
          <span class="field-label">Colour</span>
          <input class="input prf-color" type="color" data-testid="profile-color" value={color} onInput={(e) => setColor(e.currentTarget.value)} />
        </label>
      </div>
      <label class="field">
        <span class="field-label">Instructions</span>
        <textarea class="input prf-instructions" data-testid="profile-instructions" rows={6} value={instructions}
          placeholder="Who this agent is and how it works: added to the system prompt of its runs."
          onInput={(e) => setInstructions(e.currentTarget.value)} />
      </label>
      <div class="form-row">
        <label class="field grow">
          <span class="field-label">Model</span>
          <select class="input" data-testid="profile-model" value={model} onChange={(e) => setModel(e.currentTarget.value)}>
            <option value="">Server default</option>
            {modelOptions(model)}
          </select>
        </label>
        <label class="field grow">
          <span class="field-label">Approval mode</span>
          <select class="input" data-testid="profile-approval" value={mode} onChange={(e) => setMode(e.currentTarget.value as Profile["approval_mode"])}>
            {(Object.keys(APPROVAL_TEXT) as Profile["approval_mode"][]).map((m) => <option key={m} value={m}>{APPROVAL_TEXT[m]}</option>)}
          </select>
        </label>
      </div>
      <fieldset class="prf-fieldset" data-testid="profile-fallbacks">
        <legend class="field-label">Fallback models, in order (when the model is not served)</legend>
        {fallbacks.map((f, i) => (
          <div class="prf-fallback" key={i}>
            <select class="input" aria-label={`Fallback ${i + 1}`} value={f} onChange={(e) => setFallbacks(fallbacks.map((x, j) => (j === i ? e.currentTarget.value : x)))}>
              {modelOptions(f)}
            </select>
            <button type="button" class="btn btn-sm" aria-label={`Remove fallback ${i + 1}`} onClick={() => setFallbacks(fallbacks.filter((_, j) => j !== i))}>Remove</button>
          </div>
        ))}
        {models.length > 0 && fallbacks.length < 10 && (
          <div>
            <button type="button" class="btn btn-sm" data-testid="profile-add-fallback" onClick={() => setFallbacks([...fallbacks, models[0]!.ref])}>Add fallback</button>
          </div>
        )}
      </fieldset>
      <fieldset class="prf-fieldset" data-testid="profile-tools">
        <legend class="field-label">Tools {enabled.length === 0 ? "(none checked: all)" : `(${enabled.length} of ${tools.length})`}</legend>
        <div class="prf-tools">
          {tools.map((t) => (
            <label key={t.name} class="prf-tool" title={t.description}>
              <input type="checkbox" data-testid={`profile-tool-${t.name}`} checked={enabled.includes(t.name)} onChange={(e) => toggleTool(t.name, e.currentTarget.checked)} />
              <span>{t.name}</span>
            </label>
          ))}
        </div>
      </fieldset>
      <div class="form-row">
        <label class="field grow">
          <span class="field-label">Default workspace</span>
          <input class="input" data-testid="profile-workspace" value={workspace} placeholder="Server default (absolute path)" autoComplete="off" spellcheck={false}
            onInput={(e) => setWorkspace(e.currentTarget.value)} />
        </label>
        <label class="prf-check">
          <input type="checkbox" data-testid="profile-default-check" checked={isDefault} onChange={(e) => setDefault(e.currentTarget.checked)} />
          <span>Default profile of new sessions</span>
        </label>
      </div>
      {error && <p class="form-error" role="alert" data-testid="profile-error">{error}</p>}
      <div class="prf-actions">
        <button type="submit" class="btn btn-primary" data-testid="profile-save" disabled={busy}>{profile ? "Save" : "Create"}</button>
        <button type="button" class="btn" data-testid="profile-cancel" onClick={() => onDone(false)}>Cancel</button>
      </div>
    </form>
  );
}
