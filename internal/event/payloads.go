package event

import "encoding/json"

// Payload shapes. Fields are additive: clients ignore what they do not know.

// Actor is who made a control or sent a message ("by"): a person signed
// in, one of their API tokens, the server token or the local user of an
// open loopback server. It never holds a secret, hash or token prefix.
type Actor struct {
	Kind    string `json:"kind"` // user, token, server_token, local, trigger (h17-hooks)
	Name    string `json:"name"`
	UserID  string `json:"user_id,omitempty"`
	TokenID string `json:"token_id,omitempty"`
}

// RunQueuedPayload is the payload of run.queued.
type RunQueuedPayload struct {
	// Kind is "" for a run answering a message, "compact" for a manual
	// context compaction.
	Kind   string `json:"kind,omitempty"`
	Input  string `json:"input"`
	Model  string `json:"model,omitempty"`
	IfBusy string `json:"if_busy,omitempty"`
	// TraceParent is the W3C trace context of the request that queued the
	// run, when tracing is on: the run's execution links to it.
	TraceParent string `json:"traceparent,omitempty"`
	// By is who sent the message or made the control (absent in events
	// journaled before sign-in existed, and for the system's own).
	By *Actor `json:"by,omitempty"`
	// SteerOf is the run a steer was sent to that ended before its next
	// step boundary: the steer became this queued run instead.
	SteerOf string `json:"steer_of,omitempty"`
	// Continuation marks a run the session's goal started by itself after
	// a run ended with the goal active and not met: its number among the
	// goal's runs.
	Continuation int `json:"continuation,omitempty"`
	// VersionOf names the run this one is another version of (a retry, or
	// an edit of its message): it hangs from that run's parent instead of
	// following the conversation's current end (issue 15).
	VersionOf string `json:"version_of,omitempty"`
	// JobID names the scheduled job whose fire queued the run (issue 17,
	// h17-jobs), so a job's history can be read from the journal.
	JobID string `json:"job_id,omitempty"`
}

// VersionSelectedPayload is the payload of version.selected: the run
// whose branch (it and its ancestors) is now the conversation ("" for
// none: every turn undone).
type VersionSelectedPayload struct {
	Leaf string `json:"leaf_run_id"`
	// Cause: select (a person picked a version), undo, restore.
	Cause string `json:"cause"`
	// From is the end before this change; Turns how many an undo took.
	From  string `json:"from_run_id,omitempty"`
	Turns int    `json:"turns,omitempty"`
	By    *Actor `json:"by,omitempty"`
}

// RunStartedPayload is the payload of run.started.
type RunStartedPayload struct {
	RunnerID string `json:"runner_id"`
	Attempt  int    `json:"attempt"`
	Model    string `json:"model"`
	Provider string `json:"provider"`
	Demo     bool   `json:"demo,omitempty"` // the offline demo model is answering
	// ContextWindow is the model's context window in tokens (0: unknown).
	ContextWindow int64 `json:"context_window,omitempty"`
	Resumed       bool  `json:"resumed,omitempty"`
	// Session state (seed 004; h16-profiles): the agent profile in force
	// (absent for none) with a snapshot of what the run uses of it, the
	// approval mode in force, and the model's reasoning level.
	Profile        *ProfileSnapshot `json:"profile,omitempty"`
	ApprovalMode   string           `json:"approval_mode,omitempty"`
	ReasoningLevel string           `json:"reasoning_level,omitempty"`
	ThinkingBudget int              `json:"thinking_budget,omitempty"`
}

// ProfileSnapshot is the agent profile a run started with, kept in its
// run.started so the history stays true when the profile is edited or
// deleted later.
type ProfileSnapshot struct {
	ID                 string   `json:"id"`
	Name               string   `json:"name"`
	Color              string   `json:"color,omitempty"`
	Instructions       string   `json:"instructions,omitempty"`
	InstructionsSHA256 string   `json:"instructions_sha256"`
	Model              string   `json:"model,omitempty"`
	Fallbacks          []string `json:"fallbacks,omitempty"`
	Tools              []string `json:"tools,omitempty"`
	ApprovalMode       string   `json:"approval_mode,omitempty"`
}

