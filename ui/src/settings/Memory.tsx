// Memory (issue 16, h16-memory): what an agent profile remembers — its
// notes and its profile of the user, the entries the memory tool keeps.
// A person who may operate adds, edits and deletes entries (a deleted
// one can be put back); "What the agent sees" is exactly the text the
// profile's next run gets in its system prompt.

import { useSignal } from "@preact/signals";
import { useEffect, useState } from "preact/hooks";
import { useStore } from "../state/context";
import type { Profile } from "../state/types";
import { loadProfiles } from "./Profiles";

type Target = "notes" | "user";

interface MemoryEntry { id: string; target: Target; text: string; chars: number }
interface MemoryTarget { target: Target; entries: MemoryEntry[]; chars: number; limit: number }
interface MemoryView { profile_id: string; targets: MemoryTarget[]; max_entry_chars: number }

const TITLES: Record<Target, { title: string; hint: string; add: string }> = {
  notes: { title: "Notes", hint: "The agent's own notes: projects, environment, conventions, lessons learnt.", add: "Add a note" },
  user: { title: "About the user", hint: "What the agent knows of you: preferences, role, habits.", add: "Add a fact about the user" },
};

export function MemoryPage() {
  const store = useStore();
  const operate = store.account.permissions.value.operate;
  const profiles = useSignal<Profile[] | null>(null);
  const selected = useSignal("");
  const memory = useSignal<MemoryView | null>(null);
  const prompt = useSignal<string | null>(null);
  const error = useSignal<string | null>(null);
  const undo = useSignal<MemoryEntry | null>(null);

  const refresh = async (pid: string) => {
    const [m, p] = await Promise.all([
      store.api.get<MemoryView>(`/api/profiles/${pid}/memory`),
      store.api.get<{ text: string }>(`/api/profiles/${pid}/memory/prompt`),
    ]);
    if (selected.peek() !== pid) return; // another profile was picked meanwhile
    if (!m.ok || !p.ok) {
      error.value = "This profile's memory could not be loaded.";
      return;
    }
    memory.value = m.value;
    prompt.value = p.value.text;
  };
  useEffect(() => {
    void loadProfiles(store).then((list) => {
      profiles.value = list;
      if (!list) error.value = "The profiles could not be loaded.";
      const first = list?.find((p) => p.default) ?? list?.[0];
      if (first) pick(first.id);
    });
  }, []);
  const pick = (pid: string) => {
    selected.value = pid;
    memory.value = null;
    prompt.value = null;
    undo.value = null;
    error.value = null;
    void refresh(pid);
  };

  /** Sends a change; on success the lists and the prompt are reloaded. */
  const change = async (send: () => Promise<{ ok: boolean; error?: { message: string } }>): Promise<string | null> => {
    const r = await send();
    if (!r.ok) return r.error?.message ?? "The change failed.";
    error.value = null;
    await refresh(selected.peek());
    return null;
  };
  const pid = selected.value;
  const add = (target: Target, text: string) =>
    change(() => store.api.post(`/api/profiles/${pid}/memory`, { target, text }));
  const edit = (e: MemoryEntry, text: string) =>
    change(() => store.api.patch(`/api/profiles/${pid}/memory/${e.id}`, { text }));
  const remove = async (e: MemoryEntry) => {
    const err = await change(() => store.api.del(`/api/profiles/${pid}/memory/${e.id}`));
    if (err) error.value = err;
    else undo.value = e;
  };
  const putBack = async () => {
    const e = undo.value;
    if (!e) return;
    undo.value = null;
    const err = await add(e.target, e.text);
    if (err) error.value = err;
  };

  const list = profiles.value;
  return (
    <div class="settings-section" data-testid="memory-page">
      <p class="page-lead">
        Each profile remembers on its own: notes it keeps and what it has learnt about you. Every run of the profile starts with them in its system prompt, and the agent curates them with its memory tool.
      </p>
      {list === null ? (
        <p class="page-note">Loading…</p>
      ) : list.length === 0 ? (
        <p class="page-note" data-testid="memory-no-profiles">No profile yet: create one under Profiles to give it a memory.</p>
      ) : (
        <label class="field mem-pick">
          <span class="field-label">Profile</span>
          <select class="input" data-testid="memory-profile" value={pid} onChange={(e) => pick(e.currentTarget.value)}>
            {list.map((p) => <option key={p.id} value={p.id}>{p.name}{p.default ? " (default)" : ""}</option>)}
          </select>
        </label>
      )}
      {error.value && <p class="form-error" role="alert" data-testid="memory-error">{error.value}</p>}
      {undo.value && (
        <div class="mem-undo" role="status" data-testid="memory-undo-bar">
          <span>Entry deleted.</span>
          <button type="button" class="btn btn-sm" data-testid="memory-undo" onClick={() => void putBack()}>Undo</button>
        </div>
      )}
      {memory.value && (
        <div class="mem-grid">
          {memory.value.targets.map((t) => (
            <MemoryList key={`${pid}-${t.target}`} data={t} max={memory.value!.max_entry_chars} operate={operate}
              onAdd={(text) => add(t.target, text)} onEdit={edit} onDelete={(e) => void remove(e)} />
          ))}
        </div>
      )}
      {prompt.value !== null && (
        <section class="card mem-prompt" data-testid="memory-prompt" aria-labelledby="mem-prompt-title">
          <h2 class="section-title" id="mem-prompt-title">What the agent sees</h2>
          <p class="page-note">Added to the system prompt of this profile's next run, exactly:</p>
          {prompt.value === "" ? (
            <p class="page-note" data-testid="memory-prompt-empty">Nothing: this profile's memory is empty.</p>
          ) : (
            <pre class="mem-prompt-text" data-testid="memory-prompt-text">{prompt.value}</pre>
          )}
        </section>
      )}
    </div>
  );
}

