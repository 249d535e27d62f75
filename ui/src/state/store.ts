// The store: everything the views read, and every action they take. It
// holds the sessions list, the pending requests of every session, and the
// live state of the session on screen (plus a few recently viewed ones, so
// switching back shows something at once while it re-syncs).
//
// Consistency model. Lists (sessions, pending requests) are refetched on
// every stream (re)open; GET /api/sessions returns the cursor it was read
// at, and the lifecycle events we hold past that cursor are re-applied on
// top, so a refetch never rolls the sidebar back. The session on screen is
// GET .../messages + GET .../runs, then the stream resumes after the
// snapshot's cursor and the reducer drops what the snapshot already had.

import { batch, computed, signal } from "@preact/signals";
import * as api from "./api";
import type { ActionError, Meta, ModelChoice, Store } from "./contract";
import { createDebugHooks } from "./debug";
import { notifyState, requestPermission, setMuted, showRequest } from "./notify";
import type * as P from "./payloads";
import { apply, applyRunUsage, handlers, loadSnapshot, newSessionModel, type ReduceEnv, type SessionModel } from "./reducer";
import { createStream } from "./stream";
import type { Command, Connection, Envelope, EventType, HumanRequest, Item, Run, Session } from "./types";

/** Lifecycle events: the ones GET /api/events carries from every session. */
const LIFECYCLE: ReadonlySet<EventType> = new Set<EventType>([
  "run.queued", "run.started", "run.status", "run.done", "title.updated",
  "approval.requested", "approval.resolved", "clarify.requested", "clarify.resolved",
]);
const CACHE_SIZE = 4; // recently viewed sessions kept in memory
const BUFFER_SIZE = 500; // lifecycle events kept to re-apply after a list refetch

interface ModelFacts { provider: string; demo: boolean; contextWindow: number }

/** Path of a session in the address bar. */
export const sessionPath = (id: string | null) => (id ? `/s/${id}` : "/");
const idFromPath = (path: string): string | null => {
  const m = /^\/s\/(ses_[0-9a-z]+)\/?$/.exec(path);
  return m ? m[1] : null;
};

export interface StoreInternals {
  /** Loads models, lists and the session in the address bar, then opens
   * the stream. Called once, after the first render. */
  start(): void;
}

