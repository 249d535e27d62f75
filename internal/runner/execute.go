package runner

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/caduceus-dev/caduceus/internal/agent"
	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/journal"
	"github.com/caduceus-dev/caduceus/internal/memory"
	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/tool"
	"github.com/caduceus-dev/caduceus/internal/transcript"
)

// systemPrompt frames every run. Kept short: providers add their own.
const systemPrompt = `You are an agent working in the user's workspace through Caduceus. Use the tools to inspect and change files and to run commands; paths are relative to the workspace. Prefer edit_file for small changes to existing files. Keep a todo list for work with several steps. Ask with the clarify tool when a choice is genuinely the user's. Use the memory tool to remember durable facts about the user and their projects, and the skills tool to look for prepared instructions before unfamiliar tasks. Be concise and say what you changed.`

// execute runs one claimed run to its end and says how it ended (an
// Outcome*).
func (r *Runner) execute(ctx context.Context, a *active, claimed store.Run) string {
	log := r.log.With("run", claimed.ID, "session", claimed.SessionID)
	stopWatch := r.watchCancel(ctx, a.cancel, claimed.ID)
	defer stopWatch()
	if !claimed.ExpiresAt.IsZero() {
		// A deadline ends the run where it is, a tool call in flight
		// included: the run must not outlive it by a long command.
		t := time.AfterFunc(time.Until(claimed.ExpiresAt), func() { a.cancel(errExpired) })
		defer t.Stop()
	}

	h := newHost(r, claimed)
	h.active = a
	res, err := r.drive(ctx, h, claimed, a.draining)
	flushErr := h.Flush(context.Background())

	cause := context.Cause(ctx)
	bg, done := context.WithTimeout(context.Background(), 30*time.Second)
	defer done()
	var o control.Outcome
	switch {
	case errors.Is(err, store.ErrLeaseLost) || errors.Is(flushErr, store.ErrLeaseLost):
		log.Warn("lease lost; another runner owns the run now")
		return OutcomeLeaseLost
	case errors.Is(cause, errExpired):
		// Before parking, pausing or yielding: a run past its deadline
		// waits for nobody.
		o = control.Outcome{Status: run.Expired, Error: control.ExpiredError(claimed)}
	case errors.Is(err, agent.ErrPark) && !errors.Is(cause, errCancelRequested):
		if err := r.w.Do(bg, func(tx store.Tx) error { return control.Park(bg, tx, claimed.ID, r.id) }); err != nil {
			log.Error("park failed", "err", err)
			return OutcomeStoreError
		}
		log.Info("run parked until a person answers")
		return OutcomeParked
	case errors.Is(err, agent.ErrPause) && !errors.Is(cause, errCancelRequested):
		var pe *pauseError
		if !errors.As(err, &pe) {
			pe = &pauseError{control.PauseCause{Code: control.PauseByPerson, Reason: "paused"}}
		}
		if err := r.w.Do(bg, func(tx store.Tx) error { return control.Pause(bg, tx, claimed.ID, r.id, pe.cause) }); err != nil {
			log.Error("pause failed", "err", err)
			return OutcomeStoreError
		}
		log.Info("run paused until a person resumes it", "code", pe.cause.Code, "reason", pe.cause.Reason)
		return OutcomePaused
	case errors.Is(cause, errShutdown) || errors.Is(err, agent.ErrYield):
		why := "runner " + r.id + " is shutting down"
		err := r.w.Do(bg, func(tx store.Tx) error { return control.Handover(bg, tx, claimed.ID, r.id, why) })
		if err != nil {
			log.Error("handover failed", "err", err)
			return OutcomeStoreError
		}
		log.Info("run handed over", "mid_step", errors.Is(cause, errShutdown))
		return OutcomeHandedOver
	case errors.Is(cause, errCancelRequested):
		o = control.Outcome{Status: run.Cancelled}
	case store.Transient(err) || store.Transient(flushErr):
		// The store failed for a while (locked, full): not the run's fault.
		// It goes recovering now, or, if the store still fails, the
		// heartbeat hands it on once it answers (settleOrphans).
		e := event.ErrorInfo{Code: "store_unavailable", Message: "the server could not write to its database for a while", Retryable: true}
		if err := r.w.Do(bg, func(tx store.Tx) error { return control.Recover(bg, tx, claimed.ID, r.id, e) }); err != nil {
			log.Warn("store unavailable; the run is recovered once it answers", "err", err)
			return OutcomeStoreError
		}
		log.Info("run stopped on a storage failure", "err", errors.Join(err, flushErr))
		return OutcomeRecovering
	case err != nil:
		log.Error("run failed", "err", err)
		o = control.Outcome{Status: run.Failed, Error: &event.ErrorInfo{Code: "internal_error", Message: "the run stopped on an internal error; see the server log"}}
	case res.Err != nil && res.Err.Retryable:
		e := *res.Err
		e.Message = r.cfg.Redactor.String(e.Message)
		if err := r.w.Do(bg, func(tx store.Tx) error { return control.Recover(bg, tx, claimed.ID, r.id, e) }); err != nil {
			log.Error("recover failed", "err", err)
			return OutcomeStoreError
		}
		log.Info("run stopped on a transient error", "code", e.Code)
		return OutcomeRecovering
	case res.Err != nil:
		o = control.Outcome{Status: run.Failed, Error: res.Err}
	default:
		o = control.Outcome{Status: run.Completed}
	}
	if o.Error != nil {
		o.Error.Message = r.cfg.Redactor.String(o.Error.Message)
	}
	if err := r.w.Do(bg, func(tx store.Tx) error { return control.Finish(bg, tx, claimed.ID, r.id, o) }); err != nil {
		log.Error("finish failed", "status", o.Status, "err", err)
		return OutcomeStoreError
	}
	log.Info("run finished", "status", o.Status)
	if r.cfg.Checkpoints != nil && h.workspace != "" {
		r.cfg.Checkpoints.Prune(bg, h.workspace)
	}
	return string(o.Status) // completed, failed, cancelled or expired
}

