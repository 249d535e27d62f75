// The activity tree (seed 002): one root per run, turns under it, thinking
// and tool nodes under the turns. Every function here is pure: it returns a
// new array of roots in which only the path to the changed node is copied,
// so the views can compare nodes by identity and re-render only what moved.

import type { ActivityNode, Item, Run, RunActivity, SubagentInfo, ToolInfo, ToolStatus } from "./types";

type Roots = ActivityNode[];
type State = ActivityNode["state"];

const ms = (ts: string | null | undefined): number => (ts ? Date.parse(ts) : 0);

/** Statuses in which the run's work may be under way: a runner holds it
 * (Go: Status.Owned), or it is paused mid-way. */
const UNDER_WAY: ReadonlySet<string> = new Set(["running", "awaiting_approval", "awaiting_clarify", "cancelling", "paused"]);

/** One line of a run's input, short enough for a tree row. */
export function runLabel(input: string, kind?: string): string {
  if (kind === "compact") return "Compact context";
  const line = input.split("\n").find((l) => l.trim() !== "") ?? "";
  return line.length > 80 ? line.slice(0, 79) + "…" : line.trim() || "Run";
}

export function runState(status: string): State {
  switch (status) {
    case "awaiting_approval":
    case "awaiting_clarify":
    case "recovering": // a retry is due at a set time
    case "queued": // resumed or handed over: waits for a runner
    case "paused": // waits for a person to resume it (h16-budgets)
      return "waiting";
    case "failed":
    case "interrupted":
    case "expired":
      return "error";
    case "completed":
      return "done";
    case "cancelled":
      return "cancelled";
    default:
      return "running";
  }
}

export function toolState(status: ToolStatus | string): State {
  switch (status) {
    case "pending":
    case "running":
      return "running";
    case "awaiting_approval":
    case "awaiting_clarify":
      return "waiting";
    case "ok":
      return "done";
    case "cancelled":
      return "cancelled";
    default:
      return "error"; // error, timeout, denied
  }
}

/** A run's root. Its times are those of the journal's events (the first
 * run.started, the run.done), as the server's fold gives them after a
 * reload; the run resource's started_at/ended_at (the claim and the
 * finish) are a few milliseconds off and used only when the events are not
 * known. */
export function runNode(
  run: Pick<Run, "id" | "input" | "status" | "created_at" | "started_at" | "ended_at" | "attempt">, replay: boolean, kind?: string,
  times?: { startedAt?: number; endedAt?: number },
): ActivityNode {
  const startedAt = times?.startedAt ?? ms(run.started_at ?? run.created_at);
  const endedAt = times?.endedAt ?? (run.ended_at ? ms(run.ended_at) : undefined);
  return {
    id: run.id, type: "run", label: runLabel(run.input, kind ?? (run.input ? undefined : "compact")),
    state: runState(run.status), startedAt, endedAt,
    durationMs: endedAt !== undefined ? Math.max(0, endedAt - startedAt) : undefined,
    attempt: run.attempt > 1 ? run.attempt : undefined,
    children: [], replay,
  };
}

/** What a tool node shows of its approval: the outcome, and the wait when
 * a person was asked. The same for live events and the snapshot. */
export function toolApproval(t: ToolInfo): Pick<ActivityNode, "approval" | "waitMs"> {
  return { approval: t.approval, waitMs: t.request_id && t.wait_ms ? t.wait_ms : undefined };
}

/** How long a closed reasoning block took (internal/transcript reasoningMS):
 * the runner's figure, else the time from its first delta (the item's
 * created_at while it streamed) to its end; undefined when unknown. */
export function reasoningMs(durationMs: number | undefined, streamedSince: string | null, endTs: string): number | undefined {
  if (durationMs && durationMs > 0) return durationMs;
  if (streamedSince) return Math.max(0, ms(endTs) - ms(streamedSince));
  return undefined;
}

/** The mark left in a run where it picked up again after an interruption. */
export function resumedNode(id: string, attempt: number, at: number, replay: boolean): ActivityNode {
  return { id, type: "marker", label: `Resumed (attempt ${attempt})`, state: "done", startedAt: at, children: [], replay };
}

