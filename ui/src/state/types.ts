// Wire shapes of the Caduceus API (docs/API.md) and event journal
// (docs/EVENTS.md), and the client-side models built from them. This file is
// the contract between the state layer (src/state) and the views
// (src/shell, src/transcript): views read these, only src/state writes them.

import type { Signal } from "@preact/signals";

// ---- Wire: events --------------------------------------------------------

/** The event types of runs (and resync), which the reducer folds into a
 * session's live state. With SessionEventType, every event type the server
 * can emit: together they must equal Go's event.Catalog() (checked by a
 * browser test through window.caduceus.handledEventTypes()). */
export type EventType =
  | "run.queued" | "run.started" | "run.status" | "run.done"
  | "message.user" | "message.steered" | "message.delta" | "message.done"
  | "reasoning.delta" | "reasoning.done"
  | "turn.started" | "turn.ended" | "usage" | "title.updated"
  | "tool.started" | "tool.updated" | "tool.done"
  | "approval.requested" | "approval.resolved" | "approval.decided"
  | "clarify.requested" | "clarify.resolved"
  | "todo.updated" | "subagent.started" | "subagent.done" | "context.warning" | "context.compacted"
  | "checkpoint.created" | "checkpoint.restored"
  | "diagnostic" | "resync"
  | "git.committed" | "terminal.opened" | "terminal.closed"
  | "goal.updated"
  | "version.selected";

/** Session lifecycle: events of no run (run_id ""), which the store applies
 * to the sessions list. GET /api/events carries them from every session. */
export type SessionEventType = "session.created" | "session.updated" | "session.deleted"
  // Projects (organising sessions): no session, no run; session_id holds
  // the project's id. The store hands them to onProjectEvent listeners.
  | "project.created" | "project.updated" | "project.deleted";

export interface Envelope<P = any> {
  id: number; // global event id, the stream cursor (0 for resync)
  seq: number; // gap-free per run; per session for session.* events
  run_id: string; // "" for session.* events
  session_id: string;
  type: EventType | SessionEventType;
  ts: string; // RFC 3339 UTC with ms
  terminal: boolean;
  payload: P;
}

/** retryable: the same request may succeed later (a rate limit, an
 * overloaded or unreachable provider). */
export interface ErrorInfo { code: string; message: string; retryable?: boolean }
export interface UsageTotals {
  input_tokens: number; output_tokens: number;
  cached_tokens?: number; reasoning_tokens?: number; cost_usd?: number;
}

// ---- Wire: resources -----------------------------------------------------

export type RunStatus =
  | "queued" | "running" | "awaiting_approval" | "awaiting_clarify" | "paused"
  | "cancelling" | "cancelled" | "failed" | "completed" | "interrupted" | "recovering" | "expired";

export interface Session {
  id: string; title: string; workspace: string; model: string;
  created_at: string; updated_at: string;
  /** answered: the active run's question was answered while it was
   * parked; it waits for a runner to continue. */
  status: "idle" | "answered" | RunStatus; active_run_id?: string; queued_runs: number;
  /** A branch's lineage (issue 15): the session it came from and the
   * event of that session's history it starts after. */
  parent_session_id?: string; branched_from_event_id?: number;
  /** Organising sessions: pinned ones list first; archived_at and
   * project_id are null when unset. */
  pinned?: boolean; archived_at?: string | null; project_id?: string | null;
  /** Profiles (h16-profiles): the session's agent profile, "" for none. */
  profile_id?: string;
  /** A subagent's session (h18-delegate): the delegate call that made it. */
  delegated_by?: { session_id: string; run_id: string; tool_call_id: string };
}

/** A project (organising sessions): groups sessions, carries defaults for
 * new ones and instructions for their runs. */
export interface Project {
  id: string; name: string; workspace: string; model: string; instructions: string;
  /** h16-profiles: the profile its new sessions take ("": the default). */
  profile_id?: string;
  created_at: string; updated_at: string;
}

