// The tab's one event stream (GET /api/events, docs/API.md "Server-Sent
// Events"). It owns the EventSource, the reconnect policy and the connection
// indicator; what the events mean is the store's business.
//
// Delivery: EventSource reconnects by itself (retry: 1000) and resumes with
// Last-Event-ID. When the browser gives up (readyState CLOSED: an HTTP error,
// e.g. the session was deleted) we reopen ourselves with ?after=<last id>,
// with a growing delay. Envelopes are handed over in bursts, one per
// animation frame, so the store can apply a burst inside one batch().

import type { Connection, Envelope } from "./types";

export interface StreamHooks {
  /** The URL to (re)open, resuming after `after`; asked at every open, so
   * it follows the session on screen. */
  url(after: number): string;
  onEvents(evs: Envelope[]): void;
  /** Every successful (re)open: the store refreshes its lists then. */
  onOpen(): void;
  /** The server refused the stream (readyState CLOSED); a reopen follows. */
  onRefused(): void;
  onConnection(c: Connection): void;
}

export interface TabStream {
  /** (Re)opens the stream resuming after `after` (one per tab: the old one
   * is closed first, its pending events delivered). `reset` forgets the
   * highest id seen, for a journal that was replaced (resync). */
  open(after: number, reset?: boolean): void;
  close(): void;
  /** Highest event id received on this tab's streams. */
  lastId(): number;
  /** Successful opens so far (first open, reconnects and switches). */
  opens(): number;
}

const RECONNECTING_AFTER_MS = 2000; // shorter drops are not worth a warning
const OFFLINE_AFTER_MS = 15000;
const MAX_BACKOFF_MS = 15000;

export function createStream(hooks: StreamHooks): TabStream {
  let es: EventSource | null = null;
  let last = 0;
  let opens = 0;
  let everOpen = false;
  let state: Connection = "connecting";
  let downSince = 0;
  let downTimers: number[] = [];
  let reopenTimer = 0;
  let backoff = 1000;
  let queue: Envelope[] = [];
  let scheduled = false;

  const setState = (c: Connection) => {
    if (c === state) return;
    state = c;
    hooks.onConnection(c);
  };

  const clearDown = () => {
    downTimers.forEach((t) => clearTimeout(t));
    downTimers = [];
    downSince = 0;
  };

  /** The stream is not delivering. Say so only when it lasts. */
  const markDown = () => {
    if (!navigator.onLine) setState("offline");
    if (downSince) return;
    downSince = Date.now();
    downTimers.push(
      window.setTimeout(() => everOpen && state !== "offline" && setState("reconnecting"), RECONNECTING_AFTER_MS),
      window.setTimeout(() => setState("offline"), OFFLINE_AFTER_MS),
    );
  };

  const markUp = () => {
    clearDown();
    everOpen = true;
    backoff = 1000;
    setState("live");
  };

  const flush = () => {
    if (!scheduled) return;
    scheduled = false;
    const evs = queue;
    queue = [];
    if (evs.length) hooks.onEvents(evs);
  };

  // One frame's worth of events is applied together. Hidden tabs get no
  // animation frames, so a timer backs the frame up.
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    if (!document.hidden) requestAnimationFrame(flush);
    setTimeout(flush, document.hidden ? 30 : 100);
  };

  /** Closes the stream and delivers what it had queued up to `upTo`; the
   * rest is dropped, for a stream reopened before it replays it. */
  const close = (upTo = Infinity) => {
    clearTimeout(reopenTimer);
    reopenTimer = 0;
    if (es) {
      es.onopen = es.onmessage = es.onerror = null;
      es.close();
      es = null;
    }
    if (upTo !== Infinity) queue = queue.filter((ev) => ev.id <= upTo);
    flush();
  };

  const open = (after: number, reset = false) => {
    // A reset follows a snapshot that ends at `after`: events queued past
    // it would move the session's cursor over the ones between, which the
    // snapshot lacks, and the replay would then skip them (TestUIVersions
    // lost an answer so). They come again, in order, from the new stream.
    close(reset ? after : Infinity);
    last = reset ? after : Math.max(last, after);
    markDown(); // down until onopen; a quick switch never shows
    const src = new EventSource(hooks.url(after));
    es = src;
    src.onopen = () => {
      if (es !== src) return;
      opens++;
      markUp();
      hooks.onOpen();
    };
    src.onmessage = (msg: MessageEvent<string>) => {
      if (es !== src) return;
      let ev: Envelope;
      try {
        ev = JSON.parse(msg.data) as Envelope;
      } catch {
        return; // not an envelope; nothing to apply
      }
      if (ev.id > last) last = ev.id;
      queue.push(ev);
      schedule();
    };
    src.onerror = () => {
      if (es !== src) return;
      markDown();
      if (src.readyState === EventSource.CLOSED) {
        // The browser will not retry: we do, from the last id we got.
        src.onopen = src.onmessage = src.onerror = null;
        es = null;
        hooks.onRefused();
        clearTimeout(reopenTimer);
        reopenTimer = window.setTimeout(() => open(last), backoff);
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
    };
  };

  window.addEventListener("offline", () => setState("offline"));
  window.addEventListener("online", () => {
    // Back online: do not wait for the next retry tick.
    if (state !== "live") open(last);
  });

  return { open, close, lastId: () => last, opens: () => opens };
}
