// Package delegate runs the delegate tool's tasks (issue 18, h18-delegate):
// each task becomes a child session, made in one transaction with the
// others and linked to the delegating session, run and tool call, and a
// run queued in it like any message's, executed by whichever runner claims
// it. At most Limit children of a call run at once; the rest are queued as
// slots free. The delegating call waits, idle (tool.Env.Idle: the runner
// does not count it against its limit, so its own children are never
// starved of slots by the parents waiting for them), and journals
// subagent.started and subagent.done in the parent's run.
//
// Everything the call needs to carry on is in the store: a call run again
// after a handover finds its children (Store.DelegatedSessions) and their
// runs, and waits for them instead of starting the tasks again.
package delegate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/journal"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// Defaults for Config's zero values.
const (
	DefaultLimit           = 3
	DefaultPoll            = 200 * time.Millisecond
	DefaultScratchMaxBytes = 256 << 20
	// SummaryChars bounds subagent.done's summary; the tool result holds
	// the whole answer.
	SummaryChars = 300
)

// Config tunes a Service. Zero values mean the defaults.
type Config struct {
	// Limit is how many child runs of one delegate call run at once.
	Limit int
	// ScratchDir holds the scratch copies of workspaces; "" refuses tasks
	// that ask for one.
	ScratchDir string
	// ScratchMaxBytes bounds the workspace a scratch copy is made of.
	ScratchMaxBytes int64
	// Poll is how often the waiting call reads its children's runs. The
	// store is read, not the hub, so a child executed by another process
	// is seen all the same.
	Poll time.Duration
}

// Service is a tool.Delegator.
type Service struct {
	st  store.Store
	w   *journal.Writer
	svc *control.Service
	cfg Config
	log *slog.Logger
}

