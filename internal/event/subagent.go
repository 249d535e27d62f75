package event

// SubagentStartedPayload is the payload of subagent.started (seed 004's
// subagent_event, status "started"): the delegate call ToolCallID queued
// task Index (0-based) as run RunID of child session SessionID.
type SubagentStartedPayload struct {
	ToolCallID string `json:"tool_call_id"`
	Index      int    `json:"index"`
	// AgentID is the child session's id (seed 004's agent_id).
	AgentID         string `json:"agent_id"`
	SessionID       string `json:"session_id"`
	RunID           string `json:"run_id"`
	ParentSessionID string `json:"parent_session_id"`
	Title           string `json:"title"`
	ProfileID       string `json:"profile_id,omitempty"`
	// Workspace is "shared" (the parent's) or "scratch" (a copy).
	Workspace string `json:"workspace"`
	Status    string `json:"status"` // always "started"
}

// SubagentDonePayload is the payload of subagent.done: the child run of
// task Index ended with Status (a run.done status: completed, failed,
// cancelled, expired). Summary is the start of its last answer.
type SubagentDonePayload struct {
	ToolCallID      string      `json:"tool_call_id"`
	Index           int         `json:"index"`
	AgentID         string      `json:"agent_id"`
	SessionID       string      `json:"session_id"`
	RunID           string      `json:"run_id"`
	ParentSessionID string      `json:"parent_session_id"`
	Status          string      `json:"status"`
	Summary         string      `json:"summary,omitempty"`
	Error           *ErrorInfo  `json:"error,omitempty"`
	Usage           UsageTotals `json:"usage"`
	DurationMS      int64       `json:"duration_ms"`
}
