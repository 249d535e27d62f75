// Organising sessions (issue 15) in the sidebar: the list picker (all
// sessions, a project, or the archived ones) with New/Edit project, the
// project dialog, the bar of a multi-selection, and the "Deleted — Undo"
// toast.

import { useEffect, useRef, useState } from "preact/hooks";
import { useStore } from "../state/context";
import type { Profile, Project } from "../state/types";
import { loadProfiles } from "../settings/Profiles";
import { trapFocus } from "./Dialog";
import { IPencil, IPlus } from "./icons";
import { deleteWithUndo, followProjects, loadArchived, loadProject, loadProjects, organise, undoDelete, type OrganiseState } from "./organise";
import { useView } from "./view";

export function ProjectBar() {
  const store = useStore();
  const o = useView().organise;
  const operate = store.account.permissions.value.operate;
  const filter = o.filter.value;
  const project = o.projects.value.find((p) => p.id === filter);
  useEffect(() => {
    void loadProjects(store, o);
    return followProjects(store, o);
  }, []);
  const choose = (v: string) => {
    o.filter.value = v;
    o.selected.value = new Set();
    o.inProject.value = [];
    if (v === "archived") void loadArchived(store, o);
    else if (v) void loadProject(store, o, v);
  };
  return (
    <div class="sb-org">
      <select class="sb-org-pick" data-testid="session-filter" aria-label="Show sessions" value={filter} onChange={(e) => choose(e.currentTarget.value)}>
        <option value="">All sessions</option>
        {o.projects.value.map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}
        <option value="archived">Archived</option>
      </select>
      {operate && project && (
        <button type="button" class="icon-btn sm" data-testid="project-edit" aria-label={`Edit project “${project.name}”`} title="Edit project" onClick={() => (o.editing.value = project)}>
          <IPencil size={15} />
        </button>
      )}
      {operate && (
        <button type="button" class="icon-btn sm" data-testid="project-new" aria-label="New project" title="New project" onClick={() => (o.editing.value = "new")}>
          <IPlus size={15} />
        </button>
      )}
      {operate && (
        <button type="button" class={"btn btn-sm sb-org-select" + (o.selecting.value ? " on" : "")} data-testid="select-sessions" aria-pressed={o.selecting.value}
          onClick={() => { o.selecting.value = !o.selecting.peek(); o.selected.value = new Set(); }}>
          {o.selecting.value ? "Done" : "Select"}
        </button>
      )}
    </div>
  );
}

/** The actions on the selected sessions. */
export function BulkBar() {
  const store = useStore();
  const o = useView().organise;
  const ids = [...o.selected.value];
  if (!o.selecting.value) return null;
  const archived = o.filter.value === "archived";
  const archive = async () => {
    for (const id of ids) await organise(store, o, id, { archived: !archived });
    o.selected.value = new Set();
    o.selecting.value = false;
  };
  const n = ids.length;
  return (
    <div class="sb-bulk" data-testid="bulk-bar" role="toolbar" aria-label="Selected sessions">
      <span class="sb-bulk-count" data-testid="bulk-count">{n} selected</span>
      <button type="button" class="btn btn-sm" data-testid="bulk-archive" disabled={n === 0} onClick={() => void archive()}>
        {archived ? "Unarchive" : "Archive"}
      </button>
      <button type="button" class="btn btn-sm btn-danger" data-testid="bulk-delete" disabled={n === 0}
        onClick={() => deleteWithUndo(store, o, ids, n === 1 ? "Deleted 1 session" : `Deleted ${n} sessions`)}>
        Delete
      </button>
    </div>
  );
}

export function UndoToast({ o }: { o: OrganiseState }) {
  const store = useStore();
  const p = o.pendingDelete.value;
  const undoBtn = useRef<HTMLButtonElement>(null);
  const tookFocus = useRef(false);
  // Deleting by keyboard removes the focused row (or closes its menu onto
  // nothing): focus that fell to the page goes to Undo, so Enter takes the
  // delete back; after an undo it goes to the restored row.
  useEffect(() => {
    if (!p) return;
    const lost = !document.activeElement || document.activeElement === document.body;
    tookFocus.current = lost;
    if (lost) undoBtn.current?.focus();
  }, [p]);
  if (!p) return null;
  const undo = () => {
    const ids = p.ids;
    const refocus = tookFocus.current || document.activeElement === undoBtn.current;
    undoDelete(store, o);
    if (refocus) {
      requestAnimationFrame(() =>
        document.querySelector<HTMLElement>(`[data-session-id="${ids[0]}"] .sb-link`)?.focus());
    }
  };
  return (
    <div class="toast-region undo-region" aria-live="polite">
      <div class="toast undo-toast" data-testid="undo-toast" role="status">
        <span class="toast-text">{p.label}</span>
        <button type="button" ref={undoBtn} class="btn btn-sm" data-testid="undo-delete" onClick={undo}
          aria-label={`Undo: ${p.label}`}>Undo</button>
      </div>
    </div>
  );
}

