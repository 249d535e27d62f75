// The sessions list's order and how pages merge into it: pure functions,
// kept apart from the store that holds the list.

import type { Session } from "./types";

/** Like the server: pinned first, then newest first (updated_at, then id,
 * both descending). */
export const newerFirst = (a: Session, b: Session) =>
  !!a.pinned !== !!b.pinned ? (a.pinned ? -1 : 1) : a.updated_at !== b.updated_at ? (a.updated_at < b.updated_at ? 1 : -1) : a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
export const sortSessions = (list: Session[]) => list.slice().sort(newerFirst);

/** The list after a refetch of the first page: the page, plus the sessions
 * of older pages we hold that sort after its last entry. One we hold that
 * sorts inside the page's range but is not in it was deleted (an update
 * only moves a session up). A last page (no next cursor) is everything,
 * but for the archived session on screen (shown). */
export function mergeFirstPage(held: Session[], page: Session[], next: string, shown: string | null = null): Session[] {
  const ids = new Set(page.map((s) => s.id));
  // The session on screen stays, if we hold it and the page lacks it: an
  // archived one opened from a search hit is in no page of the list, and
  // the header and actions read it from here. A deleted one leaves by its
  // session.deleted.
  const keep = held.find((s) => s.id === shown && !ids.has(s.id) && s.archived_at);
  if (!next || page.length === 0) return sortSessions(keep ? [...page, keep] : page);
  const last = page[page.length - 1];
  return sortSessions([...page, ...held.filter((s) => !ids.has(s.id) && (newerFirst(last, s) < 0 || s === keep))]);
}

/** Adds a further page to the list, one entry per id (the fresher copy). */
export function mergePage(held: Session[], page: Session[]): Session[] {
  const byId = new Map(held.map((s) => [s.id, s]));
  for (const s of page) {
    const have = byId.get(s.id);
    if (!have || s.updated_at > have.updated_at) byId.set(s.id, s);
  }
  return sortSessions([...byId.values()]);
}

