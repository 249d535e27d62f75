// Organising sessions (issue 15): the view state of pins, archive,
// projects, multi-select and delete-with-undo, and the sidebar's date
// groups. Created per App (ViewState.organise), so nothing lives at module
// level.
//
// Delete with undo (every delete: a row's trash button, its menus, the
// multi-selection, /delete): the sessions leave the list at once and a
// toast offers "Undo" for UNDO_MS; the DELETE requests are sent only when
// that time is up. Undo sends nothing. Leaving the page (reload, closed
// tab, navigation) ends the undo time: the person asked for the delete and
// did not take it back, so the DELETEs go out then with fetch keepalive,
// which outlives the page, and the session is gone after a reload as it
// was before it. The undo time stays in the page rather than becoming a
// server-side "deleting" state: that would need every list, search, stream
// and export to hide such sessions, and the one loss it prevents (a tab
// that crashes or goes offline within the few seconds) fails safe as it
// is: the session stays, and can be deleted again.

import { batch, signal, type Signal } from "@preact/signals";
import type { ActionError, Store } from "../state/contract";
import type { Project, ProjectDeletedP, ProjectP, Session } from "../state/types";

export const UNDO_MS = 5000;

/** What the sidebar lists: every unarchived session (""), those of one
 * project (its id), or the archived ones. */
export type SidebarFilter = "" | "archived" | string;

export interface PendingDelete {
  ids: string[]; label: string; timer: ReturnType<typeof setTimeout>;
  /** The session on screen when the delete hid it: undo shows it again. */
  wasActive: string | null;
  /** Sends the deletes if the page goes away first (pagehide). */
  onLeave: () => void;
}

export interface OrganiseState {
  projects: Signal<Project[]>;
  filter: Signal<SidebarFilter>;
  /** The archived sessions (GET /api/sessions?archived=1), while shown. */
  archived: Signal<Session[]>;
  /** The shown project's sessions as the server lists them
   * (?project=): those on pages the store has not loaded show too. */
  inProject: Signal<Session[]>;
  selecting: Signal<boolean>;
  selected: Signal<ReadonlySet<string>>;
  /** The deletes waiting out their undo time. */
  pendingDelete: Signal<PendingDelete | null>;
  /** The project dialog: a project to edit, "new", or closed. */
  editing: Signal<Project | "new" | null>;
}

export function createOrganiseState(): OrganiseState {
  return {
    projects: signal<Project[]>([]),
    filter: signal<SidebarFilter>(""),
    archived: signal<Session[]>([]),
    inProject: signal<Session[]>([]),
    selecting: signal(false),
    selected: signal<ReadonlySet<string>>(new Set()),
    pendingDelete: signal<PendingDelete | null>(null),
    editing: signal<Project | "new" | null>(null),
  };
}

export async function loadProjects(store: Store, o: OrganiseState): Promise<ActionError | null> {
  const r = await store.api.get<{ projects: Project[] }>("/api/projects");
  if (!r.ok) return r.error;
  o.projects.value = r.value.projects;
  return null;
}

export async function loadArchived(store: Store, o: OrganiseState): Promise<ActionError | null> {
  const r = await store.api.get<{ sessions: Session[] }>("/api/sessions?archived=1&limit=200");
  if (!r.ok) return r.error;
  o.archived.value = r.value.sessions;
  return null;
}

export async function loadProject(store: Store, o: OrganiseState, projectId: string): Promise<ActionError | null> {
  const r = await store.api.get<{ sessions: Session[] }>(`/api/sessions?project=${encodeURIComponent(projectId)}&limit=200`);
  if (!r.ok) return r.error;
  if (o.filter.peek() === projectId) o.inProject.value = r.value.sessions;
  return null;
}

/** A project's list: the store's sessions in it (kept live by the
 * stream), and those the server listed that the store does not hold. */
export function projectList(held: Session[], fetched: Session[], projectId: string): Session[] {
  const ids = new Set(held.map((s) => s.id));
  return [...held.filter((s) => s.project_id === projectId), ...fetched.filter((s) => !ids.has(s.id))]
    .sort((a, b) => (!!a.pinned !== !!b.pinned ? (a.pinned ? -1 : 1) : a.updated_at < b.updated_at ? 1 : a.updated_at > b.updated_at ? -1 : 0));
}

/** Pins, archives or moves a session; the Archived view follows. */
export async function organise(store: Store, o: OrganiseState, id: string, patch: Parameters<Store["organise"]>[1]): Promise<ActionError | null> {
  const err = await store.organise(id, patch);
  if (!err && patch.archived !== undefined && o.filter.peek() === "archived") await loadArchived(store, o);
  return err;
}

/** The ids hidden while their delete waits out its undo time. */
export function hiddenIds(o: OrganiseState): ReadonlySet<string> {
  return new Set(o.pendingDelete.value?.ids ?? []);
}

/** Takes the pending delete off the clock, returning it. */
function settle(o: OrganiseState): PendingDelete | null {
  const p = o.pendingDelete.peek();
  if (!p) return null;
  clearTimeout(p.timer);
  window.removeEventListener("pagehide", p.onLeave);
  o.pendingDelete.value = null;
  return p;
}