/** session.created: the session's own fields (a new session is idle). */
export interface SessionCreatedP {
  session: Pick<Session, "id" | "title" | "workspace" | "model" | "created_at" | "updated_at" | "project_id"> & {
    /** A subagent's session (h18-delegate). */
    delegated_session_id?: string; delegated_run_id?: string; delegated_call_id?: string;
  };
}
/** session.updated: only the fields that changed, and the new updated_at.
 * Later fields (pinned, archived) arrive the same way. */
export interface SessionUpdatedP {
  id: string; title?: string; model?: string; updated_at: string;
  /** Organising sessions; project_id "" means it left its project. */
  pinned?: boolean; archived?: boolean; archived_at?: string; project_id?: string;
  /** Profiles (h16-profiles); "" means the session has no profile now. */
  profile_id?: string;
}
/** session.deleted. */
export interface SessionDeletedP { id: string }
/** project.created and project.updated: the whole project. */
export interface ProjectP { project: Project }
/** project.deleted: its sessions are in no project now. */
export interface ProjectDeletedP { id: string }

export interface Run {
  id: string; session_id: string; status: RunStatus; terminal: boolean;
  input: string; model: string; attempt: number; last_event_id: number; last_seq: number;
  controls: string[]; pending_request_ids: string[]; usage: UsageTotals; error?: ErrorInfo;
  created_at: string; started_at: string | null; ended_at: string | null;
  /** Automatic retries used and allowed, and when a recovering run is
   * retried (omitted when zero). */
  retries?: number; max_retries?: number; retry_at?: string;
  /** Client-only: which automatic retry comes next (1-based), from the
   * latest run.status "recovering". */
  retry?: number;
  /** What a run that does not execute waits for (GET /api/runs/{id});
   * absent while it executes or once it has ended. */
  waiting?: Waiting;
  /** Why a paused run paused (h16-budgets; GET only: live, the pause
   * notice in the transcript says it). */
  paused?: { code: string; reason: string; details?: Record<string, unknown> };
}

/** Why a run waits (docs/API.md): a person, the session's previous run, a
 * runner when none is alive, or a free runner slot (position 1 = next). */
export interface Waiting {
  reason: "person" | "previous_run" | "runner" | "runner_slot" | "retry";
  position?: number; run_id?: string; retry_at?: string;
}

/** A runner process, as GET /api/health lists it. */
export interface RunnerInfo {
  id: string; host: string; pid: number; version: string;
  started_at: string; heartbeat_at: string; runs_held: number;
}

/** GET /api/health. 503 (store "unavailable") when the database cannot be
 * read; "degraded" when no runner is alive while runs wait. */
export interface Health {
  status: "ok" | "degraded"; store: "ok" | "unavailable" | "write_failing"; runner_mode: "inprocess" | "none";
  runners: RunnerInfo[]; queue_depth: number; recovering: number; reason?: string;
  /** Runs whose question was answered while they were parked: they wait
   * for a runner like queued ones. */
  answered?: number;
}

export interface ApprovalPrompt {
  request_id: string; tool_call_id: string; tool: string;
  action: string; reason: string; risk?: string; pattern?: string;
  choices: string[]; expires_at: string | null;
}
export interface ClarifyPrompt {
  request_id: string; tool_call_id: string; question: string;
  choices?: string[]; expires_at: string | null;
}

export interface HumanRequest {
  id: string; kind: "approval" | "clarify";
  status: "pending" | "resolved" | "expired" | "cancelled";
  run_id: string; session_id: string; tool_call_id: string;
  prompt: ApprovalPrompt | ClarifyPrompt; response?: string;
  created_at: string; expires_at: string | null; resolved_at: string | null;
  /** A subagent's request (h18-delegate): the session that delegated to
   * the request's session. */
  parent?: { session_id: string; title: string };
}

export interface ModelInfo { ref: string; [k: string]: unknown }

/** GET /api/commands: slash commands the server supports. */
export interface Command { name: string; args?: string; description: string }

// ---- Transcript ----------------------------------------------------------

export type ToolStatus =
  | "pending" | "awaiting_approval" | "awaiting_clarify" | "running"
  | "ok" | "error" | "timeout" | "denied" | "cancelled";

