package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/policy"
	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// ChoiceExpired is what Host.Approve returns when nobody answered in time.
const ChoiceExpired = "expired"

// call settles one tool call: clarify goes to the person, a call that needs
// approval waits for it, then the tool runs and its result is journaled.
// It returns an error only when the run must stop (cancel, lost lease).
func (l *Loop) call(ctx context.Context, h Host, c provider.ToolCall) (provider.ToolResult, error) {
	started := time.Now()
	var w waits
	res, err := l.decideAndRun(ctx, h, c, &w)
	if err != nil {
		return provider.ToolResult{}, err
	}
	// Whatever a tool read or printed, a known secret in it goes no
	// further: not into the journal, not to the model.
	res.Output = l.Redactor.String(res.Output)
	var data json.RawMessage
	if res.Data != nil {
		if b, err := json.Marshal(res.Data); err == nil {
			data = l.Redactor.JSON(b)
		}
	}
	// The wait for a person is reported apart from the call's own time, so
	// a card says "1.2s" for the command and "waited 40s for approval".
	// A call that ran counts from the moment it began executing: the
	// checkpoint before it and the journal's flush are the server's time,
	// not the command's.
	took := max(0, time.Since(started)-w.here)
	if !w.ran.IsZero() {
		took = time.Since(w.ran)
	}
	done := event.ToolDonePayload{ToolCallID: c.ID, Name: c.Name, Status: res.Status,
		DurationMS: took.Milliseconds(), WaitMS: w.total().Milliseconds(), Output: res.Output, Result: data}
	if res.Status != event.ToolOK {
		done.Error = firstLine(res.Output)
	}
	if err := h.Emit(event.ToolDone, done); err != nil {
		return provider.ToolResult{}, err
	}
	if ctx.Err() != nil {
		// The tool saw the cancel and returned; its result is journaled,
		// now the run stops.
		return provider.ToolResult{}, ctx.Err()
	}
	return provider.ToolResult{ToolCallID: c.ID, Content: res.Output, IsError: res.Status != event.ToolOK}, nil
}

// WaitReporter is what a Host may also tell: how long the person took to
// answer the request of a tool call. A run parks while it waits, so the
// wait happened before this claim of the run and cannot be timed here.
type WaitReporter interface {
	Waited(toolCallID string) time.Duration
}

// waits is the time a tool call spent waiting for a person: here, inside
// Approve or Clarify in this claim, and as the host reports it.
type waits struct {
	here, reported time.Duration
	// ran is when the tool began executing (zero: it never did).
	ran time.Time
}

func (w waits) total() time.Duration { return max(w.here, w.reported) }

// measure times ask and asks the host for the wait of call id.
func (w *waits) measure(h Host, id string, ask func()) {
	t := time.Now()
	ask()
	w.here += time.Since(t)
	if r, ok := h.(WaitReporter); ok {
		w.reported += r.Waited(id)
	}
}

