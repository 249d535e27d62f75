package sqlrow

// The tables at the heart of the journal: sessions, runs, the requests
// that wait for a person and the approval rules.

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// SessionCols are the columns ScanSession reads, in its order.
const SessionCols = `id, title, workspace, model, created_at_ms, updated_at_ms, parent_session_id, branched_from_event_id, pinned, archived_at_ms, project_id, profile_id,
	delegated_session_id, delegated_run_id, delegated_call_id`

// ScanSession reads one row of SessionCols.
func ScanSession(s Scanner) (store.Session, error) {
	var v store.Session
	var c, u int64
	var archived *int64
	var project *string
	err := s.Scan(&v.ID, &v.Title, &v.Workspace, &v.Model, &c, &u, &v.ParentSessionID, &v.BranchedFromEventID, &v.Pinned, &archived, &project, &v.ProfileID,
		&v.DelegatedSessionID, &v.DelegatedRunID, &v.DelegatedCallID)
	v.CreatedAt, v.UpdatedAt = fromMS(c), fromMS(u)
	if archived != nil {
		v.ArchivedAt = fromMS(*archived)
	}
	if project != nil {
		v.ProjectID = *project
	}
	return v, err
}

// RunCols are the columns ScanRun reads, in its order.
const RunCols = `id, session_id, status, input, model, priority, attempt, runner_id,
	lease_expires_ms, last_seq, error_code, error_message, usage_json,
	created_at_ms, started_at_ms, ended_at_ms, retries, max_retries, retry_backoff_ms, retry_at_ms, expires_at_ms`

// ScanRun reads one row of RunCols.
func ScanRun(s Scanner) (store.Run, error) {
	var v store.Run
	var status, usage string
	var lease, c, st, e, backoff, retryAt, expires int64
	err := s.Scan(&v.ID, &v.SessionID, &status, &v.Input, &v.Model, &v.Priority, &v.Attempt,
		&v.RunnerID, &lease, &v.LastSeq, &v.ErrorCode, &v.ErrorMessage, &usage, &c, &st, &e,
		&v.Retries, &v.MaxRetries, &backoff, &retryAt, &expires)
	if err != nil {
		return v, err
	}
	v.Status = run.Status(status)
	v.LeaseExpiresAt, v.CreatedAt, v.StartedAt, v.EndedAt = fromMS(lease), fromMS(c), fromMS(st), fromMS(e)
	v.RetryBackoff, v.RetryAt = time.Duration(backoff)*time.Millisecond, fromMS(retryAt)
	v.ExpiresAt = fromMS(expires)
	if usage != "" {
		if err := json.Unmarshal([]byte(usage), &v.Usage); err != nil {
			return v, fmt.Errorf("run %s usage: %w", v.ID, err)
		}
	}
	return v, nil
}

// RequestCols are the columns ScanRequest reads, in its order.
const RequestCols = `id, run_id, session_id, kind, status, tool_call_id, prompt_json, response,
	created_at_ms, expires_at_ms, resolved_at_ms`

// ScanRequest reads one row of RequestCols.
func ScanRequest(s Scanner) (store.Request, error) {
	var v store.Request
	var prompt string
	var c, e, res int64
	err := s.Scan(&v.ID, &v.RunID, &v.SessionID, &v.Kind, &v.Status, &v.ToolCallID, &prompt,
		&v.Response, &c, &e, &res)
	v.Prompt = json.RawMessage(prompt)
	v.CreatedAt, v.ExpiresAt, v.ResolvedAt = fromMS(c), fromMS(e), fromMS(res)
	return v, err
}

// RuleCols are the columns ScanRule reads, in its order.
const RuleCols = `id, tool, pattern, scope, session_id, created_at_ms, created_by, request_id`

// ScanRule reads one row of RuleCols.
func ScanRule(s Scanner) (store.Rule, error) {
	var v store.Rule
	var c int64
	var by string
	err := s.Scan(&v.ID, &v.Tool, &v.Pattern, &v.Scope, &v.SessionID, &c, &by, &v.RequestID)
	v.CreatedAt = fromMS(c)
	if err == nil {
		v.CreatedBy = store.RuleActor(by)
	}
	return v, err
}
