// Payload shapes of the events the state layer reads (docs/EVENTS.md,
// internal/event/payloads.go). Only the fields the UI uses; the server may
// add more, which are ignored.

import type { Attachment, ErrorInfo, TodoItem, UsageTotals } from "./types";

export interface RunQueuedP { kind?: string; input: string; model?: string; if_busy?: string }
export interface RunStartedP { attempt: number; model: string; provider: string; demo?: boolean; context_window?: number; resumed?: boolean }
/** retry, max_retries, retry_at: set when the status is recovering (retry
 * is which automatic retry comes next, 1-based). */
export interface RunStatusP { status: string; reason?: string; retry?: number; max_retries?: number; retry_at?: string }
export interface RunDoneP { status: string; error?: ErrorInfo; usage?: UsageTotals; by?: ActorP }
export interface MessageSteeredP { message_id: string; content: string; by?: ActorP; control_id: string }
export interface MessageUserP { message_id: string; content: string; by?: ActorP; attachments?: Attachment[]; steer?: boolean; continuation?: number }
export interface DeltaP { id: string; turn_id: string; delta: string }
/** duration_ms: reasoning.done only, how long the model reasoned. */
export interface DoneP { id: string; turn_id: string; text: string; signature?: string; redacted?: string; partial?: boolean; duration_ms?: number }
export interface TurnStartedP { turn_id: string; index: number }
export interface TurnEndedP { turn_id: string; stop_reason: string; duration_ms: number }
export interface UsageP { turn_id: string; turn: UsageTotals; total: UsageTotals }
export interface TitleP { title: string }
export interface ToolStartedP { tool_call_id: string; name: string; label: string; args: unknown; turn_id?: string }
export interface ToolUpdatedP { tool_call_id: string; phase?: string; stream?: string; output?: string }
/** duration_ms excludes wait_ms, the time spent waiting for a person. */
export interface ToolDoneP { tool_call_id: string; name: string; status: string; duration_ms: number; wait_ms?: number; output: string; result?: unknown; error?: string }
export interface RequestedP { request_id: string; tool_call_id: string; [k: string]: unknown }
export interface ApprovalRequestedP extends RequestedP { tool: string; action: string; reason: string; choices: string[]; expires_at: string | null }
export interface ClarifyRequestedP extends RequestedP { question: string; choices?: string[]; expires_at: string | null }
/** Who made a control (docs/EVENTS.md "by"). */
export interface ActorP { kind: "user" | "token" | "server_token" | "local" | "trigger"; name: string; user_id?: string; token_id?: string }
export interface ResolvedP { request_id: string; status: string; choice?: string; answer?: string; by?: ActorP; note?: string }
export interface TodoP { tool_call_id: string; items: TodoItem[] }
/** subagent.started and subagent.done (h18-delegate, EVENTS.md). */
export interface SubagentP {
  tool_call_id: string; index: number; session_id: string; run_id: string; parent_session_id: string;
  title?: string; status: string; summary?: string; duration_ms?: number;
}
export interface ContextWarningP { estimated_tokens: number; context_window: number; ratio: number; threshold: number }
export interface CompactedP {
  reason: string; original_count: number; compacted_count: number; preserved_messages: number;
  tokens_before: number; tokens_after: number; tokens_saved: number; summary: string; boundary: number;
}
export interface DiagnosticP { level: "info" | "warning" | "error"; code: string; message: string; details?: Record<string, unknown> }
export interface ResyncP { reason: string; cursor: number; last_id: number }

/** git.committed: a person committed through the Git panel. */
export interface GitCommittedP { hash: string; message: string; branch?: string; by?: ActorP }