/** A run's health report (diagnostic run_health, h16-budgets). */
export function healthNode(id: string, label: string, at: number, replay: boolean): ActivityNode {
  return { id, type: "marker", label, state: "done", startedAt: at, children: [], replay };
}

function rootIndex(roots: Roots, runId: string): number {
  for (let i = roots.length - 1; i >= 0; i--) if (roots[i].id === runId) return i;
  return -1;
}

/** Returns node with the node `id` below it replaced by fn(node), copying
 * the path; the same object when `id` is not there. */
function mapPath(node: ActivityNode, id: string, fn: (n: ActivityNode) => ActivityNode): ActivityNode {
  if (node.id === id) return fn(node);
  for (let i = node.children.length - 1; i >= 0; i--) {
    const c = node.children[i];
    const next = mapPath(c, id, fn);
    if (next !== c) {
      const children = node.children.slice();
      children[i] = next;
      return { ...node, children };
    }
  }
  return node;
}

function find(node: ActivityNode, id: string): ActivityNode | undefined {
  if (node.id === id) return node;
  for (const c of node.children) {
    const f = find(c, id);
    if (f) return f;
  }
  return undefined;
}

export function hasNode(roots: Roots, runId: string, id: string): boolean {
  const i = rootIndex(roots, runId);
  return i >= 0 && find(roots[i], id) !== undefined;
}

/** Replaces node `id` of run `runId` by fn(node); unchanged roots when
 * either is missing. */
export function updateNode(roots: Roots, runId: string, id: string, fn: (n: ActivityNode) => ActivityNode): Roots {
  const i = rootIndex(roots, runId);
  if (i < 0) return roots;
  const next = mapPath(roots[i], id, fn);
  if (next === roots[i]) return roots;
  const out = roots.slice();
  out[i] = next;
  return out;
}

/** Updates node `id` (a tool or thinking step) like updateNode, then keeps
 * the turn holding it in step: an open turn waits while one of its steps
 * waits for a person and runs otherwise. So a turn loaded from the snapshot
 * as "waiting" runs again once its approval is answered. */
export function updateStep(roots: Roots, runId: string, id: string, fn: (n: ActivityNode) => ActivityNode): Roots {
  const r = updateNode(roots, runId, id, fn);
  if (r === roots) return r;
  const i = rootIndex(r, runId);
  const turn = r[i].children.find((t) => t.type === "turn" && t.children.some((c) => c.id === id));
  if (!turn || (turn.state !== "running" && turn.state !== "waiting")) return r;
  const state: State = turn.children.some((c) => c.state === "waiting") ? "waiting" : "running";
  return state === turn.state ? r : updateNode(r, runId, turn.id, (n) => ({ ...n, state }));
}

/** Adds or replaces a run's root (a re-claimed run keeps its children). */
export function upsertRun(roots: Roots, node: ActivityNode): Roots {
  const i = rootIndex(roots, node.id);
  if (i < 0) return [...roots, node];
  const out = roots.slice();
  out[i] = { ...node, children: roots[i].children };
  return out;
}

/** Adds `child` under `parentId` (a turn) of run `runId`, or under the run
 * itself when parentId is empty. A missing run or turn is created, so an
 * event whose opening we never saw still lands in the tree. */
export function addChild(roots: Roots, runId: string, parentId: string | undefined, child: ActivityNode, ts: number): Roots {
  let r = roots;
  if (rootIndex(r, runId) < 0) {
    r = [...r, { id: runId, type: "run", label: "Run", state: "running", startedAt: ts, children: [], replay: child.replay }];
  }
  if (parentId && !hasNode(r, runId, parentId)) {
    r = addChild(r, runId, undefined, turnNode(parentId, countTurns(r, runId), ts, child.replay), ts);
  }
  return updateNode(r, runId, parentId || runId, (p) => ({ ...p, children: [...p.children.filter((c) => c.id !== child.id), child] }));
}

function countTurns(roots: Roots, runId: string): number {
  const i = rootIndex(roots, runId);
  return i < 0 ? 0 : roots[i].children.filter((c) => c.type === "turn").length;
}

/** A new model call of run `runId`. Turns are numbered by their place in
 * the run (payload.index restarts when a run is re-claimed). The turn
 * before it has ended, even if its turn.ended predates what we saw. */