/** How a call's approval was settled: a person's choice (once, session,
 * always, deny), expired, cancelled, or "rule" (a remembered rule matched;
 * pattern is the rule's). */
/** How an approval was settled; `by` names who answered (absent: the
 * local user, or nobody). */
export interface ApprovalInfo { outcome: string; pattern?: string; by?: string; note?: string }

export interface ToolInfo {
  tool_call_id: string; name: string; label: string; args: unknown;
  status: ToolStatus; output?: string; result?: any; error?: string;
  /** The call's own time, without wait_ms (the wait for a person). */
  duration_ms?: number; wait_ms?: number; request_id?: string;
  approval?: ApprovalInfo;
  /** The checkpoint taken before the call ran (calls that may change the
   * workspace): the Changes tab shows what the call changed. */
  checkpoint_id?: string;
  /** Client-only: live output from tool.updated while running. */
  live_output?: string;
  /** Client-only: ms timestamp of tool.started (for a running timer). */
  started_ms?: number;
  /** Client-only: a delegate call's child runs, from subagent.started and
   * subagent.done (the finished call's result lists them too). */
  subagents?: SubagentInfo[];
}

/** One task of a delegate call (h18-delegate). */
export interface SubagentInfo {
  index: number; title: string; session_id: string; run_id: string;
  /** "started" until the child run ends, then its final status. */
  status: string; summary?: string;
}

/** A file attached to a person's message, saved in the session's workspace
 * (POST /api/sessions/{id}/uploads). Images go to the model as image
 * input; other files are named in the message for the agent to read. */
export interface Attachment {
  path: string; name: string; mime: string; size: number; sha256?: string; kind: "image" | "file";
}

export type ItemKind = "user" | "assistant" | "reasoning" | "tool_call" | "run_end" | "compaction" | "notice";

/** One transcript entry, as GET /api/sessions/{id}/messages returns it, then
 * kept current by events. Notices are diagnostics and context warnings. */
export interface Item {
  id: string; kind: ItemKind; run_id: string; turn_id?: string; created_at: string;
  text?: string; signature?: string; open?: boolean; partial?: boolean;
  /** Reasoning: how long the model thought (absent or 0: unknown). */
  duration_ms?: number;
  tool?: ToolInfo; status?: string; error?: ErrorInfo;
  compaction?: { reason: string; summary: string; tokens_saved: number; original_count: number; compacted_count: number; covered_messages: number };
  last_event_id: number;
  /** The tokens and cost of the model call that wrote it (issue 15): on a
   * turn's last assistant text, else its last item. */
  usage?: UsageTotals;
  /** Client-only: came from the snapshot (history), not a live event. */
  replay?: boolean;
  /** A user message: who sent it; a cancelled run_end: who stopped it
   * (absent: the local user, or nobody). */
  by?: string;
  /** Notices: level, code and the technical details behind the text. */
  level?: "info" | "warning" | "error"; code?: string; details?: Record<string, unknown>;
  /** A user message whose run no runner has taken yet (the server's fold
   * sets it; live, the run's status says the same). */
  queued?: boolean;
  /** A user message's attached files. */
  attachments?: Attachment[];
  /** A user message steered into a running run: it stands where the run
   * read it, between its steps. */
  steer?: boolean;
  /** A steer not delivered yet (message.steered): it reaches the agent
   * after its current step and reads last until then (issue 15). */
  pending?: boolean;
  /** A goal's run prompt (written by the server): its number. */
  continuation?: number;
  /** A user message whose run has other versions (retry, edit): which one
   * is shown, of how many (issue 15). */
  versions?: { index: number; count: number; runs: string[] };
  /** Assistant text cut short that its resumed run answered again after
   * (folded away so nothing reads twice). */
  superseded?: boolean;
}

/** GET .../messages besides the items: what the fold derives for the
 * activity tree, the todo list and the context meter (docs/API.md). */
export interface ActivityStep {
  kind: "turn" | "resumed"; id: string; started_at: string;
  state: "running" | "done" | "error"; duration_ms?: number; attempt?: number;
}
export interface RunActivity { run_id: string; started_at?: string; ended_at?: string; steps: ActivityStep[] }
export interface SessionContext { tokens: number; window: number }
export interface Snapshot {
  items: Item[]; activity?: RunActivity[]; todos?: TodoItem[]; context?: SessionContext; last_event_id: number;
  /** Turns undone that can still be restored (issue 15). */
  undone?: { turns: number };
}