function MemoryList({ data, max, operate, onAdd, onEdit, onDelete }: {
  data: MemoryTarget; max: number; operate: boolean;
  onAdd: (text: string) => Promise<string | null>;
  onEdit: (e: MemoryEntry, text: string) => Promise<string | null>;
  onDelete: (e: MemoryEntry) => void;
}) {
  const [draft, setDraft] = useState("");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const [editing, setEditing] = useState<string | null>(null);
  const t = TITLES[data.target];
  const full = data.chars >= data.limit * 0.9;

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    const err = await onAdd(draft);
    setBusy(false);
    if (err) setError(err);
    else {
      setDraft("");
      setError("");
    }
  };

  return (
    <section class="mem-list" data-testid={`memory-${data.target}`} aria-labelledby={`mem-${data.target}-title`}>
      <div class="mem-head">
        <h2 class="section-title" id={`mem-${data.target}-title`}>{t.title}</h2>
        <span class={`mem-usage${full ? " mem-usage-full" : ""}`} data-testid="memory-usage">
          {data.chars.toLocaleString()} of {data.limit.toLocaleString()} characters
        </span>
      </div>
      <p class="page-note">{t.hint}</p>
      {data.entries.length === 0 ? (
        <p class="page-note mem-empty" data-testid="memory-empty">No entries.</p>
      ) : (
        <ul class="rows mem-entries">
          {data.entries.map((e) => (
            <li key={e.id} class="row mem-entry" data-testid="memory-entry" data-id={e.id}>
              {editing === e.id ? (
                <EntryEditor entry={e} max={max} onCancel={() => setEditing(null)}
                  onSave={async (text) => {
                    const err = await onEdit(e, text);
                    if (!err) setEditing(null);
                    return err;
                  }} />
              ) : (
                <>
                  <span class="mem-text" data-testid="memory-entry-text">{e.text}</span>
                  {operate && (
                    <div class="row-actions">
                      <button type="button" class="btn btn-sm" data-testid="memory-edit" aria-label={`Edit: ${e.text}`} onClick={() => setEditing(e.id)}>Edit</button>
                      <button type="button" class="btn btn-sm btn-danger-quiet" data-testid="memory-delete" aria-label={`Delete: ${e.text}`} onClick={() => onDelete(e)}>Delete</button>
                    </div>
                  )}
                </>
              )}
            </li>
          ))}
        </ul>
      )}
      {operate && (
        <form class="mem-add" onSubmit={submit} noValidate>
          <label class="field">
            <span class="field-label">{t.add}</span>
            <textarea class="input mem-input" data-testid="memory-add-text" rows={2} value={draft} maxLength={max * 2}
              placeholder="One short, self-contained fact" onInput={(e) => setDraft(e.currentTarget.value)} />
          </label>
          {error && <p class="form-error" role="alert" data-testid="memory-add-error">{error}</p>}
          <div>
            <button type="submit" class="btn btn-sm btn-primary" data-testid="memory-add" disabled={busy || draft.trim() === ""}>Add</button>
          </div>
        </form>
      )}
    </section>
  );
}

function EntryEditor({ entry, max, onSave, onCancel }: {
  entry: MemoryEntry; max: number; onSave: (text: string) => Promise<string | null>; onCancel: () => void;
}) {
  const [text, setText] = useState(entry.text);
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const save = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    const err = await onSave(text);
    setBusy(false);
    if (err) setError(err);
  };
  return (
    <form class="mem-edit" onSubmit={save} noValidate>
      <textarea class="input mem-input" data-testid="memory-edit-text" aria-label="Entry" rows={3} value={text} maxLength={max * 2}
        onInput={(e) => setText(e.currentTarget.value)}
        onKeyDown={(e) => e.key === "Escape" && onCancel()} />
      {error && <p class="form-error" role="alert" data-testid="memory-edit-error">{error}</p>}
      <div class="mem-edit-actions">
        <button type="submit" class="btn btn-sm btn-primary" data-testid="memory-save" disabled={busy}>Save</button>
        <button type="button" class="btn btn-sm" data-testid="memory-cancel" onClick={onCancel}>Cancel</button>
      </div>
    </form>
  );
}