// RunStatusPayload is the payload of run.status.
type RunStatusPayload struct {
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// Set when the status is recovering: which automatic retry comes next
	// (1-based), how many are allowed, and when it starts.
	Retry      int   `json:"retry,omitempty"`
	MaxRetries int   `json:"max_retries,omitempty"`
	RetryAt    *Time `json:"retry_at,omitempty"`
	// By is who cancelled, on a cancelling status a person asked for.
	By *Actor `json:"by,omitempty"`
}

// RunDonePayload is the payload of run.done, the terminal event.
type RunDonePayload struct {
	Status string      `json:"status"` // completed | failed | cancelled | expired
	Error  *ErrorInfo  `json:"error,omitempty"`
	Usage  UsageTotals `json:"usage"`
	// By is who cancelled, on the run.done of a cancel a person asked for.
	By *Actor `json:"by,omitempty"`
}

// ErrorInfo is a safe, stable description of a failure.
type ErrorInfo struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Retryable: the same request may succeed later (rate limits,
	// overloaded or unreachable providers, a stream cut short).
	Retryable bool `json:"retryable,omitempty"`
}

// MessageSteeredPayload is the payload of message.steered: the steer as
// stored, before it reached the model. Its message.user later (a steer
// delivered, or the queued run it became) carries the same MessageID and
// ControlID.
type MessageSteeredPayload struct {
	MessageID string `json:"message_id"`
	Content   string `json:"content"`
	By        *Actor `json:"by,omitempty"`
	ControlID string `json:"control_id"`
}

// MessageUserPayload is the payload of message.user.
type MessageUserPayload struct {
	MessageID string `json:"message_id"`
	Content   string `json:"content"`
	// By is who sent the message.
	By *Actor `json:"by,omitempty"`
	// Attachments are files the person attached, saved in the workspace:
	// their path, type and digest, never their bytes.
	Attachments []Attachment `json:"attachments,omitempty"`
	// Steer marks a message sent into a running run (if_busy "steer"): it
	// landed at a step boundary of that run, after its tool calls, and the
	// model read it in the same run. ControlID is the stored steer it
	// delivers, so a resumed run does not deliver it twice.
	Steer     bool   `json:"steer,omitempty"`
	ControlID string `json:"control_id,omitempty"`
	// Continuation: the message is the prompt of a goal's continuation
	// run (its number among the goal's runs), written by the server, not
	// a person.
	Continuation int `json:"continuation,omitempty"`
}

// Attachment kinds.
const (
	AttachImage = "image" // sent to the model as image input
	AttachFile  = "file"  // named in the message text for the agent's tools
)

// Attachment is a file attached to a person's message.
type Attachment struct {
	Path   string `json:"path"` // relative to the session's workspace
	Name   string `json:"name"`
	MIME   string `json:"mime"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"` // hex digest when attached
	Kind   string `json:"kind"`   // AttachImage or AttachFile
}

// DeltaPayload is the payload of message.delta and reasoning.delta.
type DeltaPayload struct {
	ID     string `json:"id"`
	TurnID string `json:"turn_id"`
	Delta  string `json:"delta"`
}

// DonePayload is the payload of message.done and reasoning.done.
type DonePayload struct {
	ID        string `json:"id"`
	TurnID    string `json:"turn_id"`
	Text      string `json:"text"`
	Signature string `json:"signature,omitempty"` // provider proof for reasoning blocks
	Redacted  string `json:"redacted,omitempty"`  // opaque reasoning the provider encrypted; sent back as is
	Partial   bool   `json:"partial,omitempty"`   // cut short by cancel or error
	// DurationMS is how long the model reasoned (reasoning.done only): from
	// the block's first chunk to its end. Omitted when unknown (a block
	// that arrived whole, or one closed by whoever finished the run).
	DurationMS int64 `json:"duration_ms,omitempty"`
}

// TurnStartedPayload is the payload of turn.started.
type TurnStartedPayload struct {
	TurnID string `json:"turn_id"`
	Index  int    `json:"index"`
}

// TurnEndedPayload is the payload of turn.ended.
type TurnEndedPayload struct {
	TurnID     string `json:"turn_id"`
	StopReason string `json:"stop_reason"`
	DurationMS int64  `json:"duration_ms"`
}

