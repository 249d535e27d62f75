// Folds events into a session's live state. The transcript part mirrors the
// server's fold (internal/transcript/transcript.go) rule for rule, so the
// items a person watched stream in are the items GET .../messages returns
// after a reload. On top of it: the activity tree, runs, usage, todos and
// the queued tray.
//
// Each event type has one handler in `handlers`; the table is a
// Record<EventType, …>, so adding a type to types.ts without handling it
// fails the type check, and handledEventTypes() (the browser contract test)
// is read off the same table.

import { signal } from "@preact/signals";
import * as A from "./activity";
import type * as P from "./payloads";
import type {
  Goal,
  ActivityNode, Envelope, EventType, Item, ItemModel, Run, RunStatus, SessionState, Snapshot, ToolInfo, UsageTotals,
} from "./types";

/** A queued message waiting behind the busy run (not in the transcript yet). */
interface Held { run_id: string; text: string; created_at: string; item?: ItemModel }

/** SessionState plus the indexes the reducer needs. Views only see `state`. */
export interface SessionModel {
  state: SessionState;
  byId: Map<string, ItemModel>; // segments and user messages by id, tools by call id
  byRequest: Map<string, ItemModel>; // tool items by request id
  runs: Map<string, Run>;
  runOrder: Map<string, number>; // creation order, the order the server folds runs in
  runKind: Map<string, string>; // "compact" for compaction runs
  held: Map<string, Held>;
  started: Set<string>; // runs a runner claimed (run.started seen)
  /** When each run first started, from its first run.started (ms): the
   * activity tree times runs by their events, as the server's fold does. */
  runStart: Map<string, number>;
  /** Context window of the model answering now (tokens, 0 if unknown). */
  contextWindow: number;
  /** A model call's usage waiting for its turn's first item (a turn of
   * tool calls: usage comes before tool.started), by run and turn. */
  turnUsage: Map<string, UsageTotals>;
}

/** What the reducer needs from outside: model facts for the usage meter. */
export interface ReduceEnv {
  /** Context window of a model ref ("" = the server default), 0 if unknown. */
  contextWindowOf(model: string): number;
  providerOf(model: string): { provider: string; demo: boolean; ref: string };
}

const BUSY: ReadonlySet<string> = new Set(["running", "awaiting_approval", "awaiting_clarify", "cancelling", "paused", "recovering"]);
const TERMINAL: ReadonlySet<string> = new Set(["completed", "failed", "cancelled", "expired"]);
/** Statuses in which a run is not executing and has not ended. */
const WAITS: ReadonlySet<string> = new Set(["queued", "recovering", "awaiting_approval", "awaiting_clarify"]);
const TOOL_OPEN: ReadonlySet<string> = new Set(["pending", "awaiting_approval", "awaiting_clarify", "running"]);

const zeroUsage = (): UsageTotals => ({ input_tokens: 0, output_tokens: 0 });

/** What a client may do to a run in `status` (Go: run.Controls). */
export function controlsOf(status: string): string[] {
  switch (status) {
    case "queued": case "running": return ["observe", "cancel", "pause"];
    case "interrupted": case "recovering": case "paused": return ["observe", "cancel", "resume"];
    case "awaiting_approval": return ["observe", "cancel", "approve", "pause"];
    case "awaiting_clarify": return ["observe", "cancel", "clarify", "pause"];
    default: return ["observe"];
  }
}

/** The run a person may resume, if any: the session's newest interrupted or
 * recovering run, unless a later run has started since (the server then
 * refuses: a new message is the way on). */
export function resumableRun(runs: Run[]): Run | null {
  for (let i = runs.length - 1; i >= 0; i--) {
    const r = runs[i];
    if (r.status === "interrupted" || r.status === "recovering" || r.status === "paused") return r;
    if (r.started_at) return null;
  }
  return null;
}

/** Runs whose execution stopped part-way and has not picked up again:
 * their open text is not streaming, whatever the item says. */
export function stalledRuns(runs: Run[]): Set<string> {
  const out = new Set<string>();
  for (const r of runs) {
    if (r.status === "interrupted" || r.status === "recovering" || r.status === "paused" || (r.status === "queued" && r.started_at)) out.add(r.id);
  }
  return out;
}

export function newSessionModel(id: string): SessionModel {
  return {
    state: {
      id,
      items: signal<ItemModel[]>([]),
      activity: signal<ActivityNode[]>([]),
      runs: signal<Run[]>([]),
      todos: signal([]),
      queued: signal([]),
      busyRun: signal<Run | null>(null),
      usage: signal({ total: zeroUsage(), contextTokens: 0, contextWindow: 0, model: "", provider: "", demo: false }),
      loaded: signal(false),
      lastCommit: signal(""),
      goal: signal(null),
      cursor: 0,
      checkpoints: signal(0),
      undone: signal(0),
    },
    byId: new Map(),
    byRequest: new Map(),
    runs: new Map(),
    runOrder: new Map(),
    runKind: new Map(),
    held: new Map(),
    started: new Set(),
    runStart: new Map(),
    contextWindow: 0,
    turnUsage: new Map(),
  };
}