// drive rebuilds the conversation from the journal and runs the loop.
// yield reports whether the runner is stopping.
func (r *Runner) drive(ctx context.Context, h *host, claimed store.Run, yield func() bool) (agent.Result, error) {
	sess, err := r.st.GetSession(ctx, claimed.SessionID)
	if err != nil {
		return agent.Result{}, err
	}
	h.workspace = sess.Workspace
	items, queued, done, note, err := r.history(ctx, claimed)
	if err != nil {
		return agent.Result{}, err
	}
	r.cfg.Telemetry.LinkQueued(ctx, queued.TraceParent)
	msgs, pending := transcript.History(items)
	msgs = withNote(msgs, note)
	if claimed.Attempt > 1 && len(pending) == 0 {
		msgs = dropCutAnswer(msgs)
	}
	prof, hasProf := r.profileOf(ctx, r.st, sess)
	m, err := r.resolveModel(ctx, modelRefs(claimed.Model, prof, hasProf), true)
	if err != nil {
		return agent.Result{Err: &event.ErrorInfo{Code: "model_unavailable", Message: err.Error()}}, nil
	}
	msgs = loadImages(sess.Workspace, msgs, m.Info.Images, m.Ref())
	tools, err := r.toolsFor(ctx, sess.ID)
	if err != nil {
		return agent.Result{}, err
	}
	tools = r.withMCP(ctx, tools)
	if tools != nil && sess.DelegatedRunID != "" {
		// Delegation is one level deep: a child cannot fan out again.
		tools = tools.Without(tool.NameDelegate)
	}
	tools = profileTools(tools, prof, hasProf)
	tools = r.profileSkills(ctx, tools, prof, hasProf)
	mem := r.memoryOf(ctx, prof, hasProf)
	loop := agent.Loop{Provider: m.Provider, Tools: tools, Model: m.Model, Memory: mem,
		System:    r.systemPrompt(ctx, mem) + profilePrompt(prof, hasProf) + r.projectPrompt(ctx, sess),
		Workspace: sess.Workspace, SessionID: sess.ID, RunID: claimed.ID, MaxTurns: r.cfg.MaxTurns,
		MaxTokens: m.Info.MaxOutputTokens, ThinkingBudget: m.Info.ThinkingBudget, ReasoningEffort: m.Info.ReasoningEffort,
		Mode: r.approvalMode(prof, hasProf), Cost: m.Info.Cost, ContextWindow: m.Info.ContextWindow, Covered: transcript.Covered(items), Done: done, Yield: yield,
		Redactor: r.cfg.Redactor, Observe: r.cfg.Telemetry}
	if hasProf {
		loop.ProfileID = prof.ID
	}
	if queued.Kind == control.RunKindCompact {
		return loop.Compact(ctx, h, msgs, loop.Covered)
	}
	if loop.Steers, err = r.steers(ctx, claimed.ID); err != nil {
		return agent.Result{}, err
	}
	if r.cfg.Checkpoints != nil {
		loop.Checkpoints = r.cfg.Checkpoints
	}
	g, err := r.newGuard(ctx, h, claimed, sess, prof, hasProf)
	if err != nil {
		return agent.Result{}, err
	}
	defer g.watchPause(ctx)()
	loop.Guard = g.check
	h.childSpent = g.childSpent
	res, err := loop.Run(ctx, h, msgs, pending)
	r.endCheckpoint(ctx, h, sess.Workspace, claimed, err)
	return res, err
}