// UsageTotals counts tokens.
type UsageTotals struct {
	InputTokens     int64 `json:"input_tokens"`
	OutputTokens    int64 `json:"output_tokens"`
	CachedTokens    int64 `json:"cached_tokens,omitempty"`
	ReasoningTokens int64 `json:"reasoning_tokens,omitempty"`
	// CostUSD prices the tokens from the model's price table; omitted when
	// the model has no known price.
	CostUSD float64 `json:"cost_usd,omitempty"`
}

// Add returns the sum of u and o.
func (u UsageTotals) Add(o UsageTotals) UsageTotals {
	return UsageTotals{
		InputTokens:     u.InputTokens + o.InputTokens,
		OutputTokens:    u.OutputTokens + o.OutputTokens,
		CachedTokens:    u.CachedTokens + o.CachedTokens,
		ReasoningTokens: u.ReasoningTokens + o.ReasoningTokens,
		CostUSD:         u.CostUSD + o.CostUSD,
	}
}

// UsagePayload is the payload of usage.
type UsagePayload struct {
	TurnID string      `json:"turn_id"`
	Turn   UsageTotals `json:"turn"`
	Total  UsageTotals `json:"total"`
}

// TitlePayload is the payload of title.updated.
type TitlePayload struct {
	Title string `json:"title"`
}

// ToolStartedPayload is the payload of tool.started.
type ToolStartedPayload struct {
	ToolCallID string          `json:"tool_call_id"`
	Name       string          `json:"name"`
	Label      string          `json:"label"` // concise, e.g. "$ go test ./..."
	Args       json.RawMessage `json:"args"`
	TurnID     string          `json:"turn_id,omitempty"`
}

// ToolUpdatedPayload is the payload of tool.updated.
type ToolUpdatedPayload struct {
	ToolCallID string `json:"tool_call_id"`
	// Phase "executing" marks the moment the tool really starts: a call
	// resumed after a crash is re-run only if it never reached it.
	Phase  string `json:"phase,omitempty"`
	Stream string `json:"stream,omitempty"` // stdout | stderr
	Output string `json:"output,omitempty"`
}

// Tool call outcome statuses (seed 004).
const (
	ToolOK        = "ok"
	ToolError     = "error"
	ToolTimeout   = "timeout"
	ToolDenied    = "denied"
	ToolCancelled = "cancelled"
)

// ToolDonePayload is the payload of tool.done.
type ToolDonePayload struct {
	ToolCallID string `json:"tool_call_id"`
	Name       string `json:"name"`
	Status     string `json:"status"`
	// DurationMS is the time spent settling the call, without WaitMS.
	DurationMS int64 `json:"duration_ms"`
	// WaitMS is the time spent waiting for a person: approval, or the
	// answer to a clarify question. Omitted when 0.
	WaitMS int64           `json:"wait_ms,omitempty"`
	Output string          `json:"output"`           // what the model sees
	Result json.RawMessage `json:"result,omitempty"` // structured, for people (seed 002)
	Error  string          `json:"error,omitempty"`
}

// ApprovalRequestedPayload is the payload of approval.requested.
type ApprovalRequestedPayload struct {
	RequestID  string `json:"request_id"`
	ToolCallID string `json:"tool_call_id"`
	Tool       string `json:"tool"`
	Action     string `json:"action"` // the exact command or action
	Reason     string `json:"reason"` // why it needs a person
	// Risk is the policy's stable code for the reason (dangerous_command,
	// network_private, side_effect, ...).
	Risk string `json:"risk,omitempty"`
	// Pattern is what a session or always answer remembers.
	Pattern   string   `json:"pattern,omitempty"`
	Choices   []string `json:"choices"`
	ExpiresAt Time     `json:"expires_at"`
}

// ResolvedPayload is the payload of approval.resolved and clarify.resolved.
type ResolvedPayload struct {
	RequestID string `json:"request_id"`
	Status    string `json:"status"` // resolved | expired | cancelled
	Choice    string `json:"choice,omitempty"`
	Answer    string `json:"answer,omitempty"`
	// By is who answered (status resolved); absent when the request
	// expired or was cancelled with its run.
	By *Actor `json:"by,omitempty"`
	// Note is what a person who denied an approval said to do instead;
	// the model receives it as the call's result.
	Note string `json:"note,omitempty"`
}

