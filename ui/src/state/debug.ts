// window.caduceus: read-only hooks for the browser tests (and for a person
// poking at the console). Nothing here changes state.

import type { Store } from "./contract";

export interface DebugSources {
  handledEventTypes(): string[];
  lastEventId(): number;
  streamOpens(): number;
  applied(): number;
}

export interface DebugStats {
  events: number; // session events applied by the reducer
  lastEventId: number;
  connection: string;
  sessionId: string | null;
  items: number; // transcript items of the session on screen
  renderedItems: number; // of those, how many are in the DOM now
  streamOpens: number;
}

declare global {
  interface Window {
    caduceus?: { handledEventTypes(): string[]; stats(): DebugStats; readonly version: string };
  }
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
    }),
    get version() {
      return store.meta.peek()?.version ?? "";
    },
  };
}