// ---- items -----------------------------------------------------------------

function newItem(ev: Envelope, fields: Partial<Item> & Pick<Item, "id" | "kind">, replay: boolean): ItemModel {
  const it: Item = { run_id: ev.run_id, created_at: ev.ts, last_event_id: ev.id, replay, ...fields };
  return { id: it.id, sig: signal(it) };
}

function orderOf(m: SessionModel, runId: string): number {
  let o = m.runOrder.get(runId);
  if (o === undefined) {
    o = m.runOrder.size;
    m.runOrder.set(runId, o);
  }
  return o;
}

/** Inserts an item at the end of its run's group: the server folds run by
 * run in creation order, so an item of an older run goes before the items
 * of newer runs already shown. Almost always a plain append. */
function insert(m: SessionModel, im: ItemModel): void {
  const list = m.state.items.value;
  const o = orderOf(m, im.sig.peek().run_id);
  let at = list.length;
  // A pending steer reads last until delivered, as in the server's fold.
  if (!im.sig.peek().pending) while (at > 0 && list[at - 1].sig.peek().pending) at--;
  while (at > 0 && orderOf(m, list[at - 1].sig.peek().run_id) > o && !list[at - 1].sig.peek().pending) at--;
  const next = list.slice();
  next.splice(at, 0, im);
  m.state.items.value = next;
}

/** Adds a new item to the index and the transcript. */
function push(m: SessionModel, im: ItemModel): void {
  m.byId.set(im.id, im);
  insert(m, im);
}

function set(im: ItemModel, patch: Partial<Item>): void {
  im.sig.value = { ...im.sig.peek(), ...patch };
}

function setTool(im: ItemModel, ev: Envelope, patch: Partial<ToolInfo>): void {
  const it = im.sig.peek();
  im.sig.value = { ...it, tool: { ...it.tool!, ...patch }, last_event_id: ev.id };
}

/** The event is already folded into the item (snapshot overlap). */
const seen = (im: ItemModel | undefined, ev: Envelope) => im !== undefined && ev.id <= im.sig.peek().last_event_id;

/** The open text or reasoning segment `id`, created on first sight like the
 * server's segment(). */
function segment(m: SessionModel, ev: Envelope, id: string, turnId: string, replay: boolean): ItemModel {
  const have = m.byId.get(id);
  if (have) return have;
  const kind = ev.type.startsWith("reasoning.") ? "reasoning" : "assistant";
  const im = newItem(ev, { id, kind, turn_id: turnId || undefined, open: true, text: "" }, replay);
  if (kind === "assistant") supersede(m, ev.run_id);
  push(m, im);
  return im;
}

/** New assistant text of a run supersedes its text cut short before (a
 * resumed run answers again), as the server's fold marks it. */
function supersede(m: SessionModel, runId: string): void {
  for (const im of m.state.items.peek()) {
    const it = im.sig.peek();
    if (it.kind === "assistant" && it.run_id === runId && it.partial && !it.superseded) set(im, { superseded: true });
  }
}

// ---- runs ------------------------------------------------------------------

function putRun(m: SessionModel, run: Run): void {
  const known = m.runs.has(run.id);
  m.runs.set(run.id, run);
  orderOf(m, run.id);
  const list = m.state.runs.peek();
  m.state.runs.value = known ? list.map((r) => (r.id === run.id ? run : r)) : [...list, run];
  syncBusy(m);
}

/** Updates a run from one of its events, unless GET /runs already
 * reflected that event (its last_event_id is at or past it). A run we never
 * saw queued (it predates the snapshot cursor) is created from the event. */
function patchRun(m: SessionModel, ev: Envelope, patch: Partial<Run>): Run | undefined {
  const run = m.runs.get(ev.run_id);
  if (run && ev.id <= run.last_event_id) return undefined;
  const base: Run = run ?? {
    id: ev.run_id, session_id: ev.session_id, status: "queued", terminal: false, input: "", model: "", attempt: 0,
    last_event_id: 0, last_seq: 0, controls: [], pending_request_ids: [], usage: zeroUsage(), created_at: ev.ts, started_at: null, ended_at: null,
  };
  const next: Run = { ...base, ...patch, last_event_id: ev.id, last_seq: ev.seq };
  // What it waited for is over once it executes or ends; the store reads
  // the new reason of a run that waits again.
  if (!WAITS.has(next.status)) next.waiting = undefined;
  putRun(m, next);
  return next;
}

/** Sets what a run waits for, as GET /api/runs/{id} said (no event moves). */
export function setWaiting(m: SessionModel, runId: string, waiting: Run["waiting"]): void {
  const run = m.runs.get(runId);
  if (!run || !WAITS.has(run.status)) return;
  if (JSON.stringify(run.waiting) === JSON.stringify(waiting)) return;
  putRun(m, { ...run, waiting });
}

/** Runs of the session that wait for something other than their runner:
 * the ones whose reason the store keeps fresh. */
