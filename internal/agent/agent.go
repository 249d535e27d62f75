// Package agent is the agent loop: it calls the model, journals what the
// model streams, runs the tools it asks for (after approval when a tool
// needs it) and repeats until the model answers without tools. It knows
// nothing of databases or HTTP: a Host carries its events out and its
// questions to people.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/memory"
	"github.com/caduceus-dev/caduceus/internal/policy"
	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/secret"
	"github.com/caduceus-dev/caduceus/internal/tool"
	"github.com/caduceus-dev/caduceus/internal/transcript"
)

// Host is what the loop needs from the runner that executes it.
type Host interface {
	// Emit queues an event of the run. Events commit in emit order. It
	// returns an error only when an earlier emit failed (the lease was lost).
	Emit(typ event.Type, payload any) error
	// Flush waits until every emitted event is durable.
	Flush(ctx context.Context) error
	// Approve obtains a decision for a call that needs approval: one of the
	// approval choices, or "expired". It is idempotent per ToolCallID, so a
	// resumed run waits on the request it filed before.
	Approve(ctx context.Context, a ApprovalAsk) (string, error)
	// Clarify asks the person a question and returns the answer, or ok false
	// when the request expired.
	Clarify(ctx context.Context, c ClarifyAsk) (answer string, ok bool, err error)
}

// Idler is a Host whose runner can stop counting the run against its
// limit of executing runs while a tool call only waits for other runs
// (tool.Env.Idle).
type Idler interface {
	Idle() (busy func())
}

// DenialNoter is a Host that knows what a person said when denying a
// call ("do this instead"): the call's result is that, not a bare refusal.
type DenialNoter interface {
	// DenialNote returns the result text for the denied call, ok false
	// when it was denied without a note.
	DenialNote(toolCallID string) (string, bool)
}

// ApprovalAsk describes a call waiting for approval.
type ApprovalAsk struct {
	ToolCallID string
	Tool       string
	Action     string
	Reason     string
	Risk       string
	// Intent is what the call would do; remembered rules match against it.
	Intent tool.Intent
	// Pattern is what a session or always answer would remember.
	Pattern string
	// Rememberable is false for calls no rule may answer (dangerous
	// commands): only once or deny is offered.
	Rememberable bool
}

// ClarifyAsk is a question to the person.
type ClarifyAsk struct {
	ToolCallID string
	Question   string
	Choices    []string
}

// Loop runs one agent run. Its fields are fixed for the run.
type Loop struct {
	Provider  provider.Provider
	Tools     *tool.Registry
	Model     string
	System    string
	Workspace string
	SessionID string
	RunID     string
	MaxTurns  int
	// Mode is the approval policy; "" means smart.
	Mode policy.Mode
	// ProfileID is the run's profile ("" for none), named in the
	// decisions log (approval.decided).
	ProfileID string
	// Memory is the memory of the run's agent profile, for the memory
	// tool (h16-memory); nil leaves the tool its own.
	Memory *memory.Store
	// Model call options (zero: provider defaults).
	MaxTokens       int
	ThinkingBudget  int
	ReasoningEffort string
	// Cost prices token counts in USD; nil or ok false leaves usage unpriced.
	Cost func(input, cached, output int64) (usd float64, ok bool)
	// ContextWindow of the model in tokens; 0 turns context management off.
	ContextWindow int64
	// CompactAt is the fraction of the window past which older turns are
	// summarised; 0 means DefaultCompact.
	CompactAt float64
	// Covered is how many messages of the conversation the summary at the
	// start of the history stands for (transcript.Covered); 0 when none.
	Covered int
	// Done is what earlier claims of this run already did (a resumed run):
	// its model calls count toward MaxTurns and number the next turns, and
	// its usage starts the running total.
	Done Progress
	// Redactor replaces known secrets (provider keys, the access token) in
	// every tool result and every chunk of streamed tool output before it
	// is journaled or sent to the model; nil redacts nothing.
	Redactor *secret.Redactor
	// Yield, when it reports true, stops the loop at the next step
	// boundary (before a model call or a tool call) with ErrYield: the
	// runner is stopping and hands the run over with nothing half done.
	Yield func() bool
	// Observe watches model and tool calls (metrics, traces); nil: nobody.
	Observe Observer
	// Checkpoints records the workspace before every call that may change
	// it; nil takes none.
	Checkpoints Checkpointer
	// Steers returns the messages people steered into the run that it has
	// not delivered yet; nil: none ever arrive. The loop asks at every step
	// boundary before a model call, so a steer reaches the model after the
	// running tool calls and without cancelling anything.
	Steers func(ctx context.Context) ([]Steer, error)
	// Guard, when set, is asked at every step boundary: after a model call
	// that asked for tools and after every tool call. An error stops the
	// loop there, with everything done so far journaled and calls not
	// begun left open (as with Yield); the runner pauses the run on an
	// error wrapping ErrPause (h16-budgets).
	Guard func(ctx context.Context, s Step) error
}