/** Sends the deletes now (the undo time is up, or another delete came). */
function flush(store: Store, o: OrganiseState) {
  const p = settle(o);
  if (!p) return;
  for (const id of p.ids) void store.deleteSession(id);
  o.archived.value = o.archived.peek().filter((s) => !p.ids.includes(s.id));
}

/** Hides the sessions and deletes them after UNDO_MS unless undone. */
export function deleteWithUndo(store: Store, o: OrganiseState, ids: string[], label: string) {
  if (ids.length === 0) return;
  flush(store, o); // one undo at a time: an older delete goes through
  const active = store.activeId.peek();
  const wasActive = active && ids.includes(active) ? active : null;
  // The one on screen goes: its neighbour in the list shows instead, as
  // when a delete is done.
  if (wasActive) store.selectSession(neighbour(store.visibleSessions.peek(), wasActive, ids));
  const timer = setTimeout(() => flush(store, o), UNDO_MS);
  const onLeave = () => {
    if (!settle(o)) return;
    for (const id of ids) void store.api.del(`/api/sessions/${id}`, true);
  };
  window.addEventListener("pagehide", onLeave);
  batch(() => {
    o.pendingDelete.value = { ids, label, timer, wasActive, onLeave };
    o.selected.value = new Set();
    o.selecting.value = false;
  });
}

/** The session after id in list (else the one before) that is not among
 * the deleted ids. */
function neighbour(list: Session[], id: string, ids: string[]): string | null {
  const i = list.findIndex((s) => s.id === id);
  if (i < 0) return null;
  const keep = (s: Session) => !ids.includes(s.id);
  return list.slice(i + 1).find(keep)?.id ?? list.slice(0, i).reverse().find(keep)?.id ?? null;
}

/** Takes the pending delete back: the sessions show again, and the one
 * that was on screen is on screen again. */
export function undoDelete(store: Store, o: OrganiseState) {
  const p = settle(o);
  if (p?.wasActive) store.selectSession(p.wasActive);
}

/** Follows the project events of the tab stream: another tab's (or
 * node's) new, changed or deleted project shows in this sidebar at once,
 * and a list showing a deleted project goes back to all sessions. Each
 * event carries the whole project, so the list is kept without fetching
 * (but after a resync, when the stream starts over). */
export function followProjects(store: Store, o: OrganiseState): () => void {
  return store.onProjectEvent((ev) => {
    if (!ev) {
      void loadProjects(store, o);
      return;
    }
    const list = o.projects.peek();
    if (ev.type === "project.deleted") {
      const pid = (ev.payload as ProjectDeletedP).id || ev.session_id;
      batch(() => {
        o.projects.value = list.filter((p) => p.id !== pid);
        if (o.filter.peek() === pid) {
          o.filter.value = "";
          o.inProject.value = [];
        }
        const e = o.editing.peek();
        if (e && e !== "new" && e.id === pid) o.editing.value = null;
      });
      return;
    }
    const p = (ev.payload as ProjectP).project;
    if (!p) return;
    const have = list.find((x) => x.id === p.id);
    if (have && have.updated_at > p.updated_at) return; // we hold a newer copy
    o.projects.value = sortProjects([...list.filter((x) => x.id !== p.id), p]);
  });
}

/** Like GET /api/projects: by name regardless of case, then id. */
const sortProjects = (list: Project[]) =>
  list.slice().sort((a, b) => {
    const ka = a.name.toLowerCase(), kb = b.name.toLowerCase();
    return ka !== kb ? (ka < kb ? -1 : 1) : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  });

export function toggleSelected(o: OrganiseState, id: string) {
  const next = new Set(o.selected.peek());
  if (next.has(id)) next.delete(id);
  else next.add(id);
  o.selected.value = next;
}

export interface SessionGroup { key: "pinned" | "today" | "yesterday" | "week" | "older"; label: string; sessions: Session[] }

const GROUP_LABELS: Record<SessionGroup["key"], string> = {
  pinned: "Pinned", today: "Today", yesterday: "Yesterday", week: "Previous 7 days", older: "Older",
};

/** Splits a list (pinned first, then newest first) into the sidebar's
 * groups: pinned, then by the local calendar day of the last activity. */
export function groupSessions(list: Session[], now: number): SessionGroup[] {
  const d = new Date(now);
  const today = new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
  const day = 24 * 3600 * 1000;
  const keyOf = (s: Session): SessionGroup["key"] => {
    if (s.pinned) return "pinned";
    const t = Date.parse(s.updated_at);
    if (t >= today) return "today";
    if (t >= today - day) return "yesterday";
    if (t >= today - 7 * day) return "week";
    return "older";
  };
  const out: SessionGroup[] = [];
  for (const s of list) {
    const k = keyOf(s);
    let g = out.find((x) => x.key === k);
    if (!g) out.push((g = { key: k, label: GROUP_LABELS[k], sessions: [] }));
    g.sessions.push(s);
  }
  const order = Object.keys(GROUP_LABELS);
  return out.sort((a, b) => order.indexOf(a.key) - order.indexOf(b.key));
}