// endCheckpoint closes the run's span of checkpoints when the run ends
// here (not when it parks, yields or lost its lease: it goes on elsewhere),
// also after a cancel, whose last call may have changed files.
func (r *Runner) endCheckpoint(ctx context.Context, h *host, workspace string, claimed store.Run, err error) {
	if r.cfg.Checkpoints == nil || errors.Is(err, agent.ErrPark) || errors.Is(err, agent.ErrYield) || errors.Is(err, agent.ErrPause) ||
		errors.Is(err, store.ErrLeaseLost) || errors.Is(context.Cause(ctx), errShutdown) {
		return
	}
	bg, done := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer done()
	p, ok, cerr := r.cfg.Checkpoints.RunEnd(bg, workspace, claimed.SessionID, claimed.ID)
	if cerr != nil {
		r.log.Warn("end-of-run checkpoint failed; the run's changes reach to the workspace as it is now",
			"run", claimed.ID, "err", cerr)
		return
	}
	if ok {
		_ = h.Emit(event.CheckpointCreated, p)
	}
}

// dropCutAnswer removes the answer a resumed run's previous attempt was
// writing when it stopped (an assistant message without tool calls at the
// end): the model answers afresh rather than being handed a trailing
// assistant message, which some providers take as a prefix to continue and
// others refuse. The person still sees the cut text, marked partial.
func dropCutAnswer(msgs []provider.Message) []provider.Message {
	if n := len(msgs); n > 0 && msgs[n-1].Role == provider.RoleAssistant && len(msgs[n-1].ToolCalls) == 0 {
		return msgs[:n-1]
	}
	return msgs
}

// systemPrompt frames the run, with the agent's memory when it has any.
func (r *Runner) systemPrompt(ctx context.Context, m *memory.Store) string {
	if m == nil {
		return systemPrompt
	}
	mem, err := m.Render(ctx)
	if err != nil {
		// Half a memory is better than none; say what went wrong.
		r.log.Warn("reading memory", "err", err)
	}
	if mem == "" {
		return systemPrompt
	}
	return systemPrompt + "\n\n" + mem
}

// history folds the session's journal up to and including this run, run
// by run: a message queued during an earlier run belongs after it, not in
// the middle of its answer. It also returns the run's run.queued payload
// (its kind, its trace) and what earlier claims of the run already did.
func (r *Runner) history(ctx context.Context, claimed store.Run) ([]transcript.Item, event.RunQueuedPayload, agent.Progress, string, error) {
	var done agent.Progress
	var queued event.RunQueuedPayload
	// A branch's history starts with its parent's, up to the branch point;
	// of the session's own runs the model sees the conversation this run
	// continues: its ancestors in the session's tree of versions, not
	// every run (issue 15).
	ses, err := r.st.GetSession(ctx, claimed.SessionID)
	if err != nil {
		return nil, queued, done, "", err
	}
	pevs, pids, err := store.Inherited(ctx, r.st, ses, store.EventQuery{})
	if err != nil {
		return nil, queued, done, "", err
	}
	ownEvs, err := r.st.Events(ctx, store.EventQuery{SessionID: claimed.SessionID})
	if err != nil {
		return nil, queued, done, "", err
	}
	evs := append(pevs, ownEvs...)
	ids := append(pids, transcript.Versions(ownEvs).Path(claimed.ID)...)
	var own []event.Event
	for _, e := range evs {
		if e.RunID != claimed.ID {
			continue
		}
		own = append(own, e)
		switch e.Type {
		case event.RunQueued:
			var p event.RunQueuedPayload
			if json.Unmarshal(e.Payload, &p) == nil {
				queued = p
			}
		case event.TurnStarted:
			done.Turns++
		}
	}
	done.Usage = control.SumUsage(own)
	return transcript.FoldRuns(evs, ids, claimed.ID), queued, done, transcript.RollbackNote(evs, ids, claimed.ID), nil
}

// withNote adds note to the person's last message: what happened to the
// workspace between runs reaches the model with the message it answers.
func withNote(msgs []provider.Message, note string) []provider.Message {
	if note == "" {
		return msgs
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == provider.RoleUser {
			out := slices.Clone(msgs)
			out[i].Text = note + "\n\n" + out[i].Text
			return out
		}
	}
	return msgs
}

// watchCancel cancels ctx with errCancelRequested when the journal says the
// run is being cancelled. The journal is the control channel, so a cancel
// written by another process arrives the same way.
func (r *Runner) watchCancel(ctx context.Context, cancel context.CancelCauseFunc, runID string) func() {
	wctx, stop := context.WithCancel(ctx)
	sub := r.hub.Subscribe(journal.Filter{RunID: runID, Types: []event.Type{event.RunStatus}}, 0)
	go func() {
		defer sub.Close()
		for {
			evs, err := sub.Next(wctx)
			if err != nil {
				return
			}
			if slices.ContainsFunc(evs, isCancelling) {
				cancel(errCancelRequested)
				return
			}
		}
	}()
	return stop
}

func isCancelling(e event.Event) bool {
	var p event.RunStatusPayload
	return json.Unmarshal(e.Payload, &p) == nil && p.Status == string(run.Cancelling)
}