export function waitingRuns(s: SessionState): Run[] {
  return s.runs.peek().filter((r) => WAITS.has(r.status));
}

/** The run Stop (button, Esc, /stop) stops: the busy run, else the
 * session's oldest queued run — a message waiting for a runner can be
 * taken back like a running one. */
export function stoppableRun(s: SessionState): Run | null {
  const busy = s.busyRun.value;
  if (busy) return busy;
  return s.runs.value.find((r) => r.status === "queued") ?? null;
}

function syncBusy(m: SessionModel): void {
  let busy: Run | null = null;
  for (const r of m.state.runs.peek()) if (BUSY.has(r.status)) busy = r;
  if (m.state.busyRun.peek() !== busy) m.state.busyRun.value = busy;
}

function syncQueued(m: SessionModel): void {
  const list = [...m.held.values()]
    .sort((a, b) => orderOf(m, a.run_id) - orderOf(m, b.run_id))
    .map(({ run_id, text, created_at }) => ({ run_id, text, created_at }));
  m.state.queued.value = list;
}

/** Moves a held message into the transcript: its run started, or ended
 * (cancelled) before starting. */
function release(m: SessionModel, runId: string): void {
  const h = m.held.get(runId);
  if (!h) return;
  m.held.delete(runId);
  if (h.item) push(m, h.item);
  syncQueued(m);
}

/** A runner took the run (or it ended): its message is no longer queued. */
function unqueue(m: SessionModel, runId: string): void {
  for (const im of m.state.items.peek()) {
    const it = im.sig.peek();
    if (it.kind === "user" && it.run_id === runId && it.queued) set(im, { queued: undefined });
  }
}

/** A run cancelled before any runner took it (a queued message the person
 * removed) is withdrawn, as the server's fold does: its message leaves the
 * tray or the transcript, and no run_end is shown. */
function withdrawn(m: SessionModel, runId: string): boolean {
  if (m.started.has(runId)) return false;
  const list = m.state.items.peek();
  if (list.some((im) => im.sig.peek().run_id === runId && im.sig.peek().kind !== "user")) return false;
  const h = m.held.get(runId);
  if (h) {
    m.held.delete(runId);
    if (h.item) m.byId.delete(h.item.id);
    syncQueued(m);
  }
  const keep = list.filter((im) => im.sig.peek().run_id !== runId);
  if (keep.length !== list.length) {
    for (const im of list) if (im.sig.peek().run_id === runId) m.byId.delete(im.id);
    m.state.items.value = keep;
  }
  return true;
}

/** Whether a new queued run waits behind another: the session is busy or
 * an older run is still queued. */
function waitsBehind(m: SessionModel, runId: string): boolean {
  if (m.state.busyRun.peek()) return true;
  for (const r of m.runs.values()) if (r.id !== runId && r.status === "queued") return true;
  return false;
}

function syncUsage(m: SessionModel, patch: Partial<SessionState["usage"]["value"]>): void {
  const total = zeroUsage();
  let cost = 0;
  for (const r of m.state.runs.peek()) {
    total.input_tokens += r.usage?.input_tokens ?? 0;
    total.output_tokens += r.usage?.output_tokens ?? 0;
    if (r.usage?.cached_tokens) total.cached_tokens = (total.cached_tokens ?? 0) + r.usage.cached_tokens;
    if (r.usage?.reasoning_tokens) total.reasoning_tokens = (total.reasoning_tokens ?? 0) + r.usage.reasoning_tokens;
    cost += r.usage?.cost_usd ?? 0;
  }
  if (cost) total.cost_usd = cost;
  m.state.usage.value = { ...m.state.usage.peek(), ...patch, total };
}

// ---- activity ----------------------------------------------------------------

function act(m: SessionModel, fn: (roots: ActivityNode[]) => ActivityNode[]): void {
  const before = m.state.activity.peek();
  const after = fn(before);
  if (after !== before) m.state.activity.value = after;
}

const live = (n: ActivityNode): ActivityNode => (n.replay ? { ...n, replay: false } : n);

// ---- handlers ----------------------------------------------------------------

type Handler = (m: SessionModel, ev: Envelope, env: ReduceEnv, replay: boolean) => void;

const closeSegment: Handler = (m, ev, _env, replay) => {
  const p = ev.payload as P.DoneP;
  const fresh = !m.byId.has(p.id);
  const im = segment(m, ev, p.id, p.turn_id, replay);
  const before = im.sig.peek();
  if (ev.id < before.last_event_id) return; // already folded (the same event again is harmless)
  // The server's rule (internal/transcript reasoningMS): the runner's
  // figure, else from the first delta to the end when we saw it stream.
  const durationMs = ev.type === "reasoning.done" && before.open
    ? A.reasoningMs(p.duration_ms, fresh ? null : before.created_at, ev.ts)
    : before.duration_ms;
  // A finished message is dated by its end, as the server's fold of a
  // finished run dates it (that fold skips the streamed fragments): a
  // reload then shows the same time, also across a minute's turn.
  const createdAt = ev.type === "message.done" ? ev.ts : before.created_at;
  set(im, { text: p.text, signature: p.signature || undefined, partial: p.partial || undefined, open: false, last_event_id: ev.id, duration_ms: durationMs || undefined, created_at: createdAt });
  if (ev.type === "reasoning.done") {
    const t = Date.parse(ev.ts);
    const node: ActivityNode = { id: p.id, type: "think", label: "Thinking", state: "done", startedAt: t, durationMs: durationMs || undefined, output: p.text, children: [], replay };
    act(m, (r) => A.hasNode(r, ev.run_id, p.id)
      ? A.updateNode(r, ev.run_id, p.id, (n) => ({ ...live(n), state: "done", endedAt: t, durationMs: durationMs || undefined, output: p.text }))
      : A.addChild(r, ev.run_id, p.turn_id, node, t));
  }
};

