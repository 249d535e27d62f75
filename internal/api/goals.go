package api

import (
	"net/http"
	"time"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// goalView is a session's goal as the API shows it.
type goalView struct {
	SessionID     string     `json:"session_id"`
	Text          string     `json:"text"`
	Status        string     `json:"status"`
	MaxRuns       int        `json:"max_runs"`
	MaxTokens     int64      `json:"max_tokens"`
	MaxCostUSD    float64    `json:"max_cost_usd"`
	MaxDurationMS int64      `json:"max_duration_ms"`
	Runs          int        `json:"runs"`
	Tokens        int64      `json:"tokens"`
	CostUSD       float64    `json:"cost_usd"`
	Note          string     `json:"note,omitempty"`
	Reason        string     `json:"reason,omitempty"`
	StartedAt     event.Time `json:"started_at"`
	CreatedAt     event.Time `json:"created_at"`
	UpdatedAt     event.Time `json:"updated_at"`
}

func newGoalView(g store.Goal) goalView {
	return goalView{SessionID: g.SessionID, Text: g.Text, Status: g.Status, MaxRuns: g.MaxRuns, MaxTokens: g.MaxTokens,
		MaxCostUSD: g.MaxCostUSD, MaxDurationMS: g.MaxDuration.Milliseconds(), Runs: g.Runs, Tokens: g.Tokens,
		CostUSD: g.CostUSD, Note: g.Note, Reason: g.Reason, StartedAt: event.Time{Time: g.StartedAt},
		CreatedAt: event.Time{Time: g.CreatedAt}, UpdatedAt: event.Time{Time: g.UpdatedAt}}
}

func (a *API) getGoal(w http.ResponseWriter, r *http.Request) {
	sid, ok := pathID(w, r, "ses", "session")
	if !ok {
		return
	}
	g, err := a.svc.Goal(r.Context(), sid)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, newGoalView(g))
}

// putGoal sets a goal (text, with limits) or changes its status (paused,
// active) when no text is given.
func (a *API) putGoal(w http.ResponseWriter, r *http.Request) {
	sid, ok := pathID(w, r, "ses", "session")
	if !ok {
		return
	}
	var in struct {
		Text        *string `json:"text"`
		Status      string  `json:"status"`
		MaxRuns     int     `json:"max_runs"`
		MaxTokens   int64   `json:"max_tokens"`
		MaxCostUSD  float64 `json:"max_cost_usd"`
		MaxDuration string  `json:"max_duration"` // a Go duration: "90m", "2h"
	}
	if !decode(w, r, &in) {
		return
	}
	var g store.Goal
	var err error
	switch {
	case in.Text != nil:
		if in.Status != "" && in.Status != control.GoalActive {
			writeError(w, http.StatusBadRequest, control.CodeInvalidInput, "a new goal starts active: leave status out or send active", nil)
			return
		}
		var d time.Duration
		if in.MaxDuration != "" {
			if d, err = time.ParseDuration(in.MaxDuration); err != nil || d < 0 {
				writeError(w, http.StatusBadRequest, control.CodeInvalidInput, `max_duration must be a duration such as "90m" or "2h"`, nil)
				return
			}
		}
		g, err = a.svc.SetGoal(r.Context(), sid, control.GoalInput{Text: *in.Text, MaxRuns: in.MaxRuns, MaxTokens: in.MaxTokens,
			MaxCostUSD: in.MaxCostUSD, MaxDuration: d, By: actor(r)})
	case in.Status != "":
		if in.MaxRuns != 0 || in.MaxTokens != 0 || in.MaxCostUSD != 0 || in.MaxDuration != "" {
			writeError(w, http.StatusBadRequest, control.CodeInvalidInput, "limits go with a new goal's text", nil)
			return
		}
		g, err = a.svc.SetGoalStatus(r.Context(), sid, in.Status, actor(r))
	default:
		writeError(w, http.StatusBadRequest, control.CodeInvalidInput, "send text (a new goal) or status (paused, active)", nil)
		return
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, newGoalView(g))
}

func (a *API) deleteGoal(w http.ResponseWriter, r *http.Request) {
	sid, ok := pathID(w, r, "ses", "session")
	if !ok {
		return
	}
	g, err := a.svc.ClearGoal(r.Context(), sid, actor(r))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, newGoalView(g))
}
