// The store: everything the views read, and every action they take. It
// holds the sessions list, the pending requests of every session, and the
// live state of the session on screen (plus a few recently viewed ones, so
// switching back shows something at once while it re-syncs).
//
// Consistency model. Lists (sessions, pending requests) are refetched on
// every stream (re)open; GET /api/sessions returns the cursor it was read
// at, and the lifecycle events we hold past that cursor are re-applied on
// top, so a refetch never rolls the sidebar back. Between refetches the
// stream keeps the list current on its own: session.created inserts,
// session.updated and title.updated rename, session.deleted removes, from
// this tab, another one or any other client. A deleted session that is on
// screen gives way to its neighbour in the list (or the empty state), with
// a notice when someone else deleted it. The sessions list is
// paged (50 a page, newest first): a refetch reads the first page and keeps
// the older pages the person scrolled in (see mergeFirstPage). The session on screen is
// GET .../messages + GET .../runs, then the stream resumes after the
// snapshot's cursor and the reducer drops what the snapshot already had.
//
// Runner health (health.ts): runners are separate processes the stream says
// nothing about, so GET /api/health is how the page learns none is alive.
//
// Access token: a server run with CADUCEUS_TOKEN answers 401 to every /api
// call without it. The first 401 blocks the store (no stream, no retries)
// and raises `auth`, the shell asks for the token, and submitToken() loads
// everything again with it.
//
// Sign-in (auth.ts): before anything else the store asks GET /api/auth/me.
// When people sign in on this server and nobody is, the sign-in page comes
// first and the workbench loads after it; a 401 later (the session expired,
// the account was disabled) blocks the store the same way and goes back to
// the sign-in page instead of the token dialog.

import { batch, computed, signal } from "@preact/signals";
import { createApi } from "./api";
import { createAccount } from "./auth";
import type { ActionError, AuthPrompt, Meta, ModelChoice, Store } from "./contract";
import { createDebugHooks } from "./debug";
import { notifyState, requestPermission, setMuted, showJobResult, showRequest } from "./notify";
import { createJobResults, resultWords, type JobResult } from "./jobResults";
import type * as P from "./payloads";
import {
  apply, handlers, loadSnapshot, newSessionModel, setWaiting, stoppableRun, waitingRuns, type ReduceEnv, type SessionModel,
} from "./reducer";
import { createStream } from "./stream";
import { createHealthWatch } from "./health";
import { mergeFirstPage, mergePage, sortSessions } from "./sessionList";
import { loadToken, saveToken } from "./token";
import type {
  Goal,
  Attachment, Command, Connection, Envelope, EventType, Health, HumanRequest, Run, Session, Snapshot,
  SessionCreatedP, SessionDeletedP, SessionEventType, SessionUpdatedP, ProjectDeletedP,
} from "./types";

type AnyEventType = EventType | SessionEventType;
/** Session lifecycle types: applied here, to the sessions list (the
 * reducer folds the rest). Listed for window.caduceus.handledEventTypes(). */
const SESSION_EVENTS: readonly SessionEventType[] = ["session.created", "session.updated", "session.deleted",
  "project.created", "project.updated", "project.deleted"];
/** Lifecycle events: the ones GET /api/events carries from every session. */
const LIFECYCLE: ReadonlySet<AnyEventType> = new Set<AnyEventType>([
  "run.queued", "run.started", "run.status", "run.done", "title.updated",
  "approval.requested", "approval.resolved", "clarify.requested", "clarify.resolved",
  ...SESSION_EVENTS,
]);
const CACHE_SIZE = 4; // recently viewed sessions kept in memory
const BUFFER_SIZE = 500; // lifecycle events kept to re-apply after a list refetch
const SESSIONS_PAGE = 50; // GET /api/sessions page size (the server's default)
const HEALTH_EVERY_MS = 15_000; // health poll while the tab is visible
const HEALTH_AFTER_EVENT_MS = 250; // a burst of run events costs one fetch
const WAITING_AFTER_EVENT_MS = 300; // likewise for the reasons runs wait
/** Run events that change what GET /api/health counts. */
const RUN_EVENTS: ReadonlySet<AnyEventType> = new Set<AnyEventType>(["run.queued", "run.started", "run.status", "run.done"]);

