package api

// The approval-policy page (issue 16, h16-policy): the server's default
// mode and the log of how the policy settled each call with an effect
// (the approval.decided events). Rules keep their routes in runs.go.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/policy"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// Bounds of a page of GET /api/approvals/decisions.
const (
	defaultDecisionPage = 50
	maxDecisionPage     = 200
)

// decisionView is one row of the decisions log.
type decisionView struct {
	ID         int64        `json:"id"` // the approval.decided event
	At         event.Time   `json:"at"`
	SessionID  string       `json:"session_id"`
	RunID      string       `json:"run_id"`
	ToolCallID string       `json:"tool_call_id"`
	Tool       string       `json:"tool"`
	Action     string       `json:"action"`
	Risk       string       `json:"risk"`
	Mode       string       `json:"mode"`
	ProfileID  string       `json:"profile_id"`
	Outcome    string       `json:"outcome"`
	DecidedBy  string       `json:"decided_by"`
	RuleID     string       `json:"rule_id,omitempty"`
	Pattern    string       `json:"pattern,omitempty"`
	RequestID  string       `json:"request_id,omitempty"`
	Choice     string       `json:"choice,omitempty"`
	By         *event.Actor `json:"by,omitempty"`
}

// approvalMode answers the server's default approval mode, which a
// profile without a mode of its own takes.
func (a *API) approvalMode(w http.ResponseWriter, r *http.Request) {
	// The console's setting, once there is one, is the mode in force.
	configured := a.opt.ApprovalMode
	if a.opt.Settings != nil {
		if m := a.opt.Settings.Settings().Effective.ApprovalMode; m != "" {
			configured = m
		}
	}
	mode, err := policy.ParseMode(configured)
	if err != nil {
		mode = policy.ModeManual // as the runner treats an unknown mode
	}
	writeJSON(w, http.StatusOK, map[string]any{"default_mode": mode, "modes": policy.Modes()})
}

func (a *API) listDecisions(w http.ResponseWriter, r *http.Request) {
	q, limit, ok := decisionQuery(w, r)
	if !ok {
		return
	}
	q.Limit = limit + 1 // one more says whether there is more
	evs, err := a.st.ApprovalDecisions(r.Context(), q)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	next := ""
	if len(evs) > limit {
		evs = evs[:limit]
		next = strconv.FormatInt(evs[len(evs)-1].ID, 10)
	}
	out := make([]decisionView, 0, len(evs))
	for _, e := range evs {
		var p event.ApprovalDecidedPayload
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			a.log.Warn("decisions: unreadable approval.decided", "event_id", e.ID, "err", err)
			continue
		}
		// Masked again on the way out: a secret configured after the
		// call was journaled goes no further either.
		out = append(out, decisionView{ID: e.ID, At: e.TS, SessionID: e.SessionID, RunID: e.RunID,
			ToolCallID: p.ToolCallID, Tool: p.Tool, Action: a.opt.Redactor.String(p.Action), Risk: p.Risk, Mode: p.Mode,
			ProfileID: p.ProfileID, Outcome: p.Outcome, DecidedBy: p.DecidedBy, RuleID: p.RuleID,
			Pattern: a.opt.Redactor.String(p.Pattern), RequestID: p.RequestID, Choice: p.Choice, By: p.By})
	}
	writeJSON(w, http.StatusOK, map[string]any{"decisions": out, "next": next})
}

// decisionQuery reads the filters of GET /api/approvals/decisions; on bad
// input it answers 400 and returns false.
func decisionQuery(w http.ResponseWriter, r *http.Request) (store.DecisionQuery, int, bool) {
	v := r.URL.Query()
	var q store.DecisionQuery
	bad := func(code, msg string) (store.DecisionQuery, int, bool) {
		writeError(w, http.StatusBadRequest, code, msg, nil)
		return q, 0, false
	}
	limit := defaultDecisionPage
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxDecisionPage {
			return bad(control.CodeInvalidInput, fmt.Sprintf("limit must be an integer from 1 to %d", maxDecisionPage))
		}
		limit = n
	}
	if s := v.Get("cursor"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 {
			return bad(control.CodeInvalidCursor, "cursor must be the next of a previous page")
		}
		q.BeforeID = n
	}
	for _, f := range []struct {
		name string
		to   *time.Time
	}{{"from", &q.From}, {"to", &q.To}} {
		s := v.Get(f.name)
		if s == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return bad(control.CodeInvalidInput, f.name+" must be an RFC 3339 time")
		}
		*f.to = t
	}
	if !q.From.IsZero() && !q.To.IsZero() && !q.From.Before(q.To) {
		return bad(control.CodeInvalidInput, "from must be before to")
	}
	if s := v.Get("session"); s != "" {
		if !id.Valid("ses", s) {
			return bad(control.CodeInvalidInput, "session is not a session id")
		}
		q.SessionID = s
	}
	if s := v.Get("profile"); s != "" {
		if !id.Valid("prf", s) {
			return bad(control.CodeInvalidInput, "profile is not a profile id")
		}
		q.ProfileID = s
	}
	switch s := v.Get("outcome"); s {
	case "", event.OutcomeAllowed, event.OutcomeDenied, event.OutcomeExpired:
		q.Outcome = s
	default:
		return bad(control.CodeInvalidInput, "outcome must be allowed, denied or expired")
	}
	return q, limit, true
}
