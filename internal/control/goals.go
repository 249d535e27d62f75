package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// Goal statuses.
const (
	GoalActive  = "active"
	GoalPaused  = "paused"
	GoalMet     = "met"
	GoalBlocked = "blocked"
	GoalCleared = "cleared"
)

// Limits on a goal.
const (
	MaxGoalBytes = 8 << 10
	// DefaultGoalMaxRuns applies when a goal is set without max_runs: a
	// goal never carries on without a bound.
	DefaultGoalMaxRuns = 10
	MaxGoalRuns        = 1000
)

// GoalInput is the input of SetGoal. Zero limits mean none, except MaxRuns
// (DefaultGoalMaxRuns).
type GoalInput struct {
	Text        string
	MaxRuns     int
	MaxTokens   int64
	MaxCostUSD  float64
	MaxDuration time.Duration
	By          *event.Actor
}

// Goal returns the session's goal; not_found when it never had one.
func (s *Service) Goal(ctx context.Context, sessionID string) (store.Goal, error) {
	if _, err := s.st.GetSession(ctx, sessionID); err != nil {
		return store.Goal{}, err
	}
	return s.st.GetGoal(ctx, sessionID)
}

// SetGoal gives the session a goal (replacing the one it had, counters
// reset). An idle session starts working on it at once; a busy one when
// its run ends.
func (s *Service) SetGoal(ctx context.Context, sessionID string, in GoalInput) (store.Goal, error) {
	in.Text = strings.TrimSpace(in.Text)
	switch {
	case in.Text == "":
		return store.Goal{}, errorf(CodeInvalidInput, "text must not be empty")
	case len(in.Text) > MaxGoalBytes || !utf8.ValidString(in.Text):
		return store.Goal{}, errorf(CodeInvalidInput, "text must be UTF-8 of at most %d bytes", MaxGoalBytes)
	case in.MaxRuns < 0 || in.MaxRuns > MaxGoalRuns:
		return store.Goal{}, errorf(CodeInvalidInput, "max_runs must be between 1 and %d (0: the default, %d)", MaxGoalRuns, DefaultGoalMaxRuns)
	case in.MaxTokens < 0:
		return store.Goal{}, errorf(CodeInvalidInput, "max_tokens must not be negative")
	case in.MaxCostUSD < 0 || math.IsNaN(in.MaxCostUSD) || math.IsInf(in.MaxCostUSD, 0):
		return store.Goal{}, errorf(CodeInvalidInput, "max_cost_usd must be a non-negative number")
	case in.MaxDuration < 0:
		return store.Goal{}, errorf(CodeInvalidInput, "max_duration must not be negative")
	}
	if in.MaxRuns == 0 {
		in.MaxRuns = DefaultGoalMaxRuns
	}
	var out store.Goal
	err := s.w.Do(ctx, func(tx store.Tx) error {
		if _, err := tx.GetSession(ctx, sessionID); err != nil {
			return err
		}
		now := time.Now().UTC()
		g := store.Goal{SessionID: sessionID, Text: in.Text, Status: GoalActive, MaxRuns: in.MaxRuns, MaxTokens: in.MaxTokens,
			MaxCostUSD: in.MaxCostUSD, MaxDuration: in.MaxDuration, By: actorJSON(in.By), StartedAt: now, CreatedAt: now, UpdatedAt: now}
		if err := putGoal(ctx, tx, g, in.By); err != nil {
			return err
		}
		if err := continueIfIdle(ctx, tx, g, now); err != nil {
			return err
		}
		out = g
		return nil
	})
	return out, err
}

// SetGoalStatus pauses (status paused) or resumes (status active) the
// session's goal. Resuming gives it a fresh budget (counters and clock
// start again) and an idle session starts working on it at once.
func (s *Service) SetGoalStatus(ctx context.Context, sessionID, status string, by *event.Actor) (store.Goal, error) {
	if status != GoalPaused && status != GoalActive {
		return store.Goal{}, errorf(CodeInvalidInput, "status must be paused or active")
	}
	var out store.Goal
	err := s.w.Do(ctx, func(tx store.Tx) error {
		g, err := tx.GetGoal(ctx, sessionID)
		if err != nil {
			return err
		}
		if g.Status == GoalCleared {
			return &Error{Code: CodeConflict, Message: "the goal was cleared; set a new one", Details: map[string]any{"status": g.Status}}
		}
		now := time.Now().UTC()
		if status == GoalPaused {
			if g.Status != GoalActive {
				out = g // already stopped: nothing to pause
				return nil
			}
			g.Status, g.Reason = GoalPaused, "paused"
		} else {
			if g.Status == GoalActive {
				out = g
				return nil
			}
			g.Status, g.Reason, g.Runs, g.Tokens, g.CostUSD, g.StartedAt = GoalActive, "", 0, 0, 0, now
		}
		g.UpdatedAt = now
		if err := putGoal(ctx, tx, g, by); err != nil {
			return err
		}
		if g.Status == GoalActive {
			if err := continueIfIdle(ctx, tx, g, now); err != nil {
				return err
			}
		}
		out = g
		return nil
	})
	return out, err
}