// Step is what the loop just did, for Guard. After a model call Tool is
// ""; after a tool call Turn is zero.
type Step struct {
	Turn     event.UsageTotals // the model call's usage
	Turns    int               // model calls of the run so far, earlier claims included
	Tool     string
	Args     json.RawMessage
	ToolDone string // the call's status (event.ToolOK, ...)
	// Final: the model call answered without tools; the run ends after
	// it, whatever the Guard says.
	Final bool
}

// ErrPause is wrapped by a Guard's error when the run must pause until a
// person resumes it: a budget was reached, it looks stuck or a person asked.
var ErrPause = errors.New("agent: paused at a step boundary")

func (l *Loop) guard(ctx context.Context, h Host, s Step) error {
	if l.Guard == nil {
		return nil
	}
	if err := l.Guard(ctx, s); err != nil {
		return errors.Join(err, h.Flush(ctx))
	}
	return nil
}

// Steer is a person's message for the running run.
type Steer struct {
	ControlID string
	MessageID string
	Content   string
	By        *event.Actor
}

// Progress is the work a run has journaled so far.
type Progress struct {
	Turns int
	Usage event.UsageTotals
}

// ErrYield is returned by Run when Yield asked the loop to stop between
// steps. Everything done so far is journaled; the run can continue from
// the journal.
var ErrYield = errors.New("agent: yielded at a step boundary")

// ErrPark is returned by a Host's Approve or Clarify, and so by Run, when
// the run must wait for a person: it holds no runner while it waits. The
// request is durable and the journal holds everything, so whichever runner
// claims the run once the answer is in rebuilds it and carries on from
// the same tool call.
var ErrPark = errors.New("agent: parked until a person answers")

func (l *Loop) yield() bool { return l.Yield != nil && l.Yield() }

// Result is how the loop ended. Err nil means completed; when ctx was
// cancelled Run returns ctx's error instead and the caller decides.
type Result struct {
	Usage event.UsageTotals
	Err   *event.ErrorInfo
}