// ApprovalDecidedPayload is the payload of approval.decided (h16-policy):
// one per tool call with an effect, once the policy, a remembered rule or a
// person has settled whether it runs.
type ApprovalDecidedPayload struct {
	ToolCallID string `json:"tool_call_id"`
	Tool       string `json:"tool"`
	// Action is the exact command or action, known secrets masked.
	Action string `json:"action"`
	Risk   string `json:"risk,omitempty"`
	// Mode is the approval mode the run decided under; ProfileID the
	// run's profile ("" for none).
	Mode      string `json:"mode"`
	ProfileID string `json:"profile_id,omitempty"`
	// Outcome is allowed, denied or expired.
	Outcome string `json:"outcome"`
	// DecidedBy is mode (allowed without asking), policy (refused in every
	// mode), rule (a remembered rule: RuleID, Pattern), person (By, Choice)
	// or timeout (nobody answered the request in time).
	DecidedBy string `json:"decided_by"`
	RuleID    string `json:"rule_id,omitempty"`
	Pattern   string `json:"pattern,omitempty"`
	RequestID string `json:"request_id,omitempty"`
	Choice    string `json:"choice,omitempty"`
	By        *Actor `json:"by,omitempty"`
}

// Approval outcomes and deciders (ApprovalDecidedPayload).
const (
	OutcomeAllowed = "allowed"
	OutcomeDenied  = "denied"
	OutcomeExpired = "expired"

	DecidedByMode    = "mode"
	DecidedByPolicy  = "policy"
	DecidedByRule    = "rule"
	DecidedByPerson  = "person"
	DecidedByTimeout = "timeout"
)

// ClarifyRequestedPayload is the payload of clarify.requested.
type ClarifyRequestedPayload struct {
	RequestID  string   `json:"request_id"`
	ToolCallID string   `json:"tool_call_id"`
	Question   string   `json:"question"`
	Choices    []string `json:"choices,omitempty"`
	ExpiresAt  Time     `json:"expires_at"`
}

// TodoItem is one entry of the agent's todo list.
type TodoItem struct {
	ID      string `json:"id"`
	Content string `json:"content"`
	Status  string `json:"status"` // pending | in_progress | done | cancelled
}

// TodoPayload is the payload of todo.updated: the whole list, replacing the
// previous one.
type TodoPayload struct {
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Items      []TodoItem `json:"items"`
}

// ContextWarningPayload is the payload of context.warning.
type ContextWarningPayload struct {
	EstimatedTokens int64   `json:"estimated_tokens"`
	ContextWindow   int64   `json:"context_window"`
	Ratio           float64 `json:"ratio"` // estimated_tokens / context_window
	Threshold       float64 `json:"threshold"`
}

// ContextCompactedPayload is the payload of context.compacted. Summary
// stands for the first Covered messages of the session's conversation as
// rebuilt from the journal (before any compaction); later messages, the
// recent working set, are kept as they are.
type ContextCompactedPayload struct {
	Reason         string `json:"reason"` // auto | manual
	OriginalCount  int    `json:"original_count"`
	CompactedCount int    `json:"compacted_count"`
	PreservedCount int    `json:"preserved_messages"`
	TokensBefore   int64  `json:"tokens_before"`
	TokensAfter    int64  `json:"tokens_after"`
	TokensSaved    int64  `json:"tokens_saved"`
	Summary        string `json:"summary"`
	Covered        int    `json:"covered_messages"`
}

// DiagnosticPayload is the payload of diagnostic.
type DiagnosticPayload struct {
	Level   string         `json:"level"` // info | warning | error
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
}

// SessionInfo is a session as session.created announces it: the fields of
// the API's session resource that are the session's own (no run status).
type SessionInfo struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Workspace string `json:"workspace"`
	Model     string `json:"model"`
	CreatedAt Time   `json:"created_at"`
	UpdatedAt Time   `json:"updated_at"`
	ProjectID string `json:"project_id,omitempty"` // organising sessions
	ProfileID string `json:"profile_id,omitempty"` // h16-profiles
	// Delegation (h18-delegate): the session, run and tool call of the
	// delegate call that made this session; absent for other sessions.
	DelegatedSessionID string `json:"delegated_session_id,omitempty"`
	DelegatedRunID     string `json:"delegated_run_id,omitempty"`
	DelegatedCallID    string `json:"delegated_call_id,omitempty"`
}