/** Creates or edits a project: name, default workspace and model, and
 * the instructions its runs get. */
export function ProjectDialog() {
  const store = useStore();
  const o = useView().organise;
  const editing = o.editing.value;
  const box = useRef<HTMLDivElement>(null);
  const first = useRef<HTMLInputElement>(null);
  const p: Partial<Project> = editing === "new" || !editing ? {} : editing;
  const [name, setName] = useState(p.name ?? "");
  const [workspace, setWorkspace] = useState(p.workspace ?? "");
  const [model, setModel] = useState(p.model ?? "");
  const [instructions, setInstructions] = useState(p.instructions ?? "");
  const [profileId, setProfileId] = useState(p.profile_id ?? "");
  const [profiles, setProfiles] = useState<Profile[]>([]);
  useEffect(() => void loadProfiles(store).then((l) => l && setProfiles(l)), []);
  const [error, setError] = useState("");
  const close = () => (o.editing.value = null);
  useEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    first.current?.focus();
    const release = trapFocus(box.current!, close);
    return () => {
      release();
      if (before && document.contains(before)) before.focus();
    };
  }, []);
  const save = async (e: Event) => {
    e.preventDefault();
    const body = { name, workspace, model, instructions, profile_id: profileId };
    const r = p.id ? await store.api.patch<Project>(`/api/projects/${p.id}`, body) : await store.api.post<Project>("/api/projects", body);
    if (!r.ok) {
      setError(r.error.message);
      return;
    }
    await loadProjects(store, o);
    o.filter.value = r.value.id;
    void loadProject(store, o, r.value.id);
    close();
  };
  const remove = async () => {
    if (!p.id) return;
    const r = await store.api.del(`/api/projects/${p.id}`);
    if (!r.ok) {
      setError(r.error.message);
      return;
    }
    // Its sessions stay, in no project: what we hold follows.
    store.sessions.value = store.sessions.peek().map((x) => (x.project_id === p.id ? { ...x, project_id: null } : x));
    o.filter.value = "";
    await loadProjects(store, o);
    close();
  };
  return (
    <div class="modal-backdrop" onMouseDown={(e) => e.target === e.currentTarget && close()}>
      <div class="modal project-dialog" ref={box} role="dialog" aria-modal="true" aria-labelledby="prj-title" data-testid="project-dialog">
        <h2 id="prj-title" class="modal-title">{p.id ? "Edit project" : "New project"}</h2>
        <form onSubmit={save} class="project-form">
          <label>Name
            <input ref={first} data-testid="project-name" value={name} maxLength={100} required onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <label>Workspace <span class="hint">(default of its new sessions; empty: the server's)</span>
            <input data-testid="project-workspace" value={workspace} placeholder={store.meta.value?.workspaces?.default ?? ""} onInput={(e) => setWorkspace(e.currentTarget.value)} />
          </label>
          <label>Model <span class="hint">(empty: the server's default)</span>
            <input data-testid="project-model" list="project-models" value={model} onInput={(e) => setModel(e.currentTarget.value)} />
            <datalist id="project-models">{store.models.value.map((m) => <option key={m.ref} value={m.ref} />)}</datalist>
          </label>
          <label>Profile <span class="hint">(the agent of its new sessions; empty: the default profile)</span>
            <select data-testid="project-profile" value={profileId} onChange={(e) => setProfileId(e.currentTarget.value)}>
              <option value="">Default profile</option>
              {profileId && !profiles.some((x) => x.id === profileId) && <option value={profileId}>(deleted profile)</option>}
              {profiles.map((x) => <option key={x.id} value={x.id}>{x.name}</option>)}
            </select>
          </label>
          <label>Instructions <span class="hint">(added to the system prompt of every run)</span>
            <textarea data-testid="project-instructions" rows={5} value={instructions} onInput={(e) => setInstructions(e.currentTarget.value)} />
          </label>
          {error && <p class="form-error" role="alert" data-testid="project-error">{error}</p>}
          <div class="modal-actions">
            {p.id && <button type="button" class="btn btn-danger project-delete" data-testid="project-delete" onClick={() => void remove()}>Delete project</button>}
            <button type="button" class="btn" data-testid="project-cancel" onClick={close}>Cancel</button>
            <button type="submit" class="btn btn-primary" data-testid="project-save">{p.id ? "Save" : "Create project"}</button>
          </div>
        </form>
      </div>
    </div>
  );
}