// Run continues the conversation in history. pending are unfinished tool
// calls of the last turn (a resumed run) to settle before the next model
// call.
func (l *Loop) Run(ctx context.Context, h Host, history []provider.Message, pending []transcript.Pending) (Result, error) {
	res := Result{Usage: l.Done.Usage}
	msgs := append([]provider.Message(nil), history...)
	if len(pending) > 0 {
		results, err := l.settle(ctx, h, pending)
		if err != nil {
			return res, err
		}
		msgs = append(msgs, provider.Message{Role: provider.RoleTool, ToolResults: results})
	}
	maxTurns := l.MaxTurns
	if maxTurns <= 0 {
		maxTurns = 50
	}
	w := &window{size: l.ContextWindow}
	covered := l.Covered
	for i := l.Done.Turns; ; i++ {
		if l.yield() {
			return res, errors.Join(ErrYield, h.Flush(ctx))
		}
		if i == maxTurns {
			res.Err = &event.ErrorInfo{Code: "max_turns", Message: fmt.Sprintf("stopped after %d model calls without a final answer", maxTurns)}
			return res, h.Flush(ctx)
		}
		var err error
		if msgs, err = l.deliverSteers(ctx, h, msgs); err != nil {
			return res, err
		}
		if msgs, err = l.manageContext(ctx, h, w, msgs, &covered, &res.Usage); err != nil {
			return res, err
		}
		t, err := l.turn(ctx, h, msgs, i, res.Usage)
		res.Usage = res.Usage.Add(t.usage)
		if err != nil {
			return res, err
		}
		w.calibrate(provider.Request{System: l.System, Tools: l.Tools.Specs(), Messages: msgs}, t.usage.InputTokens)
		if t.err != nil {
			res.Err = t.err
			return res, h.Flush(ctx)
		}
		msgs = append(msgs, t.msg)
		if len(t.msg.ToolCalls) == 0 {
			// The final answer is counted too, but nothing is left to
			// pause before.
			if l.Guard != nil {
				_ = l.Guard(ctx, Step{Turn: t.usage, Turns: i + 1, Final: true})
			}
			return res, h.Flush(ctx)
		}
		if err := l.guard(ctx, h, Step{Turn: t.usage, Turns: i + 1}); err != nil {
			return res, err
		}
		results := make([]provider.ToolResult, 0, len(t.msg.ToolCalls))
		for _, c := range t.msg.ToolCalls {
			if l.yield() {
				// Calls not begun stay open in the journal; the run that
				// continues executes them, after approval as usual.
				return res, errors.Join(ErrYield, h.Flush(ctx))
			}
			r, err := l.call(ctx, h, c)
			if err != nil {
				return res, err
			}
			results = append(results, r)
			status := event.ToolOK
			if r.IsError {
				status = event.ToolError
			}
			if err := l.guard(ctx, h, Step{Turns: i + 1, Tool: c.Name, Args: c.Args, ToolDone: status}); err != nil {
				return res, err
			}
		}
		msgs = append(msgs, provider.Message{Role: provider.RoleTool, ToolResults: results})
	}
}