export function startTurn(roots: Roots, runId: string, turnId: string, ts: number, replay: boolean): Roots {
  let r = roots;
  const i = rootIndex(r, runId);
  const prev = i >= 0 ? r[i].children.filter((c) => c.type === "turn").pop() : undefined;
  if (prev && (prev.state === "running" || prev.state === "waiting")) {
    r = updateNode(r, runId, prev.id, (n) => ({ ...n, state: "done" }));
  }
  return addChild(r, runId, undefined, turnNode(turnId, countTurns(r, runId), ts, replay), ts);
}

export function turnNode(id: string, index: number, startedAt: number, replay: boolean): ActivityNode {
  return { id, type: "turn", label: `Turn ${index + 1}`, state: "running", startedAt, children: [], replay };
}

/** Stops every node below `root` that is still running or waiting, as of
 * `endedAt`, in state `to`. */
function closeOpen(root: ActivityNode, to: State, endedAt: number): ActivityNode {
  const close = (n: ActivityNode): ActivityNode => {
    const children = n.children.map(close);
    const open = n.state === "running" || n.state === "waiting";
    if (!open && children.every((c, i) => c === n.children[i])) return n;
    // A turn cut short lasted until now (the server's fold says the same);
    // a step cut short has no duration.
    const durationMs = n.durationMs ?? (n.type === "turn" ? Math.max(0, endedAt - n.startedAt) : undefined);
    return open ? { ...n, children, state: to, endedAt, durationMs } : { ...n, children };
  };
  return close({ ...root, state: "running" });
}

/** Closes a finished run: the root takes its final state and nodes still
 * running (an aborted model call, a call cut by a cancel) stop with it. */
export function endRun(roots: Roots, runId: string, status: string, endedAt: number, replay: boolean): Roots {
  return updateNode(roots, runId, runId, (root) => {
    // The server's fold closes open turns the same way (StepCancelled).
    const closed = closeOpen(root, status === "completed" ? "done" : status === "cancelled" ? "cancelled" : "error", endedAt);
    return { ...closed, state: runState(status), endedAt, durationMs: Math.max(0, endedAt - root.startedAt), replay };
  });
}

/** A run whose execution stopped part-way (interrupted, or recovering until
 * its retry): what was under way did not finish. The run itself is not over,
 * so it keeps no end time. */
export function haltRun(roots: Roots, runId: string, status: string, at: number, replay: boolean): Roots {
  return updateNode(roots, runId, runId, (root) => ({ ...closeOpen(root, "error", at), state: runState(status), replay: root.replay && replay }));
}

/** The tree for a loaded transcript: runs from GET /runs (oldest first)
 * that the snapshot folded — the version path on screen —,
 * their times, turns and resume marks from the snapshot's activity (the
 * server's fold of the same events the live view reduces), reasoning and
 * tool nodes from the items grouped by run and turn. Everything is replay.
 * Durations are the folded ones (turns, reasoning, tools); a duration
 * that is not known stays undefined, never 0. */