// ClearGoal ends the session's goal (status cleared): no run follows.
func (s *Service) ClearGoal(ctx context.Context, sessionID string, by *event.Actor) (store.Goal, error) {
	var out store.Goal
	err := s.w.Do(ctx, func(tx store.Tx) error {
		g, err := tx.GetGoal(ctx, sessionID)
		if err != nil {
			return err
		}
		if g.Status != GoalCleared {
			g.Status, g.Reason, g.UpdatedAt = GoalCleared, "cleared", time.Now().UTC()
			if err := putGoal(ctx, tx, g, by); err != nil {
				return err
			}
		}
		out = g
		return nil
	})
	return out, err
}

// putGoal writes the goal and journals it as goal.updated.
func putGoal(ctx context.Context, tx store.Tx, g store.Goal, by *event.Actor) error {
	if err := tx.PutGoal(ctx, g); err != nil {
		return err
	}
	_, err := tx.AppendEvents(ctx, "", event.Draft{SessionID: g.SessionID, Type: event.GoalUpdated, Payload: GoalPayload(g, by)})
	return err
}

// GoalPayload is goal.updated's payload for g.
func GoalPayload(g store.Goal, by *event.Actor) event.GoalUpdatedPayload {
	return event.GoalUpdatedPayload{Text: g.Text, Status: g.Status, MaxRuns: g.MaxRuns, MaxTokens: g.MaxTokens,
		MaxCostUSD: g.MaxCostUSD, MaxDurationMS: g.MaxDuration.Milliseconds(), Runs: g.Runs, Tokens: g.Tokens,
		CostUSD: g.CostUSD, Note: g.Note, Reason: g.Reason, By: by}
}

func actorJSON(a *event.Actor) string {
	if a == nil {
		return ""
	}
	b, _ := json.Marshal(a)
	return string(b)
}

// continueIfIdle queues the goal's next run when the session has no busy
// run; a busy session continues when its run ends (goalAfterRun).
func continueIfIdle(ctx context.Context, tx store.Tx, g store.Goal, now time.Time) error {
	runs, err := tx.SessionRuns(ctx, g.SessionID)
	if err != nil {
		return err
	}
	for _, r := range runs {
		if r.Status.Busy() {
			return nil
		}
	}
	sess, err := tx.GetSession(ctx, g.SessionID)
	if err != nil {
		return err
	}
	var last store.Run
	if n := len(runs); n > 0 {
		last = runs[n-1]
	}
	return queueContinuation(ctx, tx, g, sess.Model, last, now)
}

// queueContinuation queues the goal's next run: its prompt names the goal
// and how to report on it; run.queued and message.user carry its number.
func queueContinuation(ctx context.Context, tx store.Tx, g store.Goal, model string, prev store.Run, now time.Time) error {
	n := g.Runs + 1
	prompt := GoalPrompt(g, n)
	r := store.Run{ID: id.New("run"), SessionID: g.SessionID, Status: run.Queued, Input: prompt, Model: model,
		CreatedAt: now, MaxRetries: prev.MaxRetries, RetryBackoff: prev.RetryBackoff}
	if err := tx.InsertRun(ctx, r); err != nil {
		return err
	}
	_, err := tx.AppendEvents(ctx, "",
		event.Draft{RunID: r.ID, SessionID: g.SessionID, Type: event.RunQueued, Payload: event.RunQueuedPayload{Input: prompt, Model: model, IfBusy: IfBusyEnqueue, Continuation: n}},
		event.Draft{RunID: r.ID, SessionID: g.SessionID, Type: event.MessageUser, Payload: event.MessageUserPayload{MessageID: id.New("msg"), Content: prompt, Continuation: n}})
	if err != nil {
		return err
	}
	// A session started by its goal is named after it, as after a first message.
	sess, err := tx.GetSession(ctx, g.SessionID)
	if err != nil {
		return err
	}
	if sess.Title == "" {
		sess.Title = titleFrom(g.Text)
		if _, err := tx.AppendEvents(ctx, "", event.Draft{RunID: r.ID, SessionID: g.SessionID, Type: event.TitleUpdated,
			Payload: event.TitlePayload{Title: sess.Title}}); err != nil {
			return err
		}
	}
	sess.UpdatedAt = now
	return tx.UpdateSession(ctx, sess)
}

