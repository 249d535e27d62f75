package api

import (
	"encoding/json"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// The JSON shapes of resources. Timestamps are RFC 3339 UTC with
// milliseconds (event.Time); absent ones are null.

type sessionView struct {
	ID        string     `json:"id"`
	Title     string     `json:"title"`
	Workspace string     `json:"workspace"`
	Model     string     `json:"model"`
	CreatedAt event.Time `json:"created_at"`
	UpdatedAt event.Time `json:"updated_at"`
	// Status is idle, the status of the active run, or answered: its
	// question was answered while it was parked and it waits for a runner.
	Status      string `json:"status"`
	ActiveRunID string `json:"active_run_id,omitempty"`
	QueuedRuns  int    `json:"queued_runs"`
	// Lineage of a branch (issue 15): the session it was branched from and
	// the event of that session's history it starts after.
	ParentSessionID     string `json:"parent_session_id,omitempty"`
	BranchedFromEventID int64  `json:"branched_from_event_id,omitempty"`
	// Organising sessions: archived_at and project_id are null when unset.
	Pinned     bool        `json:"pinned"`
	ArchivedAt *event.Time `json:"archived_at"`
	ProjectID  *string     `json:"project_id"`
	// ProfileID (h16-profiles) is the session's agent profile, "" for none.
	ProfileID string `json:"profile_id"`
	// DelegatedBy (h18-delegate) names the delegate call that made the
	// session: the session list tells children by it. Absent otherwise.
	DelegatedBy *delegationView `json:"delegated_by,omitempty"`
}

func newSessionView(s store.Session, busy []store.Run, answered map[string]bool) sessionView {
	v := sessionView{ID: s.ID, Title: s.Title, Workspace: s.Workspace, Model: s.Model,
		CreatedAt: event.Time{Time: s.CreatedAt}, UpdatedAt: event.Time{Time: s.UpdatedAt}, Status: "idle",
		ParentSessionID: s.ParentSessionID, BranchedFromEventID: s.BranchedFromEventID, ProfileID: s.ProfileID}
	organiseView(&v, s)
	v.DelegatedBy = newDelegationView(s)
	for _, r := range busy {
		if r.SessionID != s.ID {
			continue
		}
		if r.Status == run.Queued {
			v.QueuedRuns++
			if v.ActiveRunID == "" {
				v.Status = string(run.Queued)
			}
			continue
		}
		v.ActiveRunID, v.Status = r.ID, string(r.Status)
		if answered[r.ID] {
			v.Status = StatusAnswered
		}
	}
	return v
}

type runView struct {
	ID         string      `json:"id"`
	SessionID  string      `json:"session_id"`
	Status     run.Status  `json:"status"`
	Terminal   bool        `json:"terminal"`
	Input      string      `json:"input"`
	Model      string      `json:"model"`
	Attempt    int         `json:"attempt"`
	Retries    int         `json:"retries"`
	MaxRetries int         `json:"max_retries"`
	RetryAt    *event.Time `json:"retry_at,omitempty"`
	// ExpiresAt is the run's deadline, when it has one (h17-expiry).
	ExpiresAt         *event.Time       `json:"expires_at,omitempty"`
	LastEventID       int64             `json:"last_event_id"`
	LastSeq           int64             `json:"last_seq"`
	Controls          []run.Control     `json:"controls"`
	PendingRequestIDs []string          `json:"pending_request_ids"`
	Usage             event.UsageTotals `json:"usage"`
	Error             *event.ErrorInfo  `json:"error,omitempty"`
	// Waiting says what a run that does not execute waits for.
	Waiting *waitingView `json:"waiting,omitempty"`
	// Paused says why a paused run paused (h16-budgets).
	Paused *pausedView `json:"paused,omitempty"`
	// Steered: the message sent (if_busy "steer") was stored for this
	// running run's next step boundary rather than queued as a run.
	Steered bool `json:"steered,omitempty"`
	// JobID is the scheduled job that started the run, "" for none
	// (h17-deliver).
	JobID     string     `json:"job_id"`
	CreatedAt event.Time `json:"created_at"`
	StartedAt event.Time `json:"started_at"`
	EndedAt   event.Time `json:"ended_at"`
}

func newRunView(r store.Run, cursor int64, pending []string) runView {
	v := runView{ID: r.ID, SessionID: r.SessionID, Status: r.Status, Terminal: r.Status.Terminal(),
		Input: r.Input, Model: r.Model, Attempt: r.Attempt, Retries: r.Retries, MaxRetries: r.MaxRetries, LastEventID: cursor, LastSeq: r.LastSeq,
		Controls: run.Controls(r.Status), PendingRequestIDs: pending, Usage: r.Usage,
		CreatedAt: event.Time{Time: r.CreatedAt}, StartedAt: event.Time{Time: r.StartedAt}, EndedAt: event.Time{Time: r.EndedAt}}
	if v.PendingRequestIDs == nil {
		v.PendingRequestIDs = []string{}
	}
	if r.Status == run.Recovering && !r.RetryAt.IsZero() {
		v.RetryAt = &event.Time{Time: r.RetryAt}
	}
	if !r.ExpiresAt.IsZero() {
		v.ExpiresAt = &event.Time{Time: r.ExpiresAt}
	}
	if r.ErrorCode != "" {
		v.Error = &event.ErrorInfo{Code: r.ErrorCode, Message: r.ErrorMessage}
	}
	return v
}

type requestView struct {
	ID         string          `json:"id"`
	Kind       string          `json:"kind"`
	Status     string          `json:"status"`
	RunID      string          `json:"run_id"`
	SessionID  string          `json:"session_id"`
	ToolCallID string          `json:"tool_call_id"`
	Prompt     json.RawMessage `json:"prompt"`
	Response   string          `json:"response,omitempty"`
	CreatedAt  event.Time      `json:"created_at"`
	ExpiresAt  event.Time      `json:"expires_at"`
	ResolvedAt event.Time      `json:"resolved_at"`
	// Parent (h18-delegate): the session that delegated to the request's
	// session, so the needs-you list can name it; absent otherwise.
	Parent *parentView `json:"parent,omitempty"`
}

func newRequestView(q store.Request) requestView {
	return requestView{ID: q.ID, Kind: q.Kind, Status: q.Status, RunID: q.RunID, SessionID: q.SessionID,
		ToolCallID: q.ToolCallID, Prompt: q.Prompt, Response: q.Response,
		CreatedAt: event.Time{Time: q.CreatedAt}, ExpiresAt: event.Time{Time: q.ExpiresAt}, ResolvedAt: event.Time{Time: q.ResolvedAt}}
}

type ruleView struct {
	ID        string     `json:"id"`
	Tool      string     `json:"tool"`
	Pattern   string     `json:"pattern"`
	Scope     string     `json:"scope"`
	SessionID string     `json:"session_id,omitempty"`
	CreatedAt event.Time `json:"created_at"`
	// Where it came from (h16-policy): who answered or created it, and
	// the request it answered; omitted when not recorded.
	CreatedBy *event.Actor `json:"created_by,omitempty"`
	RequestID string       `json:"request_id,omitempty"`
}

func newRuleView(ru store.Rule) ruleView {
	return ruleView{ID: ru.ID, Tool: ru.Tool, Pattern: ru.Pattern, Scope: ru.Scope, SessionID: ru.SessionID,
		CreatedAt: event.Time{Time: ru.CreatedAt}, CreatedBy: ru.CreatedBy, RequestID: ru.RequestID}
}

type runnerView struct {
	ID          string     `json:"id"`
	Host        string     `json:"host"`
	PID         int        `json:"pid"`
	Version     string     `json:"version"`
	StartedAt   event.Time `json:"started_at"`
	HeartbeatAt event.Time `json:"heartbeat_at"`
	RunsHeld    int        `json:"runs_held"`
}