/** Items are held one signal each, so a streaming delta re-renders only
 * the item it touches; the list signal changes only when items are added
 * or removed. */
export interface ItemModel { id: string; sig: Signal<Item> }

// ---- Activity feed (seed 002) --------------------------------------------

export interface ActivityNode {
  id: string; // turn_id, tool_call_id, reasoning id, or a client id
  type: "run" | "turn" | "think" | "tool" | "received" | "marker";
  label: string;
  /** cancelled: stopped by a person; neither a success nor a failure. */
  state: "running" | "done" | "error" | "waiting" | "cancelled";
  tool?: string; args?: unknown; result?: unknown; output?: string;
  startedAt: number; endedAt?: number; durationMs?: number;
  /** Tools: how the approval was settled, and the wait for a person
   * (set only when one was asked). */
  approval?: ApprovalInfo; waitMs?: number;
  /** Runs: the n-th execution (shown from the second on). */
  attempt?: number;
  /** Tools: the checkpoint taken before the call ran. */
  checkpoint?: string;
  /** A delegated child run (h18-delegate): the child session it links to. */
  link?: string;
  children: ActivityNode[];
  replay: boolean;
}

// ---- Per-session live state ----------------------------------------------

/** A session's goal: what its runs work towards (GET /api/sessions/{id}/goal,
 * goal.updated). Limits of 0 mean none. */
export interface Goal {
  text: string; status: "active" | "paused" | "met" | "blocked" | "cleared";
  max_runs?: number; max_tokens?: number; max_cost_usd?: number; max_duration_ms?: number;
  runs: number; tokens: number; cost_usd: number; note?: string; reason?: string;
}

export interface TodoItem { id: string; content: string; status: "pending" | "in_progress" | "done" | "cancelled" }

export interface SessionState {
  id: string;
  items: Signal<ItemModel[]>;
  activity: Signal<ActivityNode[]>; // roots: one per run, newest last
  runs: Signal<Run[]>; // every run of the session, oldest first
  todos: Signal<TodoItem[]>;
  /** Messages whose runs wait in "queued" behind the busy run: shown above
   * the composer (removable), not in the transcript, until their run starts. */
  queued: Signal<{ run_id: string; text: string; created_at: string }[]>;
  /** The busy run (running, awaiting_*, cancelling, recovering), if any. */
  busyRun: Signal<Run | null>;
  usage: Signal<{ total: UsageTotals; contextTokens: number; contextWindow: number; model: string; provider: string; demo: boolean }>;
  /** Loaded from the snapshot; false while loading. */
  loaded: Signal<boolean>;
  /** The hash of the last git.committed heard (live or replayed): the Git
   * tab reloads when it moves. */
  lastCommit: Signal<string>;
  /** The session's goal (GET …/goal, then goal.updated); null: none. */
  goal: Signal<Goal | null>;
  /** Highest event id applied to this session. */
  cursor: number;
  /** Counts checkpoint.created and checkpoint.restored events seen live:
   * views that show changes (the Changes tab, the line under each run)
   * fetch again when it moves. */
  checkpoints: Signal<number>;
  /** Turns undone that can still be restored (0: none; issue 15). */
  undone: Signal<number>;
}

export type Connection = "connecting" | "live" | "reconnecting" | "offline";

/** Profiles (h16-profiles): an agent — its name and colour, instructions,
 * model with fallbacks, enabled tools (empty: all), approval mode ("": the
 * server's) and default workspace. deleted_at is set on a deleted one
 * (GET /api/profiles/{id} still answers it). */
export interface Profile {
  id: string; name: string; color: string; instructions: string;
  model: string; fallbacks: string[]; tools: string[];
  approval_mode: "" | "manual" | "smart" | "off"; workspace: string; default: boolean;
  created_at: string; updated_at: string; deleted_at: string | null;
}