// GoalPrompt is the message that starts the goal's n-th run. It names the
// run's number so a person (and a scripted model) can tell them apart.
func GoalPrompt(g store.Goal, n int) string {
	var b strings.Builder
	if n <= 1 {
		b.WriteString("Work towards this goal:\n\n")
	} else {
		fmt.Fprintf(&b, "Continuation %d of the goal:\n\n", n)
	}
	b.WriteString(g.Text)
	if n > 1 && g.Note != "" {
		b.WriteString("\n\nYour last note: " + g.Note)
	}
	b.WriteString("\n\nReport with the update_goal tool: status \"met\" once the goal is reached, \"blocked\" if you cannot go on without me (say why), otherwise \"in_progress\" with what is left. Until it is met or blocked, another run continues after this one.")
	return b.String()
}

// goalAfterRun settles the session's active goal when one of its runs
// ends: it counts the run, applies the agent's last update_goal report or
// a limit, and queues the next run when the goal is still active and
// nothing else is waiting in the session. A person is needed (approval,
// clarify) only inside a run, which parks meanwhile: the goal waits with
// it, as the run has not ended.
func goalAfterRun(ctx context.Context, tx store.Tx, r store.Run, o Outcome, evs []event.Event, now time.Time) error {
	g, err := tx.GetGoal(ctx, r.SessionID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if g.Status != GoalActive {
		return nil
	}
	report, kind := goalFacts(evs)
	if kind == RunKindCompact {
		return nil
	}
	g.Runs++
	g.Tokens += r.Usage.InputTokens + r.Usage.OutputTokens
	g.CostUSD += r.Usage.CostUSD
	g.UpdatedAt = now
	if report != nil && report.Note != "" {
		g.Note = report.Note
	}
	switch {
	case o.Status == run.Cancelled:
		g.Status, g.Reason = GoalPaused, "run_cancelled"
	case o.Status == run.Expired: // h17-expiry: its deadline passed
		g.Status, g.Reason = GoalPaused, "run_expired"
	case o.Status != run.Completed:
		g.Status, g.Reason = GoalPaused, "run_failed"
	case report != nil && report.Status == tool.GoalMet:
		g.Status, g.Reason = GoalMet, "met"
	case report != nil && report.Status == tool.GoalBlocked:
		g.Status, g.Reason = GoalBlocked, "blocked"
	case g.MaxRuns > 0 && g.Runs >= g.MaxRuns:
		g.Status, g.Reason = GoalPaused, "limit_runs"
	case g.MaxTokens > 0 && g.Tokens >= g.MaxTokens:
		g.Status, g.Reason = GoalPaused, "limit_tokens"
	case g.MaxCostUSD > 0 && g.CostUSD >= g.MaxCostUSD:
		g.Status, g.Reason = GoalPaused, "limit_cost"
	case g.MaxDuration > 0 && now.Sub(g.StartedAt) >= g.MaxDuration:
		g.Status, g.Reason = GoalPaused, "limit_duration"
	}
	if err := putGoal(ctx, tx, g, nil); err != nil {
		return err
	}
	if g.Status != GoalActive {
		return nil
	}
	// A message someone queued (or a steer that became one) goes first;
	// the goal carries on after it.
	runs, err := tx.SessionRuns(ctx, r.SessionID)
	if err != nil {
		return err
	}
	for _, other := range runs {
		if other.ID != r.ID && other.Status.Busy() {
			return nil
		}
	}
	return queueContinuation(ctx, tx, g, r.Model, r, now)
}

// goalFacts reads a run's events: its last successful update_goal report
// (nil if none) and its kind.
func goalFacts(evs []event.Event) (*tool.GoalReport, string) {
	var report *tool.GoalReport
	kind := ""
	for _, e := range evs {
		switch e.Type {
		case event.RunQueued:
			var p event.RunQueuedPayload
			if json.Unmarshal(e.Payload, &p) == nil {
				kind = p.Kind
			}
		case event.ToolDone:
			var p event.ToolDonePayload
			if json.Unmarshal(e.Payload, &p) != nil || p.Name != tool.NameUpdateGoal || p.Status != event.ToolOK {
				continue
			}
			var rep tool.GoalReport
			if json.Unmarshal(p.Result, &rep) == nil && rep.Status != "" {
				report = &rep
			}
		}
	}
	return report, kind
}
