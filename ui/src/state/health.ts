// Runner health: GET /api/health, read at start, on every stream (re)open,
// shortly after any run changes state (coalesced) and every 15 s while the
// tab is visible. Runners are separate processes the stream says nothing
// about, so this is how the banner learns that runs wait and no runner is
// alive, or that the server cannot read its database.

import { computed, signal, batch } from "@preact/signals";
import type { RunnerAlert } from "./contract";
import type { Health } from "./types";

type Answer = { ok: true; value: Health } | { ok: false; status: number };

export interface HealthWatchDeps {
  get(): Promise<Answer>;
  /** The server refused our token: read nothing until there is a new one. */
  blocked(): boolean;
  /** Called after each answer. */
  answered(): void;
}

export function createHealthWatch(deps: HealthWatchDeps) {
  const health = signal<Health | null>(null);
  const storeDown = signal(false); // the last health answer was a 503
  const runnerAlert = computed<RunnerAlert | null>(() => {
    if (storeDown.value) return { kind: "store_unavailable" };
    const h = health.value;
    if (h?.store === "write_failing") return { kind: "store_write", reason: h.reason ?? "" };
    if (!h || (h.runners ?? []).length > 0) return null;
    const waiting = (h.queue_depth ?? 0) + (h.recovering ?? 0) + (h.answered ?? 0);
    return waiting > 0 ? { kind: "no_runner", waiting } : null;
  });
  let timer = 0;
  let busy = false; // a fetch is in flight
  let again = false; // something changed meanwhile: fetch once more
  // Requests started, and the newest one answered: a test that needs a
  // reading taken after some moment waits on these.
  let started = 0;
  let answeredSeq = 0;

  /** Reads GET /api/health. Only an answer changes what we show: a network
   * error or an older server without the route keeps the last one (the
   * connection dot speaks for an unreachable server). */
  const fetchNow = async (): Promise<void> => {
    if (deps.blocked()) return;
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    const seq = ++started;
    const r = await deps.get();
    busy = false;
    if (r.ok || r.status === 503) answeredSeq = seq;
    batch(() => {
      if (r.ok) {
        health.value = r.value;
        storeDown.value = r.value.store === "unavailable";
      } else if (r.status === 503) storeDown.value = true;
    });
    if (r.ok) deps.answered();
    if (again) {
      again = false;
      void fetchNow();
    }
  };

  /** Reads health after `delay` ms. A read already due stays due (a steady
   * flow of run events must not postpone it for ever); delay 0 reads now. */
  const refresh = (delay = 0) => {
    if (timer && delay > 0) return;
    clearTimeout(timer);
    timer = window.setTimeout(() => {
      timer = 0;
      void fetchNow();
    }, delay);
  };

  return { health, runnerAlert, refresh, stats: () => ({ started, answered: answeredSeq }) };
}