// decideAndRun adds the time spent waiting for a person to *w.
func (l *Loop) decideAndRun(ctx context.Context, h Host, c provider.ToolCall, w *waits) (tool.Result, error) {
	t, ok := l.Tools.Get(c.Name)
	if !ok {
		return tool.Result{Status: event.ToolError, Output: fmt.Sprintf("unknown tool %q; available tools: %v", c.Name, l.Tools.Names())}, nil
	}
	if c.Name == "clarify" {
		q, choices, err := tool.ParseClarify(c.Args)
		if err != nil {
			return tool.Result{Status: event.ToolError, Output: "invalid arguments: " + err.Error()}, nil
		}
		var answer string
		var ok bool
		w.measure(h, c.ID, func() { answer, ok, err = h.Clarify(ctx, ClarifyAsk{ToolCallID: c.ID, Question: q, Choices: choices}) })
		if err != nil {
			return tool.Result{}, err
		}
		if !ok {
			return tool.Result{Status: event.ToolError, Output: "The question expired without an answer. Continue with your best judgement and say what you assumed."}, nil
		}
		return tool.Result{Status: event.ToolOK, Output: "The user answered: " + answer, Data: map[string]any{"answer": answer}}, nil
	}
	in := t.Intent(c.Args)
	d := policy.Decide(policy.Input{Mode: l.Mode, Tool: c.Name, Intent: in, Workspace: l.Workspace})
	switch d.Verdict {
	case policy.Allow:
		l.decided(h, c.Name, c.ID, in, d, event.OutcomeAllowed, event.DecidedByMode)
	case policy.Deny:
		l.decided(h, c.Name, c.ID, in, d, event.OutcomeDenied, event.DecidedByPolicy)
		return tool.Result{Status: event.ToolDenied, Output: "Not run: the approval policy refuses this in every mode (" + d.Reason + ")."}, nil
	default: // Ask, and anything unexpected: approval fails closed
		var choice string
		var err error
		w.measure(h, c.ID, func() {
			choice, err = h.Approve(ctx, ApprovalAsk{ToolCallID: c.ID, Tool: c.Name, Action: in.Action, Reason: d.Reason,
				Risk: d.Risk, Intent: in, Pattern: policy.PatternFor(c.Name, in), Rememberable: d.RuleEligible})
		})
		if err != nil {
			return tool.Result{}, err
		}
		switch choice {
		case "once", "session", "always":
			l.decided(h, c.Name, c.ID, in, d, event.OutcomeAllowed, event.DecidedByPerson)
		case ChoiceExpired:
			l.decided(h, c.Name, c.ID, in, d, event.OutcomeExpired, event.DecidedByTimeout)
			return tool.Result{Status: event.ToolDenied, Output: "Not run: the approval request expired without an answer."}, nil
		default: // deny, and anything unexpected: approval fails closed
			l.decided(h, c.Name, c.ID, in, d, event.OutcomeDenied, event.DecidedByPerson)
			if n, ok := h.(DenialNoter); ok {
				if text, ok := n.DenialNote(c.ID); ok {
					return tool.Result{Status: event.ToolDenied, Output: text}, nil
				}
			}
			return tool.Result{Status: event.ToolDenied, Output: "Not run: the user denied this action."}, nil
		}
	}
	if refused, err := l.checkpoint(ctx, h, c, in); err != nil || refused != nil {
		if refused != nil {
			return *refused, nil
		}
		return tool.Result{}, err
	}
	if err := h.Emit(event.ToolUpdated, event.ToolUpdatedPayload{ToolCallID: c.ID, Phase: "executing"}); err != nil {
		return tool.Result{}, err
	}
	// The executing mark must be durable before the tool touches anything:
	// after a crash, it is what says "do not run this again".
	if err := h.Flush(ctx); err != nil {
		return tool.Result{}, err
	}
	w.ran = time.Now()
	out := newRedactedOutput(l.Redactor, func(stream, text string) {
		_ = h.Emit(event.ToolUpdated, event.ToolUpdatedPayload{ToolCallID: c.ID, Stream: stream, Output: text})
	})
	env := tool.Env{Workspace: l.Workspace, SessionID: l.SessionID, RunID: l.RunID, Emit: h.Emit, Progress: out.write, Memory: l.Memory, CallID: c.ID}
	if i, ok := h.(Idler); ok {
		env.Idle = i.Idle
	}
	tctx, end := l.observer().ToolCall(ctx, c.Name, c.ID)
	res, err := t.Run(tctx, env, c.Args)
	out.flush()
	if ctx.Err() != nil && l.resumable(c.Name) {
		// A resumable call stopped by the run's end journals no result: a
		// runner that is only stopping leaves it open, and the runner that
		// continues the run runs it again (tool.Resumable); a cancelled or
		// expired run's end closes it as cancelled.
		end(event.ToolCancelled)
		return tool.Result{}, ctx.Err()
	}
	if err != nil {
		res = tool.Result{Status: event.ToolError, Output: "tool failed: " + err.Error()}
	}
	end(res.Status)
	return res, nil
}

func firstLine(s string) string {
	for i, r := range s {
		if r == '\n' {
			s = s[:i]
			break
		}
	}
	if len(s) > 300 {
		cut := 300
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut-- // never split a multi-byte rune
		}
		s = s[:cut] + "…"
	}
	return s
}