export function createStore(): Store & StoreInternals {
  // ---- public signals ----
  const meta = signal<Meta | null>(null);
  const sessions = signal<Session[]>([]);
  const sessionFilter = signal("");
  const visibleSessions = computed(() => {
    const q = sessionFilter.value.trim().toLowerCase();
    return q ? sessions.value.filter((s) => (s.title || "new session").toLowerCase().includes(q)) : sessions.value;
  });
  const activeId = signal<string | null>(idFromPath(location.pathname));
  const activeModel = signal<SessionModel | null>(null);
  const active = computed(() => activeModel.value?.state ?? null);
  const pending = signal<HumanRequest[]>([]);
  const models = signal<ModelChoice[]>([]);
  const commands = signal<Command[]>([]);
  const connection = signal<Connection>("connecting");
  const toast = signal<ActionError | null>(null);
  const notify = signal(notifyState());

  // ---- private state ----
  const cache = new Map<string, SessionModel>();
  const facts = new Map<string, ModelFacts>();
  let defaultRef = "";
  let listCursor = 0; // highest event id the sessions list reflects
  let buffer: Envelope[] = []; // recent lifecycle events, ascending ids
  let streamSession: string | null = null; // the session the open stream carries in full
  let loadSeq = 0;
  let usageAbort: AbortController | null = null;
  let applied = 0;
  let refreshTimer = 0;

  const env: ReduceEnv = {
    contextWindowOf: (model) => facts.get(model || defaultRef)?.contextWindow ?? 0,
    providerOf: (model) => {
      const ref = model || defaultRef;
      const f = facts.get(ref);
      return { ref, provider: f?.provider ?? "", demo: f?.demo ?? false };
    },
  };

  const fail = (e: ActionError): ActionError => {
    if (e.code !== "aborted") toast.value = e;
    return e;
  };

  // ---- sessions list ----

  const sortSessions = (list: Session[]) => list.slice().sort((a, b) => (a.updated_at < b.updated_at ? 1 : a.updated_at > b.updated_at ? -1 : 0));

  const patchSession = (id: string, fn: (s: Session) => Session): boolean => {
    const list = sessions.peek();
    const i = list.findIndex((s) => s.id === id);
    if (i < 0) return false;
    const next = list.slice();
    next[i] = fn(list[i]);
    sessions.value = sortSessions(next);
    return true;
  };

  const upsertSession = (s: Session) => {
    if (!patchSession(s.id, () => s)) sessions.value = sortSessions([s, ...sessions.peek()]);
  };

  /** A session's status once run `runId` stops keeping it busy. */
  const settle = (s: Session, runId: string): Session => {
    const wasActive = s.active_run_id === runId;
    const queued = wasActive ? s.queued_runs : Math.max(0, s.queued_runs - 1);
    const activeRun = wasActive ? undefined : s.active_run_id;
    return { ...s, active_run_id: activeRun, queued_runs: queued, status: activeRun ? s.status : queued > 0 ? "queued" : "idle" };
  };

  const titleOf = (sid: string) => sessions.peek().find((s) => s.id === sid)?.title || "New session";

  /** Applies a lifecycle event to the sessions list and the pending
   * requests; `fresh` events may also raise a browser notification. */
  const applyLifecycle = (ev: Envelope, fresh: boolean) => {
    const known = patchSession(ev.session_id, (s) => {
      switch (ev.type) {
        case "run.queued":
          return { ...s, updated_at: ev.ts, queued_runs: s.queued_runs + 1, status: s.status === "idle" ? "queued" : s.status };
        case "run.started":
          return { ...s, status: "running", active_run_id: ev.run_id, queued_runs: s.active_run_id === ev.run_id ? s.queued_runs : Math.max(0, s.queued_runs - 1) };
        case "run.status": {
          const st = (ev.payload as P.RunStatusP).status as Session["status"];
          if (st === "interrupted") return settle(s, ev.run_id); // no longer keeps the session busy
          return { ...s, status: st, active_run_id: ev.run_id };
        }
        case "run.done":
          return { ...settle(s, ev.run_id), updated_at: ev.ts };
        case "title.updated":
          return { ...s, title: (ev.payload as P.TitleP).title };
        default:
          return s;
      }
    });
    if (!known) scheduleRefresh(); // a session created elsewhere

    switch (ev.type) {
      case "approval.requested":
      case "clarify.requested": {
        const p = ev.payload as P.RequestedP & { expires_at?: string | null };
        if (!pending.peek().some((r) => r.id === p.request_id)) {
          const req: HumanRequest = {
            id: p.request_id, kind: ev.type === "approval.requested" ? "approval" : "clarify", status: "pending",
            run_id: ev.run_id, session_id: ev.session_id, tool_call_id: p.tool_call_id,
            prompt: ev.payload as HumanRequest["prompt"], created_at: ev.ts, expires_at: p.expires_at ?? null, resolved_at: null,
          };
          pending.value = [...pending.peek(), req];
          if (fresh && (document.hidden || ev.session_id !== activeId.peek())) {
            showRequest(ev, titleOf(ev.session_id), () => selectSession(ev.session_id));
          }
        }
        break;
      }
      case "approval.resolved":
      case "clarify.resolved": {
        const id = (ev.payload as P.ResolvedP).request_id;
        if (pending.peek().some((r) => r.id === id)) pending.value = pending.peek().filter((r) => r.id !== id);
        break;
      }
      case "run.done": // requests of an ended run are closed with it
        if (pending.peek().some((r) => r.run_id === ev.run_id)) pending.value = pending.peek().filter((r) => r.run_id !== ev.run_id);
        break;
    }
  };

  /** Refetches the sessions list and pending requests, then re-applies the
   * lifecycle events newer than the list's cursor. */
  const refreshLists = async (): Promise<void> => {
    const s = await api.get<{ sessions: Session[]; last_event_id: number }>("/api/sessions?limit=200");
    if (!s.ok) return;
    // Pending after the list, so it reflects at least the list's cursor.
    const r = await api.get<{ requests: HumanRequest[] }>("/api/requests?status=pending");
    batch(() => {
      sessions.value = sortSessions(s.value.sessions);
      if (r.ok) pending.value = r.value.requests;
      const cur = s.value.last_event_id ?? 0;
      for (const ev of buffer) if (ev.id > cur) applyLifecycle(ev, false);
      listCursor = Math.max(listCursor, cur);
    });
  };

  const scheduleRefresh = () => {
    clearTimeout(refreshTimer);
    refreshTimer = window.setTimeout(() => void refreshLists(), 300);
  };

  // ---- the stream ----

  const onEvents = (evs: Envelope[]) => {
    batch(() => {
      for (const ev of evs) {
        if (ev.type === "resync") {
          resync();
          return; // what follows is the stream replaying from scratch
        }
        if (ev.id > listCursor) {
          if (LIFECYCLE.has(ev.type)) {
            applyLifecycle(ev, true);
            buffer.push(ev);
            if (buffer.length > BUFFER_SIZE) buffer = buffer.slice(-BUFFER_SIZE);
          }
          listCursor = ev.id;
        }
        const m = activeModel.peek();
        if (m && ev.session_id === m.state.id && streamSession === m.state.id && m.state.loaded.peek()) {
          if (apply(m, ev, env)) applied++;
        }
      }
    });
  };

  const stream = createStream({
    url: (after) => {
      const q = new URLSearchParams({ after: String(after) });
      if (streamSession) q.set("session", streamSession);
      return `/api/events?${q}`;
    },
    onEvents,
    onOpen: () => void refreshLists(),
    onRefused: () => {
      // Most likely the session on screen is gone (deleted in another tab).
      const sid = streamSession;
      if (!sid) return;
      void api.get<Session>(`/api/sessions/${sid}`).then((r) => {
        if (!r.ok && r.error.code === "not_found" && activeId.peek() === sid) {
          dropSession(sid);
          selectSession(null, { replace: true });
        }
      });
    },
    onConnection: (c) => (connection.value = c),
  });

  /** The journal was replaced under us: start over from fresh snapshots. */
  const resync = () => {
    stream.close();
    listCursor = 0;
    buffer = [];
    cache.clear();
    const sid = activeId.peek();
    void refreshLists().then(() => {
      if (sid && activeId.peek() === sid) void load(sid, true);
      else openStream(null, listCursor, true);
    });
  };

  const openStream = (sid: string | null, after: number, reset = false) => {
    streamSession = sid;
    stream.open(after, reset);
  };

  // ---- the session on screen ----

  const dropSession = (id: string) => {
    cache.delete(id);
    sessions.value = sessions.peek().filter((s) => s.id !== id);
    pending.value = pending.peek().filter((r) => r.session_id !== id);
  };

  /** Loads (or re-syncs) session `id` and moves the stream onto it. */
  const load = async (id: string, reset = false): Promise<void> => {
    const seq = ++loadSeq;
    usageAbort?.abort();
    const msgs = await api.get<{ items: Item[]; last_event_id: number }>(`/api/sessions/${id}/messages`);
    if (seq !== loadSeq) return;
    if (!msgs.ok) {
      if (msgs.error.code === "not_found") {
        dropSession(id);
        toast.value = { code: "not_found", message: "That session does not exist any more." };
        selectSession(null, { replace: true });
      } else {
        // Server unreachable: keep what we show and try again shortly.
        window.setTimeout(() => seq === loadSeq && void load(id, reset), 2000);
      }
      return;
    }
    const runs = await api.get<{ runs: Run[] }>(`/api/sessions/${id}/runs`);
    if (seq !== loadSeq) return;
    if (!runs.ok) {
      window.setTimeout(() => seq === loadSeq && void load(id, reset), 2000);
      return;
    }
    const m = cache.get(id) ?? newSessionModel(id);
    remember(m);
    batch(() => {
      loadSnapshot(m, msgs.value.items, runs.value.runs, msgs.value.last_event_id, env);
      if (activeId.peek() === id) activeModel.value = m;
    });
    // Resume from the snapshot, or from where the tab's stream was if that
    // is older: lifecycle events of other sessions in between still count.
    const seen = Math.max(stream.lastId(), listCursor);
    openStream(id, reset || seen === 0 ? msgs.value.last_event_id : Math.min(msgs.value.last_event_id, seen), reset);
    // The context size lives in usage events, which the snapshot lacks:
    // read the last finished run's events for it (in the background).
    const lastDone = [...runs.value.runs].reverse().find((r) => r.terminal && r.started_at);
    if (lastDone) {
      const ctl = (usageAbort = new AbortController());
      void api.readFinishedRun<Envelope>(lastDone.id, ctl.signal).then((evs) => {
        if (!ctl.signal.aborted && activeModel.peek() === m) applyRunUsage(m, evs);
      });
    }
  };

  const remember = (m: SessionModel) => {
    cache.delete(m.state.id);
    cache.set(m.state.id, m);
    for (const id of cache.keys()) {
      if (cache.size <= CACHE_SIZE) break;
      if (id !== activeId.peek()) cache.delete(id);
    }
  };

  function selectSession(id: string | null, opts: { push?: boolean; replace?: boolean } = {}): void {
    const path = sessionPath(id);
    if (opts.replace) history.replaceState(null, "", path);
    else if (opts.push !== false && location.pathname !== path) history.pushState(null, "", path);
    if (id === activeId.peek() && (id === null || activeModel.peek()?.state.id === id)) return;
    activeId.value = id;
    if (!id) {
      activeModel.value = null;
      loadSeq++;
      openStream(null, Math.max(stream.lastId(), listCursor));
      return;
    }
    // A cached session shows at once; load() re-syncs it.
    const cached = cache.get(id);
    activeModel.value = cached ?? newSessionModel(id);
    void load(id);
  }

  // ---- actions ----

  const activeSession = () => {
    const id = activeId.peek();
    return id ? sessions.peek().find((s) => s.id === id) ?? null : null;
  };

  const store: Store & StoreInternals = {
    meta, sessions, sessionFilter, visibleSessions, activeId, active, pending, models, commands, connection, toast, notify,

    selectSession: (id) => selectSession(id),

    async createSession() {
      const r = await api.post<Session>("/api/sessions", {});
      if (!r.ok) return fail(r.error);
      upsertSession(r.value);
      selectSession(r.value.id);
      return null;
    },

    async renameSession(id, title) {
      const r = await api.patch<Session>(`/api/sessions/${id}`, { title: title.trim() });
      if (!r.ok) return fail(r.error);
      patchSession(id, (s) => ({ ...s, title: r.value.title }));
      return null;
    },

    async deleteSession(id) {
      const r = await api.del(`/api/sessions/${id}`);
      if (!r.ok) {
        if (r.error.code === "session_busy") return fail({ code: r.error.code, message: `Cannot delete this session: ${r.error.message}.` });
        return fail(r.error);
      }
      dropSession(id);
      if (activeId.peek() === id) selectSession(null, { replace: true });
      return null;
    },

    async send(content) {
      const id = activeId.peek();
      if (!id) return fail({ code: "no_session", message: "Open or create a session first." });
      const r = await api.post<Run>(`/api/sessions/${id}/messages`, { content });
      return r.ok ? null : fail(r.error);
    },

    async stop() {
      const run = activeModel.peek()?.state.busyRun.peek();
      const id = run?.id ?? activeSession()?.active_run_id;
      if (!id) return null; // nothing running: stopping is a no-op
      const r = await api.post<Run>(`/api/runs/${id}/cancel`);
      return r.ok ? null : fail(r.error);
    },

    async cancelRun(runId) {
      const r = await api.post<Run>(`/api/runs/${runId}/cancel`);
      return r.ok ? null : fail(r.error);
    },

    async respond(requestId, body) {
      const r = await api.post<HumanRequest>(`/api/requests/${requestId}/respond`, body);
      if (r.ok || r.error.code === "not_pending") pending.value = pending.peek().filter((q) => q.id !== requestId);
      if (!r.ok) return fail(r.error.code === "not_pending" ? { code: "not_pending", message: "This request was already answered or has ended." } : r.error);
      return null;
    },

    async setModel(ref) {
      const id = activeId.peek();
      if (!id) return fail({ code: "no_session", message: "Open or create a session first." });
      const r = await api.patch<Session>(`/api/sessions/${id}`, { model: ref });
      if (!r.ok) return fail(r.error);
      patchSession(id, (s) => ({ ...s, model: r.value.model }));
      return null;
    },

    async compact() {
      const id = activeId.peek();
      if (!id) return fail({ code: "no_session", message: "Open or create a session first." });
      const r = await api.post<Run>(`/api/sessions/${id}/compact`);
      if (!r.ok) return fail(r.error.code === "session_busy" ? { code: "session_busy", message: "Compaction needs an idle session: wait for the run to finish or stop it." } : r.error);
      return null;
    },

    async enableNotifications() {
      notify.value = await requestPermission();
    },

    toggleMute() {
      setMuted(notify.peek() !== "muted");
      notify.value = notifyState();
    },

    start() {
      window.addEventListener("popstate", () => selectSession(idFromPath(location.pathname), { push: false }));
      // The debug hooks appear once the version is known, so a test that
      // waits for them can read all of them.
      void api.get<Meta>("/api/meta").then((r) => {
        if (r.ok) meta.value = r.value;
        createDebugHooks(store, {
          handledEventTypes: () => Object.keys(handlers),
          lastEventId: () => Math.max(stream.lastId(), activeModel.peek()?.state.cursor ?? 0),
          streamOpens: () => stream.opens(),
          applied: () => applied,
        });
      });
      void api.get<{ commands: Command[] }>("/api/commands").then((r) => {
        if (r.ok) commands.value = r.value.commands;
      });
      // Models first: the usage meter needs their context windows.
      void Promise.all([loadModels(), refreshLists()]).then(() => {
        const id = activeId.peek();
        if (id) {
          activeModel.value = newSessionModel(id);
          void load(id);
        } else openStream(null, listCursor);
      });
    },

  };

  const loadModels = async () => {
    interface Provider { name: string; demo?: boolean; error?: string; models?: { ref: string; name: string; context_window?: number }[] }
    const r = await api.get<{ default: string; providers: Provider[] }>("/api/models");
    if (!r.ok) return;
    defaultRef = r.value.default;
    const out: ModelChoice[] = [];
    for (const p of r.value.providers ?? []) {
      for (const mo of p.models ?? []) {
        facts.set(mo.ref, { provider: p.name, demo: !!p.demo, contextWindow: mo.context_window ?? 0 });
        out.push({ ref: mo.ref, provider: p.name, label: mo.name }); // grouped under the provider's name
      }
    }
    models.value = out;
  };

  return store;
}

/** The label of the "server default" model choice, e.g. "Default (demo)". */
export const defaultModelLabel = (meta: Meta | null) => (meta?.default_model ? `Default (${meta.default_model})` : "Default");
