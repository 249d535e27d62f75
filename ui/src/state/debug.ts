// window.caduceus: read-only hooks for the browser tests (and for a person
// poking at the console). Nothing here changes state.

import type { Store } from "./contract";

export interface DebugSources {
  handledEventTypes(): string[];
  lastEventId(): number;
  streamOpens(): number;
  applied(): number;
  /** GET /api/health requests started, and the newest one answered
   * (numbered from 1 in start order). */
  health(): { started: number; answered: number };
}

export interface DebugStats {
  events: number; // session events applied by the reducer
  lastEventId: number;
  connection: string;
  sessionId: string | null;
  items: number; // transcript items of the session on screen
  renderedItems: number; // of those, how many are in the DOM now
  streamOpens: number;
  /** Health requests started and the newest answered (see DebugSources),
   * and what the last answer said (null: none yet). */
  healthSeq: { started: number; answered: number };
  health: { status: string; store: string; runners: number; queueDepth: number; recovering: number } | null;
}

declare global {
  interface Window {
    caduceus?: { handledEventTypes(): string[]; stats(): DebugStats; readonly version: string };
  }
}

function healthOf(store: Store): DebugStats["health"] {
  const h = store.health.peek();
  if (!h) return null;
  return { status: h.status, store: h.store, runners: (h.runners ?? []).length, queueDepth: h.queue_depth ?? 0, recovering: h.recovering ?? 0 };
}

export function createDebugHooks(store: Store, src: DebugSources): void {
  window.caduceus = {
    handledEventTypes: () => src.handledEventTypes().sort(),
    stats: () => ({
      events: src.applied(),
      lastEventId: src.lastEventId(),
      connection: store.connection.peek(),
      sessionId: store.activeId.peek(),
      items: store.active.peek()?.items.peek().length ?? 0,
      renderedItems: document.querySelectorAll("[data-testid=item]").length,
      streamOpens: src.streamOpens(),
      healthSeq: src.health(),
      health: healthOf(store),
    }),
    get version() {
      return store.meta.peek()?.version ?? "";
    },
  };
}