interface ModelFacts { provider: string; demo: boolean; contextWindow: number }
interface SessionPage { sessions: Session[]; next_cursor: string; last_event_id: number }

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
  const jobResult = signal<JobResult | null>(null);
  let notifyPrefs = { approvals: true, questions: true };
  const auth = signal<AuthPrompt | null>(null);
  // next_cursor of the deepest sessions page loaded ("" = none left).
  const sessionsNext = signal("");
  const sessionsMore = computed(() => sessionsNext.value !== "");

  // ---- private state ----
  const cache = new Map<string, SessionModel>();
  const facts = new Map<string, ModelFacts>();
  let defaultRef = "";
  let listCursor = 0; // highest event id the sessions list reflects
  let buffer: Envelope[] = []; // recent lifecycle events, ascending ids
  let streamSession: string | null = null; // the session the open stream carries in full
  let loadSeq = 0;
  let applied = 0;
  let refreshTimer = 0;
  let deepPages = false; // pages past the first are loaded
  let moreLoading: Promise<ActionError | null> | null = null;
  let token = loadToken();
  let blocked = false; // the server refused our token: wait for a new one
  const deleting = new Set<string>(); // sessions this tab is deleting: no "deleted elsewhere" notice
  const projectListeners = new Set<(ev: Envelope | null) => void>(); // the sidebar's projects (onProjectEvent)
  let hooksReady = false;
  let waitingTimer = 0;

  const api = createApi({
    token: () => token,
    csrf: () => account.csrf(),
    onUnauthorized: (sent) => {
      if (sent !== token) return; // sent before the person gave a new token
      blocked = true;
      stream.close();
      if (sent) {
        // A wrong or changed token: forget it, ask again with the reason.
        token = "";
        saveToken("");
      }
      const ask = () => {
        if (!auth.peek() || sent) auth.value = { error: sent ? "That token was not accepted. Check it and try again." : null };
      };
      if (account.ended()) return; // people sign in here: the sign-in page
      // We never learnt whether people sign in here (/me did not answer at
      // load): ask now, and raise the token dialog only if they do not.
      if (!account.me.peek()) void account.check().then((g) => g !== "signin" && ask());
      else ask();
    },
    // An admin changed our role meanwhile: ask again, so the controls
    // follow (the refusal itself is the action's toast).
    onForbidden: () => void account.check(),
    freshCsrf: () => account.check().then(() => account.csrf()),
  });

  const account = createAccount(api, {
    onSignedIn: () => {
      blocked = false;
      boot();
    },
    forgetToken: () => {
      token = "";
      saveToken("");
    },
    restart: () => location.assign("/"),
  });

  const watch = createHealthWatch({
    get: () => api.get<Health>("/api/health"),
    blocked: () => blocked,
    // A runner coming or going changes why runs wait.
    answered: () => refreshWaiting(),
  });
  const { health, runnerAlert } = watch;
  // Scheduled jobs' results (issue 17): a toast here, a notification when allowed.
  const jobResults = createJobResults({
    get: (path) => api.get(path),
    show: (r) => {
      jobResult.value = r;
      showJobResult(resultWords(r), r.runId, () => selectSession(r.sessionId));
    },
  });
  const refreshHealth = watch.refresh;

  const env: ReduceEnv = {
    contextWindowOf: (model) => facts.get(model || defaultRef)?.contextWindow ?? 0,
    providerOf: (model) => {
      const ref = model || defaultRef;
      const f = facts.get(ref);
      return { ref, provider: f?.provider ?? "", demo: f?.demo ?? false };
    },
  };

  const fail = (e: ActionError): ActionError => {
    // A 401 is the token dialog's to explain, not a toast's.
    if (e.code !== "aborted" && e.code !== "unauthorized") toast.value = e;
    return e;
  };

  // ---- sessions list ----

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
    if (applySessionEvent(ev)) return;
    const known = patchSession(ev.session_id, (s) => {
      switch (ev.type) {
        case "run.queued":
          return { ...s, updated_at: ev.ts, queued_runs: s.queued_runs + 1, status: s.status === "idle" ? "queued" : s.status };
        case "run.started":
          return { ...s, status: "running", active_run_id: ev.run_id, queued_runs: s.active_run_id === ev.run_id ? s.queued_runs : Math.max(0, s.queued_runs - 1) };
        case "run.status": {
          const st = (ev.payload as P.RunStatusP).status as Session["status"];
          if (st === "interrupted") return settle(s, ev.run_id); // no longer keeps the session busy
          if (st === "queued") {
            // The run waits for a runner again (answered after parking,
            // handed over, recovering): it leaves "active" and counts as
            // queued, as the server's list counts it. A run the list
            // already shows as queued (this event replayed on a list read
            // after it) is not counted twice.
            if (s.active_run_id !== ev.run_id) return { ...s, status: s.active_run_id ? s.status : "queued" };
            return { ...s, active_run_id: undefined, queued_runs: s.queued_runs + 1, status: "queued" };
          }
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
          // Only someone who may answer is called for.
          const wanted = ev.type === "approval.requested" ? notifyPrefs.approvals : notifyPrefs.questions;
          if (fresh && wanted && account.permissions.peek().operate && (document.hidden || ev.session_id !== activeId.peek())) {
            showRequest(ev, titleOf(ev.session_id), () => selectSession(ev.session_id));
          }
        }
        break;
      }
      case "approval.resolved":
      case "clarify.resolved": {
        const id = (ev.payload as P.ResolvedP).request_id;
        if (pending.peek().some((r) => r.id === id)) pending.value = pending.peek().filter((r) => r.id !== id);
        // The person has done their part: until a runner takes the run on
        // (its run.status running), it waits for a runner, not for them.
        if (!pending.peek().some((r) => r.run_id === ev.run_id)) {
          patchSession(ev.session_id, (s) =>
            s.active_run_id === ev.run_id && (s.status === "awaiting_approval" || s.status === "awaiting_clarify") ? { ...s, status: "answered" } : s);
        }
        break;
      }
      case "run.done": // requests of an ended run are closed with it
        if (pending.peek().some((r) => r.run_id === ev.run_id)) pending.value = pending.peek().filter((r) => r.run_id !== ev.run_id);
        if (fresh) void jobResults.runDone(ev);
        break;
    }
  };

  /** Applies a session.* event to the list; false for any other type. Each
   * is idempotent: a refetch re-applies the ones past its cursor. */
  const applySessionEvent = (ev: Envelope): boolean => {
    switch (ev.type) {
      case "session.created": {
        const p = (ev.payload as SessionCreatedP).session;
        // Our own create may have inserted it already, with run state.
        if (p && !sessions.peek().some((s) => s.id === p.id)) {
          const { delegated_session_id: dsid, delegated_run_id: drun, delegated_call_id: dcall, ...rest } = p;
          const delegated_by = dsid ? { session_id: dsid, run_id: drun ?? "", tool_call_id: dcall ?? "" } : undefined;
          upsertSession({ ...rest, status: "idle", queued_runs: 0, ...(delegated_by ? { delegated_by } : {}) });
        }
        return true;
      }
      case "session.updated": {
        const p = ev.payload as SessionUpdatedP;
        const known = patchSession(ev.session_id, (s) => ({
          ...s,
          ...(p.title !== undefined ? { title: p.title } : {}),
          ...(p.model !== undefined ? { model: p.model } : {}),
          ...(p.pinned !== undefined ? { pinned: p.pinned } : {}),
          ...(p.archived !== undefined ? { archived_at: p.archived ? p.archived_at ?? p.updated_at : null } : {}),
          ...(p.project_id !== undefined ? { project_id: p.project_id || null } : {}),
          ...(p.profile_id !== undefined ? { profile_id: p.profile_id } : {}), // h16-profiles
          updated_at: p.updated_at && p.updated_at > s.updated_at ? p.updated_at : s.updated_at,
        }));
        // On a page not loaded: the update moved it to the top, so the
        // first page has it now.
        if (!known) scheduleRefresh();
        return true;
      }
      case "session.deleted":
        sessionGone((ev.payload as SessionDeletedP).id || ev.session_id, deleting.has(ev.session_id) ? null : "deleted");
        return true;
      case "project.created":
      case "project.updated":
      case "project.deleted": {
        // A deleted project's sessions are in none: no session.updated
        // says so for each.
        if (ev.type === "project.deleted") {
          const pid = (ev.payload as ProjectDeletedP).id || ev.session_id;
          if (sessions.peek().some((s) => s.project_id === pid)) {
            sessions.value = sessions.peek().map((s) => (s.project_id === pid ? { ...s, project_id: null } : s));
          }
        }
        for (const fn of projectListeners) fn(ev);
        return true;
      }
    }
    return false;
  };

  /** Refetches the first page of sessions (keeping older pages loaded)
   * and the pending requests, then re-applies the lifecycle events newer
   * than the list's cursor. */
  const refreshLists = async (): Promise<void> => {
    const s = await api.get<SessionPage>(`/api/sessions?limit=${SESSIONS_PAGE}`);
    if (!s.ok) return;
    const shown = activeId.peek();
    const before = visibleSessions.peek();
    // Pending after the list, so it reflects at least the list's cursor.
    const r = await api.get<{ requests: HumanRequest[] }>("/api/requests?status=pending");
    batch(() => {
      const next = s.value.next_cursor ?? "";
      sessions.value = mergeFirstPage(sessions.peek(), s.value.sessions, next, shown);
      // The keyset cursor past the deepest page stays valid; with only the
      // first page (or all of it in one page) the new one takes over.
      if (!deepPages || !next) {
        sessionsNext.value = next;
        deepPages = false;
      }
      if (r.ok) pending.value = r.value.requests;
      const cur = s.value.last_event_id ?? 0;
      for (const ev of buffer) if (ev.id > cur) applyLifecycle(ev, false);
      listCursor = Math.max(listCursor, cur);
    });
    // A session deleted while the stream was away leaves the fresh list,
    // and its session.deleted, older than the list's cursor, is skipped:
    // if it is the one on screen, ask whether it still exists.
    if (shown && activeId.peek() === shown && before.some((x) => x.id === shown) && !sessions.peek().some((x) => x.id === shown)) {
      const g = await api.get<Session>(`/api/sessions/${shown}`);
      if (!g.ok && g.error.code === "not_found" && activeId.peek() === shown) {
        const kept = before.filter((x) => x.id === shown || sessions.peek().some((y) => y.id === x.id));
        sessionGone(shown, "deleted", kept);
      }
    }
  };

  /** Appends the next page of sessions. A refetch that changed the paging
   * meanwhile wins: the page is dropped and the sentinel asks again. */
  const loadMoreSessions = (): Promise<ActionError | null> => {
    const cur = sessionsNext.peek();
    if (moreLoading || !cur || blocked) return moreLoading ?? Promise.resolve(null);
    moreLoading = (async () => {
      const r = await api.get<SessionPage>(`/api/sessions?limit=${SESSIONS_PAGE}&cursor=${encodeURIComponent(cur)}`);
      moreLoading = null;
      if (!r.ok) return fail(r.error);
      if (sessionsNext.peek() !== cur) return null;
      batch(() => {
        sessions.value = mergePage(sessions.peek(), r.value.sessions);
        sessionsNext.value = r.value.next_cursor ?? "";
        deepPages = true;
      });
      return null;
    })();
    return moreLoading;
  };

  /** Reads what the waiting runs of the session on screen wait for (a
   * runner, a slot and their place in line, the previous run), after
   * `delay` ms; a read already due stays due. */
  const refreshWaiting = (delay = 0) => {
    if (waitingTimer) return;
    waitingTimer = window.setTimeout(() => {
      waitingTimer = 0;
      const m = activeModel.peek();
      if (!m || !m.state.loaded.peek()) return;
      for (const r of waitingRuns(m.state)) {
        void api.get<Run>(`/api/runs/${r.id}`).then((res) => {
          if (res.ok && activeModel.peek() === m) batch(() => setWaiting(m, r.id, res.value.waiting));
        });
      }
    }, delay);
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
          if (RUN_EVENTS.has(ev.type)) {
            refreshHealth(HEALTH_AFTER_EVENT_MS);
            // Any run starting or ending anywhere can move the line.
            refreshWaiting(WAITING_AFTER_EVENT_MS);
          } else if (ev.type === "approval.resolved" || ev.type === "clarify.resolved") refreshWaiting(WAITING_AFTER_EVENT_MS);
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
          // Another branch of the conversation: the server's fold of it
          // replaces what the reducer built along the old one.
          if (newBranch(ev)) void load(m.state.id, true);
        }
      }
    });
  };

  const stream = createStream({
    url: (after) => {
      const q = new URLSearchParams({ after: String(after) });
      if (streamSession) q.set("session", streamSession);
      // EventSource cannot send headers: the server takes the token from
      // the query on event streams only.
      if (token) q.set("access_token", token);
      return `/api/events?${q}`;
    },
    onEvents,
    onOpen: () => {
      void refreshLists();
      refreshHealth();
    },
    onRefused: () => {
      // Most likely the session on screen is gone (deleted in another tab),
      // or the server wants a token: a plain request tells which (a 401
      // blocks the store and closes the stream).
      const sid = streamSession;
      void api.get<unknown>(sid ? `/api/sessions/${sid}` : "/api/meta").then((r) => {
        if (sid && !r.ok && r.error.code === "not_found") sessionGone(sid, "missing");
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
    for (const fn of projectListeners) fn(null);
    const sid = activeId.peek();
    void refreshLists().then(() => {
      if (sid && activeId.peek() === sid) void load(sid, true);
      else openStream(null, listCursor, true);
    });
  };

  const openStream = (sid: string | null, after: number, reset = false) => {
    streamSession = sid;
    if (blocked) return; // reopened by boot() once there is a token
    stream.open(after, reset);
  };

  // ---- the session on screen ----

  const dropSession = (id: string) => {
    cache.delete(id);
    if (sessions.peek().some((s) => s.id === id)) sessions.value = sessions.peek().filter((s) => s.id !== id);
    if (pending.peek().some((r) => r.session_id === id)) pending.value = pending.peek().filter((r) => r.session_id !== id);
  };

  /** Session `id` no longer exists: it leaves the list, and if it is on
   * screen its neighbour in the list (the next older, else the next newer)
   * takes its place, or the empty state when none is left. `notice` says
   * why when it was on screen: "deleted" (someone else deleted it) or
   * "missing" (it was already gone when we looked). `list` is where its
   * neighbours are looked up (by default the list as shown). */
  const sessionGone = (id: string, notice: "deleted" | "missing" | null, list = visibleSessions.peek()) => {
    const shown = activeId.peek() === id;
    const i = list.findIndex((s) => s.id === id);
    const title = i >= 0 ? list[i].title : "";
    const next = i < 0 ? null : (list[i + 1] ?? list[i - 1] ?? null);
    dropSession(id);
    if (!shown) return;
    if (notice) {
      const name = title ? `“${title}”` : "This session";
      const why = notice === "deleted" ? "was deleted in another tab or by another client" : "no longer exists: it was deleted";
      toast.value = {
        code: "session_deleted",
        message: `${name} ${why}.${next ? ` Showing “${next.title || "New session"}” instead.` : ""}`,
      };
    }
    selectSession(next?.id ?? null, { replace: true });
  };

  /** An action on session `id` found it deleted (before its session.deleted
   * arrived): the session goes with a notice instead of an error toast.
   * Returns the error when that is what happened, else null. */
  const gone = (id: string, e: ActionError): ActionError | null => {
    if (e.code !== "not_found") return null;
    sessionGone(id, "missing");
    return e;
  };

  /** Loads (or re-syncs) session `id` and moves the stream onto it. */
  const load = async (id: string, reset = false): Promise<void> => {
    const seq = ++loadSeq;
    const msgs = await api.get<Snapshot>(`/api/sessions/${id}/messages`);
    if (seq !== loadSeq) return;
    if (!msgs.ok) {
      if (msgs.error.code === "unauthorized") return; // boot() loads it again
      if (msgs.error.code === "not_found") {
        sessionGone(id, "missing");
      } else {
        // Server unreachable: keep what we show and try again shortly.
        window.setTimeout(() => seq === loadSeq && void load(id, reset), 2000);
      }
      return;
    }
    const runs = await api.get<{ runs: Run[] }>(`/api/sessions/${id}/runs`);
    if (seq !== loadSeq) return;
    if (!runs.ok) {
      if (runs.error.code === "unauthorized") return;
      window.setTimeout(() => seq === loadSeq && void load(id, reset), 2000);
      return;
    }
    // The header and actions read the session from the list, which holds
    // only the pages loaded: an older session opened by its address joins
    // it (the next page that holds it de-duplicates).
    if (!sessions.peek().some((x) => x.id === id)) {
      void api.get<Session>(`/api/sessions/${id}`).then((r) => {
        if (r.ok && seq === loadSeq) upsertSession(r.value);
      });
    }
    const m = cache.get(id) ?? newSessionModel(id);
    remember(m);
    batch(() => {
      loadSnapshot(m, msgs.value, runs.value.runs, env);
      if (activeId.peek() === id) activeModel.value = m;
    });
    // The goal is not in the snapshot; goal.updated keeps it live after.
    void api.get<Goal>(`/api/sessions/${id}/goal`).then((g) => {
      if (seq === loadSeq) m.state.goal.value = g.ok ? g.value : null;
    });
    // Resume from the snapshot, or from where the tab's stream was if that
    // is older: lifecycle events of other sessions in between still count.
    const seen = Math.max(stream.lastId(), listCursor);
    openStream(id, reset || seen === 0 ? msgs.value.last_event_id : Math.min(msgs.value.last_event_id, seen), reset);
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
    // The query (a search and its filters, issue 15) stays with the page.
    if (opts.replace) history.replaceState(null, "", path + location.search);
    else if (opts.push !== false && location.pathname !== path) history.pushState(null, "", path + location.search);
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
    meta, sessions, sessionsMore, sessionFilter, visibleSessions, activeId, active, pending, models, commands, connection, toast, jobResult, notify, auth,
    health, runnerAlert, account, api,

    selectSession: (id) => selectSession(id),
    loadMoreSessions,

    submitToken(t) {
      token = t;
      saveToken(t);
      blocked = false;
      auth.value = null;
      // The token decides who we are: ask /me again, so that the account
      // menu and the controls follow it.
      void account.check().then((g) => {
        if (g === "app" && !blocked) boot();
      });
    },

    async createSession(workspace?: string, projectId?: string, profileId?: string) {
      const r = await api.post<Session>("/api/sessions", { ...(workspace ? { workspace } : {}), ...(projectId ? { project_id: projectId } : {}),
        ...(profileId ? { profile_id: profileId } : {}) });
      if (!r.ok) return fail(r.error);
      upsertSession(r.value);
      selectSession(r.value.id);
      return null;
    },

    async renameSession(id, title) {
      const r = await api.patch<Session>(`/api/sessions/${id}`, { title: title.trim() });
      if (!r.ok) return gone(id, r.error) ?? fail(r.error);
      patchSession(id, (s) => ({ ...s, title: r.value.title }));
      return null;
    },

    async organise(id, patch) {
      const r = await api.patch<Session>(`/api/sessions/${id}`, patch);
      if (!r.ok) return gone(id, r.error) ?? fail(r.error);
      // The answer carries run state too: it replaces what we hold (and
      // brings back a session unarchived from the Archived view).
      upsertSession(r.value);
      return null;
    },

    onProjectEvent(fn) {
      projectListeners.add(fn);
      return () => void projectListeners.delete(fn);
    },

    async deleteSession(id) {
      // Its session.deleted may arrive before the answer: it is ours, so no
      // "deleted elsewhere" notice for it.
      deleting.add(id);
      const r = await api.del(`/api/sessions/${id}`);
      deleting.delete(id);
      // Already gone (deleted elsewhere meanwhile): what the person wanted.
      if (!r.ok && r.error.code !== "not_found") {
        if (r.error.code === "session_busy") return fail({ code: r.error.code, message: `Cannot delete this session: ${r.error.message}.` });
        return fail(r.error);
      }
      sessionGone(id, null);
      return null;
    },

    async putGoal(body) {
      const id = activeId.peek();
      if (!id) return fail({ code: "no_session", message: "Open or create a session first." });
      const r = await api.request<Goal>("PUT", `/api/sessions/${id}/goal`, body);
      if (!r.ok) return fail(r.error);
      const m = cache.get(id);
      if (m) m.state.goal.value = r.value;
      return null;
    },

    async clearGoal() {
      const id = activeId.peek();
      if (!id) return fail({ code: "no_session", message: "Open or create a session first." });
      const r = await api.request<Goal>("DELETE", `/api/sessions/${id}/goal`);
      if (!r.ok) return fail(r.error);
      const m = cache.get(id);
      if (m) m.state.goal.value = r.value;
      return null;
    },

    async send(content, attachments, ifBusy) {
      const id = activeId.peek();
      if (!id) return fail({ code: "no_session", message: "Open or create a session first." });
      const body: Record<string, unknown> = attachments?.length ? { content, attachments: attachments.map((a) => ({ path: a.path })) } : { content };
      if (ifBusy) body.if_busy = ifBusy;
      const r = await api.post<Run>(`/api/sessions/${id}/messages`, body);
      return r.ok ? null : fail(r.error);
    },

    async attachmentBlob(sessionId, path) {
      const r = await api.blob(attachmentURL(sessionId, path));
      return r.ok ? r.value : null;
    },

    async uploadFiles(files, onProgress) {
      const id = activeId.peek();
      if (!id) return { error: { code: "no_session", message: "Open or create a session first." } };
      const form = new FormData();
      for (const f of files) form.append("file", f, f.name);
      const r = await api.upload<{ attachments: Attachment[] }>(`/api/sessions/${id}/uploads`, form, onProgress);
      return r.ok ? { attachments: r.value.attachments } : { error: r.error };
    },

    async stop() {
      const s = activeModel.peek()?.state;
      const run = s ? stoppableRun(s) : null;
      const id = run?.id ?? activeSession()?.active_run_id;
      if (!id) return null; // nothing running: stopping is a no-op
      const r = await api.post<Run>(`/api/runs/${id}/cancel`);
      return r.ok ? null : fail(r.error);
    },

    async cancelRun(runId) {
      const r = await api.post<Run>(`/api/runs/${runId}/cancel`);
      return r.ok ? null : fail(r.error);
    },

    async resume(runId, budget) {
      const r = await api.post<Run>(`/api/runs/${runId}/resume`, budget ? { budget } : {});
      return r.ok ? null : fail(r.error);
    },

    // Budgets (h16-budgets).
    async pauseRun(runId) {
      const r = await api.post<Run>(`/api/runs/${runId}/pause`);
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
      if (!r.ok) return gone(id, r.error) ?? fail(r.error);
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

    async branch(itemId) {
      const id = activeId.peek();
      if (!id) return fail({ code: "no_session", message: "Open or create a session first." });
      const r = await api.post<Session>(`/api/sessions/${id}/branch`, { item_id: itemId });
      if (!r.ok) return fail(r.error);
      upsertSession(r.value);
      selectSession(r.value.id);
      return null;
    },

    // Versions of a conversation (issue 15).
    async retry(runId, model) {
      const r = await api.post<Run>(`/api/runs/${runId}/retry`, model ? { model } : {});
      return r.ok ? null : fail(busyNote(r.error));
    },

    async editMessage(itemId, content) {
      const id = activeId.peek();
      if (!id) return fail({ code: "no_session", message: "Open or create a session first." });
      const r = await api.post<Run>(`/api/sessions/${id}/edit`, { item_id: itemId, content });
      return r.ok ? null : fail(busyNote(r.error));
    },

    async continueRun(runId) {
      const r = await api.post<Run>(`/api/runs/${runId}/continue`, {});
      return r.ok ? null : fail(busyNote(r.error));
    },

    async selectVersion(itemId, version) {
      const id = activeId.peek();
      if (!id) return fail({ code: "no_session", message: "Open or create a session first." });
      const r = await api.post<unknown>(`/api/sessions/${id}/versions`, { item_id: itemId, version });
      return r.ok ? null : fail(busyNote(r.error));
    },

    async undo(turns, restore) {
      const id = activeId.peek();
      if (!id) return fail({ code: "no_session", message: "Open or create a session first." });
      const r = await api.post<unknown>(`/api/sessions/${id}/undo`, restore ? { restore: true } : { turns });
      return r.ok ? null : fail(busyNote(r.error));
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
      // A hidden tab does not poll; it looks again when it is shown.
      window.setInterval(() => !document.hidden && refreshHealth(), HEALTH_EVERY_MS);
      document.addEventListener("visibilitychange", () => !document.hidden && refreshHealth());
      // Who we are first: the sign-in page may come before anything loads.
      void account.check().then((g) => {
        if (g === "app") boot();
        else blocked = true;
      });
    },

  };

  /** Loads meta, commands, models, lists and the session in the address
   * bar, then opens the stream: at start, and again with a new token. */
  const boot = () => {
    // What the console's settings say to notify of (issue 16,
    // h16-providers); both stay on when the server keeps no settings.
    void api.get<{ effective: { notifications: { approvals: boolean; questions: boolean } } }>("/api/settings").then((r) => {
      if (r.ok && r.value.effective?.notifications) notifyPrefs = r.value.effective.notifications;
    });
    // The debug hooks appear once the version is known, so a test that
    // waits for them can read all of them.
    void api.get<Meta>("/api/meta").then((r) => {
      if (r.ok) meta.value = r.value;
      if (hooksReady || (!r.ok && r.error.code === "unauthorized")) return;
      hooksReady = true;
      createDebugHooks(store, {
        handledEventTypes: () => [...Object.keys(handlers), ...SESSION_EVENTS],
        lastEventId: () => Math.max(stream.lastId(), activeModel.peek()?.state.cursor ?? 0),
        streamOpens: () => stream.opens(),
        applied: () => applied,
        health: watch.stats,
      });
    });
    void api.get<{ commands: Command[] }>("/api/commands").then((r) => {
      if (r.ok) commands.value = r.value.commands;
    });
    refreshHealth();
    // Models first: the usage meter needs their context windows.
    void Promise.all([loadModels(), refreshLists()]).then(() => {
      if (blocked) return; // refused: the token dialog is up
      const id = activeId.peek();
      if (id) {
        if (activeModel.peek()?.state.id !== id) activeModel.value = newSessionModel(id);
        void load(id);
      } else openStream(null, listCursor);
    });
  };

  const loadModels = async () => {
    interface Provider { name: string; demo?: boolean; error?: string; models?: { ref: string; name: string; context_window?: number; images?: boolean }[] }
    const r = await api.get<{ default: string; providers: Provider[] }>("/api/models");
    if (!r.ok) return;
    defaultRef = r.value.default;
    const out: ModelChoice[] = [];
    for (const p of r.value.providers ?? []) {
      for (const mo of p.models ?? []) {
        facts.set(mo.ref, { provider: p.name, demo: !!p.demo, contextWindow: mo.context_window ?? 0 });
        out.push({ ref: mo.ref, provider: p.name, label: mo.name, ...(mo.images ? { images: true } : {}) }); // grouped under the provider's name
      }
    }
    models.value = out;
  };

  return store;
}

/** The label of the "server default" model choice, e.g. "Default (demo)". */
export const defaultModelLabel = (meta: Meta | null) => (meta?.default_model ? `Default (${meta.default_model})` : "Default");

/** Where an attachment's bytes are served: an upload by its own route; a
 * file elsewhere in the workspace by the files route. */
export function attachmentURL(sessionId: string, path: string): string {
  const up = ".caduceus/uploads/";
  if (path.startsWith(up) && !path.slice(up.length).includes("/")) {
    return `/api/sessions/${sessionId}/uploads/${encodeURIComponent(path.slice(up.length))}`;
  }
  return `/api/sessions/${sessionId}/files/content?${new URLSearchParams({ path, raw: "1" })}`;
}

/** Whether an event puts another version of the conversation on screen:
 * a switch, undo or restore, or a retry or edit queued (issue 15). */
function newBranch(ev: Envelope): boolean {
  if (ev.type === "version.selected") return true;
  return ev.type === "run.queued" && !!(ev.payload as { version_of?: string } | null)?.version_of;
}

/** The versions routes refuse a busy session; say what to do. */
function busyNote(e: ActionError): ActionError {
  return e.code === "session_busy" ? { code: e.code, message: "Wait for the agent to finish, or stop it, then try again." } : e;
}
