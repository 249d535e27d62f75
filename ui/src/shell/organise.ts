// Organising sessions (issue 15): the view state of pins, archive,
// projects, multi-select and delete-with-undo, and the sidebar's date
// groups. Created per App (ViewState.organise), so nothing lives at module
// level.
//
// Delete with undo: the sessions leave the list at once and a toast offers
// "Undo" for UNDO_MS; the DELETE requests are sent only when that time is
// up (a tab closed meanwhile deletes nothing). Undo sends nothing.

import { batch, signal, type Signal } from "@preact/signals";
import type { ActionError, Store } from "../state/contract";
import type { Project, Session } from "../state/types";

export const UNDO_MS = 5000;

/** What the sidebar lists: every unarchived session (""), those of one
 * project (its id), or the archived ones. */
export type SidebarFilter = "" | "archived" | string;

export interface PendingDelete { ids: string[]; label: string; timer: ReturnType<typeof setTimeout> }

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

/** Sends the deletes now (the undo time is up, or another delete came). */
function flush(store: Store, o: OrganiseState) {
  const p = o.pendingDelete.peek();
  if (!p) return;
  clearTimeout(p.timer);
  o.pendingDelete.value = null;
  for (const id of p.ids) void store.deleteSession(id);
  o.archived.value = o.archived.peek().filter((s) => !p.ids.includes(s.id));
}

/** Hides the sessions and deletes them after UNDO_MS unless undone. */
export function deleteWithUndo(store: Store, o: OrganiseState, ids: string[], label: string) {
  if (ids.length === 0) return;
  flush(store, o); // one undo at a time: an older delete goes through
  if (ids.includes(store.activeId.peek() ?? "")) store.selectSession(null);
  const timer = setTimeout(() => flush(store, o), UNDO_MS);
  batch(() => {
    o.pendingDelete.value = { ids, label, timer };
    o.selected.value = new Set();
    o.selecting.value = false;
  });
}

export function undoDelete(o: OrganiseState) {
  const p = o.pendingDelete.peek();
  if (!p) return;
  clearTimeout(p.timer);
  o.pendingDelete.value = null;
}

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