const appendDelta: Handler = (m, ev, _env, replay) => {
  const p = ev.payload as P.DeltaP;
  const fresh = !m.byId.has(p.id);
  const im = segment(m, ev, p.id, p.turn_id, replay);
  const it = im.sig.peek();
  if (!it.open || (!fresh && seen(im, ev))) return; // closed segment, or already folded in
  im.sig.value = { ...it, text: (it.text ?? "") + p.delta, last_event_id: ev.id };
  if (fresh && ev.type === "reasoning.delta") {
    const t = Date.parse(ev.ts);
    act(m, (r) => A.addChild(r, ev.run_id, p.turn_id, { id: p.id, type: "think", label: "Thinking", state: "running", startedAt: t, children: [], replay }, t));
  }
};

/** subagent.started / subagent.done (h18-delegate): the delegate call's
 * card lists its child runs, and the activity tree nests them under it. */
const subagent: Handler = (m, ev, _env, replay) => {
  const p = ev.payload as P.SubagentP;
  const im = m.byId.get(p.tool_call_id);
  const tool = im?.sig.peek().tool;
  if (!im || !tool || seen(im, ev)) return;
  const prev = (tool.subagents ?? []).find((s) => s.index === p.index);
  const sa = { index: p.index, title: p.title ?? prev?.title ?? "", session_id: p.session_id, run_id: p.run_id, status: p.status, summary: p.summary };
  const list = [...(tool.subagents ?? []).filter((s) => s.index !== p.index), sa].sort((a, b) => a.index - b.index);
  setTool(im, ev, { subagents: list });
  const t = Date.parse(ev.ts);
  act(m, (r) => A.updateNode(r, ev.run_id, p.tool_call_id, (n) => {
    const old = n.children.find((c) => c.id === "sub_" + p.session_id);
    const node = { ...A.subagentNode(sa, old?.startedAt ?? t, replay), endedAt: p.status === "started" ? undefined : t, durationMs: p.duration_ms || undefined };
    const children = old ? n.children.map((c) => (c.id === node.id ? node : c)) : [...n.children, node];
    return { ...n, children };
  }));
};

const requested: Handler = (m, ev) => {
  const p = ev.payload as P.RequestedP;
  const im = m.byId.get(p.tool_call_id);
  if (!im || seen(im, ev)) return;
  const tool = im.sig.peek().tool;
  if (!tool || !TOOL_OPEN.has(tool.status)) return;
  m.byRequest.set(p.request_id, im);
  setTool(im, ev, { request_id: p.request_id, status: ev.type === "clarify.requested" ? "awaiting_clarify" : "awaiting_approval" });
  act(m, (r) => A.updateStep(r, ev.run_id, p.tool_call_id, (n) => ({ ...live(n), state: "waiting" })));
};

const resolved: Handler = (m, ev) => {
  const p = ev.payload as P.ResolvedP;
  const im = m.byRequest.get(p.request_id);
  if (!im || seen(im, ev)) return;
  const tool = im.sig.peek().tool;
  if (!tool || !TOOL_OPEN.has(tool.status)) return;
  // The server's rule (internal/transcript approvalOutcome).
  const approval = ev.type === "approval.resolved"
    ? {
      outcome: p.status === "resolved" ? p.choice || "deny" : p.status === "expired" ? "expired" : "cancelled",
      ...(p.by && p.by.kind !== "local" ? { by: p.by.name } : {}),
      ...(p.note ? { note: p.note } : {}),
    }
    : tool.approval;
  setTool(im, ev, { status: "pending", approval });
  act(m, (r) => A.updateStep(r, ev.run_id, tool.tool_call_id, (n) => ({ ...live(n), state: "running", approval })));
  // Answered: the run waits for a runner to take it again (the store reads
  // whether one is alive and where the run stands in line).
  const run = m.runs.get(ev.run_id);
  if (run && (run.status === "awaiting_approval" || run.status === "awaiting_clarify") && run.waiting?.reason !== "runner") {
    putRun(m, { ...run, waiting: { reason: "runner_slot" } });
  }
};

/** A remembered rule approved a call (diagnostic auto_approved): nobody was
 * asked. */