// New returns a Service that makes sessions and queues runs through svc.
func New(st store.Store, w *journal.Writer, svc *control.Service, cfg Config, log *slog.Logger) *Service {
	if cfg.Limit <= 0 {
		cfg.Limit = DefaultLimit
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	if cfg.ScratchMaxBytes <= 0 {
		cfg.ScratchMaxBytes = DefaultScratchMaxBytes
	}
	return &Service{st: st, w: w, svc: svc, cfg: cfg, log: log}
}

// child is one task's session and, once queued, its run.
type child struct {
	task    tool.DelegateTask
	sess    store.Session
	run     store.Run // zero until queued
	queued  time.Time
	outcome *tool.DelegateOutcome
	// reported: its subagent.done is in the journal already (a call run
	// again after a handover), so it is not journaled, nor counted toward
	// the budgets, twice.
	reported bool
}

// Delegate makes (or finds, after a handover) the call's child sessions,
// queues their runs up to the limit and waits until every one has ended.
// When ctx ends because the parent is cancelled or expired, it cancels
// every child that has not ended; when the parent's runner merely stops,
// the children go on and the call run again later waits for them.
func (s *Service) Delegate(ctx context.Context, env tool.Env, tasks []tool.DelegateTask) ([]tool.DelegateOutcome, error) {
	kids, err := s.children(ctx, env, tasks)
	if err != nil {
		return nil, err
	}
	busy := func() {}
	if env.Idle != nil {
		busy = env.Idle()
	}
	defer busy()
	tick := time.NewTicker(s.cfg.Poll)
	defer tick.Stop()
	for {
		// A ctx that ends inside startDue or collect (a queueing Do
		// withdrawn, say) ends the call as one that ends while it waits:
		// the children already queued are cancelled with a cancelled parent.
		if err := s.startDue(ctx, env, kids); err != nil {
			if ctx.Err() != nil {
				s.stop(env, kids)
			}
			return s.outcomes(kids), err
		}
		if err := s.collect(ctx, env, kids); err != nil {
			if ctx.Err() != nil {
				s.stop(env, kids)
			}
			return s.outcomes(kids), err
		}
		if allDone(kids) {
			return s.outcomes(kids), nil
		}
		select {
		case <-ctx.Done():
			s.stop(env, kids)
			return s.outcomes(kids), ctx.Err()
		case <-tick.C:
		}
	}
}

// children finds the call's child sessions or makes them, all in one
// transaction and in task order (created_at one millisecond apart), so a
// call run again finds the same ones in the same order.
func (s *Service) children(ctx context.Context, env tool.Env, tasks []tool.DelegateTask) ([]*child, error) {
	all, err := s.st.DelegatedSessions(ctx, env.RunID)
	if err != nil {
		return nil, fmt.Errorf("delegate: read children: %w", err)
	}
	var mine []store.Session
	for _, c := range all {
		if c.DelegatedCallID == env.CallID {
			mine = append(mine, c)
		}
	}
	kids := make([]*child, len(tasks))
	if len(mine) > 0 {
		if len(mine) != len(tasks) {
			return nil, &tool.DelegateError{Msg: fmt.Sprintf("this call made %d subagents before, not %d", len(mine), len(tasks))}
		}
		for i, sess := range mine {
			kids[i] = &child{task: tasks[i], sess: sess}
			runs, err := s.st.SessionRuns(ctx, sess.ID)
			if err != nil {
				return nil, fmt.Errorf("delegate: read child runs: %w", err)
			}
			if len(runs) > 0 {
				kids[i].run, kids[i].queued = runs[0], runs[0].CreatedAt
			}
		}
		evs, err := s.st.Events(ctx, store.EventQuery{RunID: env.RunID, Types: []event.Type{event.SubagentDone}})
		if err != nil {
			return nil, fmt.Errorf("delegate: read reported children: %w", err)
		}
		for _, e := range evs {
			var p event.SubagentDonePayload
			if json.Unmarshal(e.Payload, &p) == nil && p.ToolCallID == env.CallID && p.Index >= 0 && p.Index < len(kids) {
				kids[p.Index].reported = true
			}
		}
		return kids, nil
	}
	parent, err := s.st.GetSession(ctx, env.SessionID)
	if err != nil {
		return nil, fmt.Errorf("delegate: read parent session: %w", err)
	}
	now := time.Now().UTC()
	for i, t := range tasks {
		prof := t.Profile
		if prof == "" {
			prof = parent.ProfileID
		}
		sess, err := s.svc.PrepareSession(ctx, control.NewSession{Title: t.Title, ProfileID: prof, ProjectID: parent.ProjectID})
		if err != nil {
			var ce *control.Error
			if errors.As(err, &ce) {
				return nil, &tool.DelegateError{Msg: fmt.Sprintf("task %d: %s", i+1, ce.Message)}
			}
			return nil, fmt.Errorf("delegate: task %d: %w", i+1, err)
		}
		sess.Workspace = parent.Workspace
		if t.Profile == "" {
			sess.Model = parent.Model
		}
		sess.CreatedAt = now.Add(time.Duration(i) * time.Millisecond)
		sess.UpdatedAt = sess.CreatedAt
		sess.DelegatedSessionID, sess.DelegatedRunID, sess.DelegatedCallID = parent.ID, env.RunID, env.CallID
		if t.Workspace == tool.DelegateScratch {
			if sess.Workspace, err = s.scratch(parent.Workspace, sess.ID); err != nil {
				return nil, err
			}
		}
		kids[i] = &child{task: t, sess: sess}
	}
	err = s.w.Do(ctx, func(tx store.Tx) error {
		for _, k := range kids {
			if err := control.InsertSessionInTx(ctx, tx, k.sess); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("delegate: make child sessions: %w", err)
	}
	return kids, nil
}

// startDue queues the runs of children not yet started while fewer than
// Limit run.
func (s *Service) startDue(ctx context.Context, env tool.Env, kids []*child) error {
	running := 0
	for _, k := range kids {
		if k.run.ID != "" && k.outcome == nil {
			running++
		}
	}
	for i, k := range kids {
		if running >= s.cfg.Limit {
			return nil
		}
		if k.run.ID != "" {
			continue
		}
		var r store.Run
		err := s.w.Do(ctx, func(tx store.Tx) error {
			var err error
			r, err = s.svc.SendInTx(ctx, tx, k.sess.ID, control.Message{Content: k.task.Prompt})
			return err
		})
		if err != nil {
			return fmt.Errorf("delegate: queue task %d: %w", i+1, err)
		}
		k.run, k.queued = r, time.Now()
		running++
		if env.Emit != nil {
			if err := env.Emit(event.SubagentStarted, event.SubagentStartedPayload{ToolCallID: env.CallID, Index: i,
				AgentID: k.sess.ID, SessionID: k.sess.ID, RunID: r.ID, ParentSessionID: env.SessionID, Title: k.sess.Title,
				ProfileID: k.sess.ProfileID, Workspace: k.task.Workspace, Status: "started"}); err != nil {
				return err
			}
		}
	}
	return nil
}

// ended reports whether a child run will not go on by itself: terminal,
// or interrupted (its runner stopped and nobody resumes it).
func ended(s run.Status) bool { return s.Terminal() || s == run.Interrupted }

// collect reads the started children's runs and records those that ended.
func (s *Service) collect(ctx context.Context, env tool.Env, kids []*child) error {
	for i, k := range kids {
		if k.run.ID == "" || k.outcome != nil {
			continue
		}
		r, err := s.st.GetRun(ctx, k.run.ID)
		if err != nil {
			return fmt.Errorf("delegate: read child run: %w", err)
		}
		k.run = r
		if !ended(r.Status) {
			continue
		}
		o := tool.DelegateOutcome{Index: i, Title: k.sess.Title, SessionID: k.sess.ID, RunID: r.ID, Status: string(r.Status),
			Answer: s.answer(ctx, r.ID)}
		if r.ErrorMessage != "" {
			o.Error = r.ErrorMessage
		}
		k.outcome = &o
		if env.Emit != nil && !k.reported {
			var errInfo *event.ErrorInfo
			if r.ErrorCode != "" || r.ErrorMessage != "" {
				errInfo = &event.ErrorInfo{Code: r.ErrorCode, Message: r.ErrorMessage}
			}
			if err := env.Emit(event.SubagentDone, event.SubagentDonePayload{ToolCallID: env.CallID, Index: i,
				AgentID: k.sess.ID, SessionID: k.sess.ID, RunID: r.ID, ParentSessionID: env.SessionID, Status: string(r.Status),
				Summary: summary(o.Answer), Error: errInfo, Usage: r.Usage, DurationMS: runDuration(r).Milliseconds()}); err != nil {
				return err
			}
		}
	}
	return nil
}

func runDuration(r store.Run) time.Duration {
	if r.StartedAt.IsZero() || r.EndedAt.IsZero() {
		return 0
	}
	return r.EndedAt.Sub(r.StartedAt)
}

// answer is the child run's last answer ("" when it gave none).
func (s *Service) answer(ctx context.Context, runID string) string {
	evs, err := s.st.Events(ctx, store.EventQuery{RunID: runID, Types: []event.Type{event.MessageDone}})
	if err != nil || len(evs) == 0 {
		return ""
	}
	var p event.DonePayload
	if json.Unmarshal(evs[len(evs)-1].Payload, &p) != nil {
		return ""
	}
	return p.Text
}

func summary(s string) string {
	r := []rune(s)
	if len(r) > SummaryChars {
		return string(r[:SummaryChars]) + "…"
	}
	return s
}

func allDone(kids []*child) bool {
	for _, k := range kids {
		if k.outcome == nil {
			return false
		}
	}
	return true
}

func (s *Service) outcomes(kids []*child) []tool.DelegateOutcome {
	out := make([]tool.DelegateOutcome, 0, len(kids))
	for i, k := range kids {
		if k.outcome != nil {
			out = append(out, *k.outcome)
			continue
		}
		st := "not started"
		if k.run.ID != "" {
			st = string(k.run.Status)
		}
		out = append(out, tool.DelegateOutcome{Index: i, Title: k.sess.Title, SessionID: k.sess.ID, RunID: k.run.ID, Status: st})
	}
	return out
}

// stop cancels the children when the parent itself ends: a person
// cancelled it (cancelling) or its deadline passed. A parent whose runner
// is only stopping is handed over with its children still running.
func (s *Service) stop(env tool.Env, kids []*child) {
	bg, done := context.WithTimeout(context.Background(), 30*time.Second)
	defer done()
	p, err := s.st.GetRun(bg, env.RunID)
	if err != nil {
		s.log.Warn("delegate: read parent run", "run", env.RunID, "err", err)
		return
	}
	over := !p.ExpiresAt.IsZero() && !time.Now().Before(p.ExpiresAt)
	if p.Status != run.Cancelling && !p.Status.Terminal() && !over {
		return
	}
	for i, k := range kids {
		if k.outcome != nil {
			continue
		}
		if k.run.ID == "" {
			k.outcome = &tool.DelegateOutcome{Index: i, Title: k.sess.Title, SessionID: k.sess.ID, Status: string(run.Cancelled)}
			continue
		}
		if _, err := s.svc.Cancel(bg, k.run.ID, nil); err != nil && !errors.Is(err, store.ErrNotFound) {
			var ce *control.Error
			if !errors.As(err, &ce) { // a run that ended meanwhile is refused with a code: fine
				s.log.Warn("delegate: cancel child run", "run", k.run.ID, "err", err)
			}
		}
	}
}