// SessionCreatedPayload is the payload of session.created.
type SessionCreatedPayload struct {
	Session SessionInfo `json:"session"`
}

// SessionUpdatedPayload is the payload of session.updated: the session's id,
// its new updated_at and only the fields that changed. Pointers tell a field
// set to "" (a cleared title) from one left alone; later fields (pinned,
// archived) join the same way.
type SessionUpdatedPayload struct {
	ID        string  `json:"id"`
	Title     *string `json:"title,omitempty"`
	Model     *string `json:"model,omitempty"`
	UpdatedAt Time    `json:"updated_at"`
	// Organising sessions. ArchivedAt is set with Archived true; ProjectID
	// "" means the session left its project.
	Pinned     *bool   `json:"pinned,omitempty"`
	Archived   *bool   `json:"archived,omitempty"`
	ArchivedAt *Time   `json:"archived_at,omitempty"`
	ProjectID  *string `json:"project_id,omitempty"`
	// ProfileID (h16-profiles) "" means the session has no profile now.
	ProfileID *string `json:"profile_id,omitempty"`
}

// SessionDeletedPayload is the payload of session.deleted.
type SessionDeletedPayload struct {
	ID string `json:"id"`
}

// ProjectInfo is a project as project.created and project.updated carry
// it: the whole project, so a tab replaces its copy.
type ProjectInfo struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Workspace    string `json:"workspace"`
	Model        string `json:"model"`
	Instructions string `json:"instructions"`
	CreatedAt    Time   `json:"created_at"`
	UpdatedAt    Time   `json:"updated_at"`
}

// ProjectPayload is the payload of project.created and project.updated.
type ProjectPayload struct {
	Project ProjectInfo `json:"project"`
}

// ProjectDeletedPayload is the payload of project.deleted.
type ProjectDeletedPayload struct {
	ID string `json:"id"`
}

// TerminalOpenedPayload is the payload of terminal.opened.
type TerminalOpenedPayload struct {
	TerminalID string `json:"terminal_id"`
	Shell      string `json:"shell"`
	By         *Actor `json:"by,omitempty"`
}

// TerminalClosedPayload is the payload of terminal.closed. Reason is
// "exited" (the shell ended; Code is its status), "closed" (a person
// closed it), "idle", or "server stopping"; Code is -1 when the shell was
// killed.
type TerminalClosedPayload struct {
	TerminalID string `json:"terminal_id"`
	Reason     string `json:"reason"`
	Code       int    `json:"code"`
	By         *Actor `json:"by,omitempty"`
}

// ResyncPayload is the payload of resync.
type ResyncPayload struct {
	Reason string `json:"reason"`
	Cursor int64  `json:"cursor"`  // what the client asked for
	LastID int64  `json:"last_id"` // the newest event id the server has
}

// MaxCheckpointFiles is how many paths checkpoint.created and
// checkpoint.restored name; the full list is one API call away.
const MaxCheckpointFiles = 20

// CheckpointCreatedPayload is the payload of checkpoint.created. The counts
// are of the change since the workspace's previous checkpoint.
type CheckpointCreatedPayload struct {
	CheckpointID string   `json:"checkpoint_id"`
	ToolCallID   string   `json:"tool_call_id,omitempty"`
	Reason       string   `json:"reason,omitempty"`
	FilesChanged int      `json:"files_changed"`
	Added        int      `json:"added"`
	Removed      int      `json:"removed"`
	Files        []string `json:"files"` // the first MaxCheckpointFiles paths
	By           *Actor   `json:"by,omitempty"`
}

// CheckpointRestoredPayload is the payload of checkpoint.restored.
type CheckpointRestoredPayload struct {
	CheckpointID string `json:"checkpoint_id"` // the state files were put back to
	// RunID is set when a run's changes were reverted, ToolCallID when a
	// tool call's were.
	RunID      string   `json:"run_id,omitempty"`
	ToolCallID string   `json:"tool_call_id,omitempty"`
	Files      []string `json:"files"` // the paths written or removed (first MaxCheckpointFiles)
	Count      int      `json:"count"` // how many in all
	// Before undoes the rollback: restoring it brings back what the
	// rollback replaced.
	Before string `json:"before_checkpoint_id"`
	After  string `json:"after_checkpoint_id"`
	By     *Actor `json:"by,omitempty"`
}