const autoApproved = (m: SessionModel, ev: Envelope, p: P.DiagnosticP) => {
  const callId = typeof p.details?.tool_call_id === "string" ? p.details.tool_call_id : "";
  const im = m.byId.get(callId);
  const tool = im?.sig.peek().tool;
  if (!im || !tool || seen(im, ev) || !TOOL_OPEN.has(tool.status)) return;
  const approval = { outcome: "rule", pattern: typeof p.details?.pattern === "string" ? p.details.pattern : undefined };
  setTool(im, ev, { approval });
  act(m, (r) => A.updateStep(r, ev.run_id, callId, (n) => ({ ...n, approval })));
};

/** Notices (diagnostics, context warnings), keyed by event id like the
 * server's fold (internal/transcript: ntc_<id>, same text), so a reload
 * shows what the live view showed and a repeat is dropped. */
const notice = (m: SessionModel, ev: Envelope, level: Item["level"], code: string, text: string, replay: boolean, details?: Record<string, unknown>) => {
  const id = `ntc_${ev.id}`;
  if (!m.byId.has(id)) push(m, newItem(ev, { id, kind: "notice", level, code, text, details }, replay));
};

export const handlers: Record<EventType, Handler> = {
  "run.queued": (m, ev) => {
    const p = ev.payload as P.RunQueuedP;
    if (m.runs.has(ev.run_id)) return;
    // A message after an undo forks: the undone turns are a version away,
    // no longer restorable (the server's fold says the same).
    m.state.undone.value = 0;
    if (p.kind) m.runKind.set(ev.run_id, p.kind);
    const waits = waitsBehind(m, ev.run_id);
    putRun(m, {
      id: ev.run_id, session_id: ev.session_id, status: "queued", terminal: false, input: p.input ?? "", model: p.model ?? "",
      attempt: 0, last_event_id: ev.id, last_seq: ev.seq, controls: ["observe", "cancel"], pending_request_ids: [],
      usage: zeroUsage(), created_at: ev.ts, started_at: null, ended_at: null,
    });
    if (waits) {
      m.held.set(ev.run_id, { run_id: ev.run_id, text: p.kind === "compact" ? "/compact" : p.input ?? "", created_at: ev.ts });
      syncQueued(m);
    }
  },
  "run.started": (m, ev, env, replay) => {
    const p = ev.payload as P.RunStartedP;
    m.started.add(ev.run_id);
    const run = patchRun(m, ev, {
      status: "running", attempt: p.attempt, started_at: m.runs.get(ev.run_id)?.started_at ?? ev.ts, controls: controlsOf("running"),
      retry_at: undefined, retry: undefined,
    });
    release(m, ev.run_id);
    unqueue(m, ev.run_id);
    const model = p.model || run?.model || "";
    m.contextWindow = p.context_window || env.contextWindowOf(model) || m.contextWindow;
    syncUsage(m, { model: model || env.providerOf("").ref, provider: p.provider, demo: !!p.demo, contextWindow: m.contextWindow });
    if (run) {
      const t = Date.parse(ev.ts);
      if (!m.runStart.has(run.id)) m.runStart.set(run.id, t);
      act(m, (r) => {
        const next = A.upsertRun(r, A.runNode(run, replay, m.runKind.get(run.id), { startedAt: m.runStart.get(run.id) }));
        // A run that picks up again after its runner stopped: say so where
        // it happened, between the work before and after.
        return p.resumed ? A.addChild(next, run.id, undefined, A.resumedNode(`rsm_${ev.id}`, p.attempt, t, replay), t) : next;
      });
    }
  },
  "run.status": (m, ev, _env, replay) => {
    const p = ev.payload as P.RunStatusP;
    const recovering = p.status === "recovering";
    const prev = m.runs.get(ev.run_id);
    const run = patchRun(m, ev, {
      status: p.status as RunStatus, controls: controlsOf(p.status),
      retry: recovering ? p.retry : undefined, retry_at: recovering ? p.retry_at : undefined,
      max_retries: p.max_retries || prev?.max_retries,
    });
    if (!run) return;
    // Stopped part-way (its runner died, or a retry waits): nothing of it
    // runs any more until it is resumed.
    // A paused run is not cut off: its calls not begun run when it is
    // resumed, as the server's fold shows them (h16-budgets).
    const halted = recovering || p.status === "interrupted";
    act(m, (r) => halted
      ? A.haltRun(r, ev.run_id, p.status, Date.parse(ev.ts), replay)
      : A.updateNode(r, ev.run_id, ev.run_id, (n) => ({ ...n, state: A.runState(p.status), replay: n.replay && replay })));
  },
  "run.done": (m, ev, _env, replay) => {
    const p = ev.payload as P.RunDoneP;
    if (p.status === "cancelled" && withdrawn(m, ev.run_id)) {
      patchRun(m, ev, { status: "cancelled", terminal: true, ended_at: ev.ts, controls: ["observe"], pending_request_ids: [] });
      return;
    }
    release(m, ev.run_id);
    unqueue(m, ev.run_id);
    const run = patchRun(m, ev, {
      status: p.status as RunStatus, terminal: true, ended_at: ev.ts, error: p.error, controls: ["observe"], pending_request_ids: [],
      usage: p.usage ?? m.runs.get(ev.run_id)?.usage ?? zeroUsage(),
    });
    if (p.status !== "completed") {
      const id = `end_${ev.run_id}`;
      const by = p.by && p.by.kind !== "local" ? { by: p.by.name } : {};
      if (!m.byId.has(id)) push(m, newItem(ev, { id, kind: "run_end", status: p.status, error: p.error, ...by }, replay));
    }
    if (run) {
      syncUsage(m, {});
      act(m, (r) => A.endRun(r, ev.run_id, p.status, Date.parse(ev.ts), replay));
    }
  },
  "message.steered": (m, ev, _env, replay) => {
    const p = ev.payload as P.MessageSteeredP;
    if (m.byId.has(p.message_id)) return;
    const by = p.by && p.by.kind !== "local" ? p.by.name : undefined;
    push(m, newItem(ev, { id: p.message_id, kind: "user", text: p.content, steer: true, pending: true, ...(by ? { by } : {}) }, replay));
  },
  "message.user": (m, ev, _env, replay) => {
    const p = ev.payload as P.MessageUserP;
    // A pending steer delivered: it moves to where it landed (its run's
    // step boundary, or the queued run it became).
    const was = m.byId.get(p.message_id);
    if (was?.sig.peek().pending) {
      m.byId.delete(p.message_id);
      m.state.items.value = m.state.items.value.filter((x) => x !== was);
    }
    if (m.byId.has(p.message_id)) return;
    // Marked queued until a runner takes the run, like the server's fold.
    const queued = !m.started.has(ev.run_id) && !TERMINAL.has(m.runs.get(ev.run_id)?.status ?? "") ? true : undefined;
    const by = p.by && p.by.kind !== "local" ? p.by.name : undefined;
    const atts = p.attachments?.length ? { attachments: p.attachments } : {};
    const im = newItem(ev, { id: p.message_id, kind: "user", text: p.content, queued, ...(by ? { by } : {}), ...atts, ...(p.steer ? { steer: true } : {}), ...(p.continuation ? { continuation: p.continuation } : {}) }, replay);
    const h = m.held.get(ev.run_id);
    if (h) {
      m.byId.set(im.id, im);
      h.item = im;
      // A message of attachments alone is shown by their names.
      h.text = p.content || (p.attachments ?? []).map((a) => a.name).join(", ");
      syncQueued(m);
    } else push(m, im);
  },
  "message.delta": appendDelta,
  "message.done": closeSegment,
  "reasoning.delta": appendDelta,
  "reasoning.done": closeSegment,
  "turn.started": (m, ev, _env, replay) => {
    const p = ev.payload as P.TurnStartedP;
    const t = Date.parse(ev.ts);
    act(m, (r) => A.hasNode(r, ev.run_id, p.turn_id) ? r : A.startTurn(r, ev.run_id, p.turn_id, t, replay));
  },
  "turn.ended": (m, ev) => {
    const p = ev.payload as P.TurnEndedP;
    const t = Date.parse(ev.ts);
    act(m, (r) => A.updateNode(r, ev.run_id, p.turn_id, (n) => ({
      ...live(n), state: p.stop_reason === "error" ? "error" : "done", endedAt: t, durationMs: p.duration_ms,
    })));
  },
  "usage": (m, ev) => {
    const p = ev.payload as P.UsageP;
    patchRun(m, ev, { usage: p.total });
    // The answer of the call shows what it cost, as the server's fold
    // does: the turn's last assistant text, else its first item.
    if (p.turn_id) {
      let first: ItemModel | undefined;
      let answer: ItemModel | undefined;
      for (const im of m.state.items.peek()) {
        const it = im.sig.peek();
        if (it.run_id !== ev.run_id || it.turn_id !== p.turn_id) continue;
        first ??= im;
        if (it.kind === "assistant") answer = im;
      }
      const at = answer ?? first;
      if (at) set(at, { usage: p.turn });
      else m.turnUsage.set(ev.run_id + "/" + p.turn_id, p.turn);
    }
    // The last model call's prompt is what the context holds now; the
    // compaction call's prompt is the old, long conversation.
    syncUsage(m, p.turn_id === "compaction" ? {} : { contextTokens: p.turn.input_tokens });
  },
  "title.updated": () => {
    // The title lives in the sessions list; the store's lifecycle table
    // applies it for every session, this one included.
  },
  "tool.started": (m, ev, _env, replay) => {
    const p = ev.payload as P.ToolStartedP;
    if (m.byId.has(p.tool_call_id)) return;
    const t = Date.parse(ev.ts);
    const im = newItem(ev, {
      id: p.tool_call_id, kind: "tool_call", turn_id: p.turn_id || undefined,
      tool: { tool_call_id: p.tool_call_id, name: p.name, label: p.label, args: p.args, status: "pending", started_ms: t },
    }, replay);
    push(m, im);
    const waiting = m.turnUsage.get(ev.run_id + "/" + p.turn_id);
    if (waiting) {
      m.turnUsage.delete(ev.run_id + "/" + p.turn_id);
      set(im, { usage: waiting });
    }
    act(m, (r) => A.addChild(r, ev.run_id, p.turn_id, {
      id: p.tool_call_id, type: "tool", label: p.label || p.name, tool: p.name, args: p.args, state: "running", startedAt: t, children: [], replay,
    }, t));
  },
  "tool.updated": (m, ev) => {
    const p = ev.payload as P.ToolUpdatedP;
    const im = m.byId.get(p.tool_call_id);
    const tool = im?.sig.peek().tool;
    if (!im || !tool || seen(im, ev) || !TOOL_OPEN.has(tool.status)) return;
    const output = (tool.output ?? "") + (p.output ?? "");
    // tool.updated comes only after any approval (EVENTS.md), so a call
    // still shown waiting (its resolution not seen) is executing now.
    const waiting = tool.status === "awaiting_approval" || tool.status === "awaiting_clarify";
    setTool(im, ev, { status: p.phase === "executing" || waiting ? "running" : tool.status, output, live_output: output });
    act(m, (r) => A.updateStep(r, ev.run_id, p.tool_call_id, (n) => (n.state === "waiting" ? { ...live(n), state: "running" } : n)));
  },
  "tool.done": (m, ev) => {
    const p = ev.payload as P.ToolDoneP;
    const im = m.byId.get(p.tool_call_id);
    if (!im || !im.sig.peek().tool || seen(im, ev)) return;
    setTool(im, ev, {
      status: p.status as ToolInfo["status"], output: p.output, result: p.result, error: p.error, duration_ms: p.duration_ms,
      wait_ms: p.wait_ms || undefined, live_output: undefined,
    });
    const t = Date.parse(ev.ts);
    const tool = im.sig.peek().tool!;
    act(m, (r) => A.updateStep(r, ev.run_id, p.tool_call_id, (n) => ({
      ...live(n), state: A.toolState(p.status), durationMs: p.duration_ms, endedAt: t, result: p.result, output: p.output, ...A.toolApproval(tool),
    })));
  },
  "approval.requested": requested,
  "approval.resolved": resolved,
  // The decisions log's record (h16-policy): the call's card already
  // shows its approval, from the request or the auto_approved diagnostic.
  "approval.decided": () => {},
  "clarify.requested": requested,
  "clarify.resolved": resolved,
  "subagent.started": subagent,
  "subagent.done": subagent,
  "todo.updated": (m, ev) => {
    m.state.todos.value = (ev.payload as P.TodoP).items ?? [];
  },
  "context.warning": (m, ev, _env, replay) => {
    const p = ev.payload as P.ContextWarningP;
    const pct = Math.round(p.ratio * 100);
    notice(m, ev, "warning", "context_warning", `The conversation is using about ${pct}% of the model's context window (${p.estimated_tokens} of ${p.context_window} tokens). Older messages may be compacted.`, replay);
    syncUsage(m, { contextTokens: p.estimated_tokens, contextWindow: p.context_window || m.contextWindow });
  },
  "context.compacted": (m, ev, _env, replay) => {
    const p = ev.payload as P.CompactedP;
    const id = `cmp_${ev.id}`;
    if (m.byId.has(id)) return;
    push(m, newItem(ev, { id, kind: "compaction", text: p.summary, compaction: p as unknown as Item["compaction"] }, replay));
    syncUsage(m, { contextTokens: p.tokens_after });
  },
  // Checkpoints live in the server's shadow repository, not in the fold:
  // the views that show changes fetch them (the same answer live and
  // after a reload) and are told to fetch again here.
  "checkpoint.created": (m, ev) => {
    m.state.checkpoints.value++;
    const p = ev.payload as { checkpoint_id: string; tool_call_id?: string };
    const im = p.tool_call_id ? m.byId.get(p.tool_call_id) : undefined;
    if (im && im.sig.peek().tool && !seen(im, ev)) {
      setTool(im, ev, { checkpoint_id: p.checkpoint_id });
      act(m, (r) => A.updateStep(r, ev.run_id, p.tool_call_id!, (n) => ({ ...n, checkpoint: p.checkpoint_id })));
    }
  },
  "checkpoint.restored": (m) => {
    m.state.checkpoints.value++;
  },
  "diagnostic": (m, ev, _env, replay) => {
    const p = ev.payload as P.DiagnosticP;
    notice(m, ev, p.level, p.code, p.message, replay, p.details);
    if (p.code === "auto_approved") autoApproved(m, ev, p);
    // Budgets and health (h16-budgets): the run's health in its activity.
    if (p.code === "run_health") act(m, (r) => A.addChild(r, ev.run_id, undefined, A.healthNode(`hlt_${ev.id}`, p.message, Date.parse(ev.ts), replay), Date.parse(ev.ts)));
  },
  "goal.updated": (m, ev) => {
    // The goal as it is now: the header's goal bar shows it.
    m.state.goal.value = ev.payload as Goal;
  },
  "git.committed": (m, ev) => {
    // Not in the transcript: the Git tab reloads on it.
    m.state.lastCommit.value = (ev.payload as P.GitCommittedP).hash ?? "";
  },
  "resync": () => {
    // Handled before reducing: the store drops the session and reloads its
    // snapshot (see store.ts), since the stream's replay would start over.
  },
  // A person's terminal opened or ended: a record of who ran a shell, not
  // part of the conversation (the server's transcript has no item for it
  // either); the Terminal tab follows its own socket.
  "terminal.opened": () => {},
  "terminal.closed": () => {},
  // Another version of the conversation is on screen: the store reloads
  // the session's snapshot, which the server folds along the new branch.
  "version.selected": () => {},
};