// settle finishes the last turn of a resumed run: finished calls keep their
// result, a call that had begun executing is reported interrupted (unless
// its tool is tool.Resumable), the rest go through approval and run.
func (l *Loop) settle(ctx context.Context, h Host, pending []transcript.Pending) ([]provider.ToolResult, error) {
	out := make([]provider.ToolResult, 0, len(pending))
	for _, p := range pending {
		switch {
		case p.Result != nil:
			out = append(out, *p.Result)
		case p.Executing && !l.resumable(p.Call.Name):
			if err := h.Emit(event.ToolDone, event.ToolDonePayload{ToolCallID: p.Call.ID, Name: p.Call.Name,
				Status: event.ToolError, Output: transcript.InterruptedResult, Error: "interrupted: the worker stopped while this call ran; not re-run"}); err != nil {
				return nil, err
			}
			out = append(out, provider.ToolResult{ToolCallID: p.Call.ID, Content: transcript.InterruptedResult, IsError: true})
		default:
			r, err := l.call(ctx, h, p.Call)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
			status := event.ToolOK
			if r.IsError {
				status = event.ToolError
			}
			if err := l.guard(ctx, h, Step{Turns: l.Done.Turns, Tool: p.Call.Name, Args: p.Call.Args, ToolDone: status}); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// resumable reports whether the named tool's call may run again after a
// handover (tool.Resumable).
func (l *Loop) resumable(name string) bool {
	if l.Tools == nil {
		return false
	}
	t, ok := l.Tools.Get(name)
	if !ok {
		return false
	}
	r, ok := t.(tool.Resumable)
	return ok && r.Resumable()
}

type turnResult struct {
	turnID string
	msg    provider.Message
	usage  event.UsageTotals
	err    *event.ErrorInfo // the model failed
}

type partialCall struct {
	id, name string
	args     strings.Builder
}

// turn makes one model call and journals what it streams.
// total is the run's usage before this turn.
func (l *Loop) turn(ctx context.Context, h Host, msgs []provider.Message, index int, total event.UsageTotals) (turnResult, error) {
	var out turnResult
	turnID := id.New("trn")
	started := time.Now()
	if err := h.Emit(event.TurnStarted, event.TurnStartedPayload{TurnID: turnID, Index: index}); err != nil {
		return out, err
	}
	req := provider.Request{Model: l.Model, System: l.System, Messages: msgs, Tools: l.Tools.Specs(),
		MaxTokens: l.MaxTokens, ThinkingBudget: l.ThinkingBudget, ReasoningEffort: l.ReasoningEffort}

	var text, reasoning strings.Builder
	var msgID, rsnID, signature string
	var rsnStarted time.Time // the open reasoning block's first chunk
	calls := map[int]*partialCall{}
	stop := ""
	var usage provider.Usage

	closeReasoning := func(partial bool) error {
		if rsnID == "" {
			return nil
		}
		out.msg.Reasoning = append(out.msg.Reasoning, provider.Reasoning{Text: reasoning.String(), Signature: signature})
		err := h.Emit(event.ReasoningDone, event.DonePayload{ID: rsnID, TurnID: turnID, Text: reasoning.String(), Signature: signature,
			Partial: partial, DurationMS: max(1, time.Since(rsnStarted).Milliseconds())}) // 0 would read as "not measured"
		rsnID, signature = "", ""
		reasoning.Reset()
		return err
	}
	closeText := func(partial bool) error {
		if msgID == "" {
			return nil
		}
		err := h.Emit(event.MessageDone, event.DonePayload{ID: msgID, TurnID: turnID, Text: text.String(), Partial: partial})
		msgID = ""
		return err
	}

	callCtx, endCall := l.observer().ModelCall(ctx, l.Provider.Name(), l.Model)
	// The stream is left early only when the host fails (a lost lease).
	ended := false
	end := func(o ModelOutcome) {
		if !ended {
			ended = true
			endCall(o)
		}
	}
	defer end(ModelOutcome{ErrCode: "interrupted"})
	var streamErr error
	for c, err := range l.Provider.Stream(callCtx, req) {
		if err != nil {
			streamErr = err
			break
		}
		switch c.Kind {
		case provider.ChunkReasoning:
			if c.Redacted != "" {
				// An encrypted block arrives whole; it is journaled so the
				// rebuilt history can send it back.
				if err := closeReasoning(false); err != nil {
					return out, err
				}
				out.msg.Reasoning = append(out.msg.Reasoning, provider.Reasoning{Redacted: c.Redacted})
				if err := h.Emit(event.ReasoningDone, event.DonePayload{ID: id.New("rsn"), TurnID: turnID, Redacted: c.Redacted}); err != nil {
					return out, err
				}
				continue
			}
			if rsnID == "" {
				rsnID, rsnStarted = id.New("rsn"), time.Now()
			}
			reasoning.WriteString(c.Text)
			if c.Text != "" {
				if err := h.Emit(event.ReasoningDelta, event.DeltaPayload{ID: rsnID, TurnID: turnID, Delta: c.Text}); err != nil {
					return out, err
				}
			}
			if c.Signature != "" {
				// A signature seals its block: the next reasoning is a
				// block of its own, or the provider rejects the history.
				signature = c.Signature
				if err := closeReasoning(false); err != nil {
					return out, err
				}
			}
		case provider.ChunkText:
			if err := closeReasoning(false); err != nil {
				return out, err
			}
			if msgID == "" {
				msgID = id.New("msg")
			}
			text.WriteString(c.Text)
			if err := h.Emit(event.MessageDelta, event.DeltaPayload{ID: msgID, TurnID: turnID, Delta: c.Text}); err != nil {
				return out, err
			}
		case provider.ChunkToolCall:
			if err := closeReasoning(false); err != nil {
				return out, err
			}
			pc := calls[c.ToolCall.Index]
			if pc == nil {
				pc = &partialCall{}
				calls[c.ToolCall.Index] = pc
			}
			if c.ToolCall.ID != "" {
				pc.id = c.ToolCall.ID
			}
			if c.ToolCall.Name != "" {
				pc.name = c.ToolCall.Name
			}
			pc.args.WriteString(c.ToolCall.ArgsFragment)
		case provider.ChunkUsage:
			usage = c.Usage
		case provider.ChunkDone:
			stop = c.StopReason
		}
	}
	out.usage = event.UsageTotals{InputTokens: usage.InputTokens, OutputTokens: usage.OutputTokens,
		CachedTokens: usage.CachedTokens, ReasoningTokens: usage.ReasoningTokens}
	if l.Cost != nil {
		if usd, ok := l.Cost(usage.InputTokens, usage.CachedTokens, usage.OutputTokens); ok {
			out.usage.CostUSD = usd
		}
	}
	out.msg.Role, out.msg.Text = provider.RoleAssistant, text.String()
	end(ModelOutcome{Usage: out.usage, ErrCode: callErrCode(ctx, l.Provider.Name(), streamErr)})

	if streamErr != nil {
		if ctx.Err() != nil {
			// Cancelled: keep what streamed; Finish closes the rest.
			return out, errors.Join(ctx.Err(), h.Flush(context.WithoutCancel(ctx)))
		}
		if err := errors.Join(closeReasoning(true), closeText(true)); err != nil {
			return out, err
		}
		out.err = providerError(l.Provider.Name(), streamErr)
		return out, h.Emit(event.TurnEnded, event.TurnEndedPayload{TurnID: turnID, StopReason: "error", DurationMS: time.Since(started).Milliseconds()})
	}
	if err := errors.Join(closeReasoning(false), closeText(false)); err != nil {
		return out, err
	}
	idx := make([]int, 0, len(calls))
	for i := range calls {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	for _, i := range idx {
		pc := calls[i]
		if pc.id == "" {
			pc.id = id.New("call")
		}
		out.msg.ToolCalls = append(out.msg.ToolCalls, provider.ToolCall{ID: pc.id, Name: pc.name, Args: normaliseArgs(pc.args.String())})
	}
	if err := h.Emit(event.TurnEnded, event.TurnEndedPayload{TurnID: turnID, StopReason: stop, DurationMS: time.Since(started).Milliseconds()}); err != nil {
		return out, err
	}
	if out.usage != (event.UsageTotals{}) {
		if err := h.Emit(event.Usage, event.UsagePayload{TurnID: turnID, Turn: out.usage, Total: total.Add(out.usage)}); err != nil {
			return out, err
		}
	}
	for _, c := range out.msg.ToolCalls {
		label := c.Name
		if t, ok := l.Tools.Get(c.Name); ok {
			label = t.Label(c.Args)
		}
		if err := h.Emit(event.ToolStarted, event.ToolStartedPayload{ToolCallID: c.ID, Name: c.Name, Label: label, Args: c.Args, TurnID: turnID}); err != nil {
			return out, err
		}
	}
	return out, nil
}

// normaliseArgs keeps the history valid JSON even when a model streamed
// malformed arguments: the tool then reports the problem to the model.
func normaliseArgs(s string) json.RawMessage {
	s = strings.TrimSpace(s)
	if s == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(map[string]string{"_invalid_json": s})
	return b
}

// callErrCode is how a model call that ended with err is counted.
func callErrCode(ctx context.Context, name string, err error) string {
	switch {
	case err == nil:
		return ""
	case ctx.Err() != nil:
		return "cancelled"
	}
	return providerError(name, err).Code
}

func providerError(name string, err error) *event.ErrorInfo {
	if pe, ok := provider.AsError(err); ok {
		return &event.ErrorInfo{Code: "provider_" + pe.Code, Message: pe.Provider + ": " + pe.Message, Retryable: pe.Retryable}
	}
	return &event.ErrorInfo{Code: "provider_error", Message: name + ": " + err.Error()}
}
