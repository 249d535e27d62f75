// "New session" without a pile of blank ones: when the session on screen,
// or else the most recent one, has never been used, it is opened instead of
// creating another, and the message box gets the focus either way.

import type { ActionError, Store } from "../state/contract";
import type { Session, SessionState } from "../state/types";

/** Whether a session was never used: no title (the first message sets
 * one), nothing running or queued, and never changed since it was made
 * (GET /api/sessions has no message count; updated_at moves on every
 * message and edit). For the session on screen its loaded transcript and
 * runs decide as well. */
export function isBlank(s: Session, state: SessionState | null): boolean {
  if (s.title !== "" || s.status !== "idle" || s.queued_runs > 0 || s.active_run_id) return false;
  if (state && state.id === s.id && state.loaded.peek()) {
    return state.items.peek().length === 0 && state.runs.peek().length === 0 && state.queued.peek().length === 0;
  }
  return s.updated_at === s.created_at;
}

function focusComposer() {
  requestAnimationFrame(() => (document.querySelector("[data-testid=composer]") as HTMLTextAreaElement | null)?.focus());
}

export async function newSession(store: Store): Promise<ActionError | null> {
  const list = store.sessions.peek();
  const id = store.activeId.peek();
  const candidates = [id ? list.find((s) => s.id === id) : undefined, list[0]];
  for (const s of candidates) {
    if (s && isBlank(s, store.active.peek())) {
      store.selectSession(s.id);
      focusComposer();
      return null;
    }
  }
  const err = await store.createSession();
  if (!err) focusComposer();
  return err;
}