/** Applies one envelope of this session. Events at or below the cursor are
 * dropped (at-least-once delivery); per-item and per-run last_event_id
 * rules drop the rest of the snapshot overlap. Returns whether it applied. */
export function apply(m: SessionModel, ev: Envelope, env: ReduceEnv, replay = false): boolean {
  if (ev.id && ev.id <= m.state.cursor) return false;
  const h = (handlers as Partial<Record<string, Handler>>)[ev.type];
  if (h) h(m, ev, env, replay); // unknown types are ignored (EVENTS.md: additive)
  if (ev.id) m.state.cursor = ev.id;
  return true;
}

// ---- snapshot ----------------------------------------------------------------

/** Fills a model from GET /messages and GET /runs. Held messages (runs
 * queued behind a busy run) go to the tray instead of the transcript, as
 * they would have live. Existing item signals are reused where the item is
 * unchanged, so re-syncing a cached session re-renders only what moved. */
export function loadSnapshot(m: SessionModel, snap: Snapshot, runs: Run[], env: ReduceEnv): void {
  const { items, last_event_id: cursor } = snap;
  const prev = m.byId;
  m.byId = new Map();
  m.byRequest = new Map();
  m.runs = new Map();
  m.runOrder = new Map();
  m.held = new Map();
  m.started = new Set();
  m.runStart = new Map();
  for (const a of snap.activity ?? []) if (a.started_at) m.runStart.set(a.run_id, Date.parse(a.started_at));
  m.state.runs.value = [];
  for (const r of runs) {
    m.runs.set(r.id, r);
    if (r.started_at) m.started.add(r.id);
    orderOf(m, r.id);
    if (!r.input) m.runKind.set(r.id, "compact"); // only compaction runs have no input
  }
  m.state.runs.value = runs.slice();
  syncBusy(m);
  let queuedAhead = false;
  for (const r of runs) {
    if (r.status !== "queued") continue;
    // A run queued again after it ran (resumed, handed over) is in the
    // transcript already: it only goes ahead of the newer ones.
    if (!r.started_at && (m.state.busyRun.peek() || queuedAhead)) m.held.set(r.id, { run_id: r.id, text: r.input || "/compact", created_at: r.created_at });
    queuedAhead = true;
  }

  const list: ItemModel[] = [];
  for (const raw of items) {
    const it: Item = { ...raw, replay: true };
    if (it.tool) it.tool = { ...it.tool, started_ms: Date.parse(it.created_at) };
    const old = prev.get(it.id);
    let im: ItemModel;
    // Versions are not in any event of the item: the live item lacks what
    // the server's fold adds (issue 15), so a differing count replaces it.
    if (old && old.sig.peek().last_event_id === it.last_event_id && old.sig.peek().kind === it.kind && sameVersions(old.sig.peek(), it)) im = old;
    else if (old) {
      old.sig.value = it;
      im = old;
    } else im = { id: it.id, sig: signal(it) };
    m.byId.set(it.id, im);
    if (it.tool?.request_id) m.byRequest.set(it.tool.request_id, im);
    const h = it.kind === "user" ? m.held.get(it.run_id) : undefined;
    if (h) h.item = im;
    else list.push(im);
  }
  m.state.items.value = list;
  syncQueued(m);

  const last = [...runs].reverse().find((r) => r.started_at);
  const model = last?.model ?? "";
  const info = env.providerOf(model);
  // The context figures the live view took from run.started, usage,
  // context.warning and context.compacted, folded by the server alike.
  m.contextWindow = snap.context?.window || env.contextWindowOf(model);
  syncUsage(m, { model: info.ref, provider: info.provider, demo: info.demo, contextWindow: m.contextWindow, contextTokens: snap.context?.tokens ?? 0 });
  m.state.activity.value = A.buildActivity(runs, items, snap.activity);
  m.state.todos.value = snap.todos ?? [];
  m.state.undone.value = snap.undone?.turns ?? 0;
  m.state.cursor = cursor;
  m.state.loaded.value = true;
}

export const isTerminal = (status: string) => TERMINAL.has(status);

/** Whether two folds of an item show the same version of its message. */
function sameVersions(a: Item, b: Item): boolean {
  return a.versions?.index === b.versions?.index && a.versions?.count === b.versions?.count;
}