export function buildActivity(runs: Run[], items: Item[], activity: RunActivity[] = []): Roots {
  const byRun = new Map<string, Item[]>();
  const health = new Map<string, Item[]>();
  for (const it of items) {
    if (it.kind === "notice" && it.code === "run_health") {
      health.set(it.run_id, [...(health.get(it.run_id) ?? []), it]);
      continue;
    }
    if (!it.turn_id) continue;
    let list = byRun.get(it.run_id);
    if (!list) byRun.set(it.run_id, (list = []));
    list.push(it);
  }
  const spans = new Map(activity.map((a) => [a.run_id, a]));
  // The server folds only the version on screen (issue 15): a run of
  // another version has neither items nor activity in the snapshot, and
  // its root would show work the transcript does not.
  const visible = new Set([...spans.keys(), ...items.map((it) => it.run_id)]);
  const roots: Roots = [];
  for (const run of runs) {
    if (!visible.has(run.id)) continue;
    const span = spans.get(run.id);
    if (!run.started_at && !span?.started_at) continue; // never ran (a resumed run waiting again did)
    const root = runNode(run, true, undefined, {
      startedAt: span?.started_at ? ms(span.started_at) : undefined,
      endedAt: span?.ended_at ? ms(span.ended_at) : undefined,
    });
    // Whether something of the run may be under way now.
    const busy = UNDER_WAY.has(run.status);
    const children: ActivityNode[] = [];
    const turnOf = new Map<string, ActivityNode>();
    let turns = 0;
    for (const st of span?.steps ?? []) {
      const at = ms(st.started_at);
      if (st.kind === "resumed") {
        children.push(resumedNode(st.id, st.attempt ?? 0, at, true));
        continue;
      }
      const turn = turnNode(st.id, turns++, at, true);
      turn.state = st.state;
      if (st.state !== "running") turn.durationMs = st.duration_ms || undefined;
      turnOf.set(st.id, turn);
      children.push(turn);
    }
    for (const it of byRun.get(run.id) ?? []) {
      let turn = turnOf.get(it.turn_id!);
      if (!turn) {
        // A turn the snapshot's activity does not know (an older server).
        turn = turnNode(it.turn_id!, turns++, ms(it.created_at), true);
        turn.state = "done";
        turnOf.set(it.turn_id!, turn);
        children.push(turn);
      }
      if (it.kind === "reasoning") {
        const running = !!it.open && busy;
        turn.children.push({
          id: it.id, type: "think", label: "Thinking", state: running ? "running" : "done",
          output: it.text, startedAt: ms(it.created_at), durationMs: it.open ? undefined : it.duration_ms || undefined,
          children: [], replay: true,
        });
      } else if (it.kind === "tool_call" && it.tool) {
        const t = it.tool;
        const state = toolState(t.status);
        const done = state === "done" || state === "error" || state === "cancelled";
        turn.children.push({
          id: t.tool_call_id, type: "tool", label: t.label || t.name, tool: t.name, args: t.args,
          result: t.result, output: t.output, state: !busy && !done ? "error" : state, startedAt: ms(it.created_at),
          durationMs: done ? t.duration_ms : undefined, ...toolApproval(t), checkpoint: t.checkpoint_id,
          children: t.name === "delegate" ? subagentsOf(t.result).map((sa) => subagentNode(sa, ms(it.created_at), true)) : [], replay: true,
        });
      }
    }
    // The fold knows which turn is still working; while it works, it waits
    // when one of its steps waits for a person.
    for (const t of turnOf.values()) {
      if (t.state === "running" && busy && t.children.some((c) => c.state === "waiting")) t.state = "waiting";
    }
    // Health reports (h16-budgets) go where the live view put them: after
    // the turn they followed.
    for (const h of health.get(run.id) ?? []) {
      const at = ms(h.created_at);
      let i = children.length;
      while (i > 0 && children[i - 1].startedAt > at) i--;
      children.splice(i, 0, healthNode(`hlt_${h.id.replace(/^ntc_/, "")}`, h.text ?? "", at, true));
    }
    root.children = children;
    roots.push(root);
  }
  return roots;
}

/** The activity node of a delegated task (h18-delegate): the child run,
 * nested under the delegating tool call, linking to its session. */
export function subagentNode(sa: SubagentInfo, at: number, replay: boolean): ActivityNode {
  return {
    id: "sub_" + sa.session_id, type: "run", label: sa.title || "Subagent", link: sa.session_id,
    state: sa.status === "started" ? "running" : runState(sa.status), startedAt: at, children: [], replay,
  };
}

/** A delegate call's tasks from its finished result (`result.tasks`), for
 * a call loaded from the snapshot. */
export function subagentsOf(result: unknown): SubagentInfo[] {
  const tasks = (result as { tasks?: unknown } | null | undefined)?.tasks;
  if (!Array.isArray(tasks)) return [];
  return tasks
    .filter((t): t is Record<string, unknown> => !!t && typeof t === "object" && typeof (t as { session_id?: unknown }).session_id === "string")
    .map((t) => ({
      index: typeof t.index === "number" ? t.index : 0, title: typeof t.title === "string" ? t.title : "",
      session_id: t.session_id as string, run_id: typeof t.run_id === "string" ? t.run_id : "",
      status: typeof t.status === "string" ? t.status : "",
    }));
}
