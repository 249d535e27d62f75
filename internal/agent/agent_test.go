package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/caduceus-dev/caduceus/internal/agent"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/policy"
	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
	"github.com/caduceus-dev/caduceus/internal/tool"
	"github.com/caduceus-dev/caduceus/internal/transcript"
)

// emitted is one event the loop emitted.
type emitted struct {
	Type    event.Type
	Payload any
}

// fakeHost records what the loop emits and answers its questions from
// configuration.
type fakeHost struct {
	choice    string                            // Approve's answer
	answer    string                            // Clarify's answer
	clarifyOK bool                              // false: the question expired
	onEmit    func(typ event.Type, payload any) // optional hook, called unlocked
	emitErr   error                             // returned by Emit when set
	wait      time.Duration                     // how long Approve and Clarify take to answer

	mu        sync.Mutex
	events    []emitted
	approvals []agent.ApprovalAsk
	clarifies []agent.ClarifyAsk
	flushes   int
}

func (h *fakeHost) Emit(typ event.Type, payload any) error {
	h.mu.Lock()
	h.events = append(h.events, emitted{typ, payload})
	err := h.emitErr
	h.mu.Unlock()
	if h.onEmit != nil {
		h.onEmit(typ, payload)
	}
	return err
}

func (h *fakeHost) Flush(context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.flushes++
	return nil
}

func (h *fakeHost) Approve(_ context.Context, a agent.ApprovalAsk) (string, error) {
	time.Sleep(h.wait)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.approvals = append(h.approvals, a)
	return h.choice, nil
}

func (h *fakeHost) Clarify(_ context.Context, c agent.ClarifyAsk) (string, bool, error) {
	time.Sleep(h.wait)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.clarifies = append(h.clarifies, c)
	return h.answer, h.clarifyOK, nil
}

func (h *fakeHost) snapshot() []emitted {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.events)
}

func (h *fakeHost) types() []event.Type {
	var out []event.Type
	for _, e := range h.snapshot() {
		out = append(out, e.Type)
	}
	return out
}

// of returns the payloads of type typ, in order.
func of[P any](h *fakeHost, typ event.Type) []P {
	var out []P
	for _, e := range h.snapshot() {
		if e.Type == typ {
			p, ok := e.Payload.(P)
			if !ok {
				panic(fmt.Sprintf("%s payload is %T", typ, e.Payload))
			}
			out = append(out, p)
		}
	}
	return out
}

// index returns the position of the first event matching, or -1.
func (h *fakeHost) index(match func(emitted) bool) int {
	return slices.IndexFunc(h.snapshot(), match)
}

func isType(typ event.Type) func(emitted) bool {
	return func(e emitted) bool { return e.Type == typ }
}

// recorder wraps a provider and keeps every request it was sent.
type recorder struct {
	provider.Provider
	mu   sync.Mutex
	reqs []provider.Request
}

func (r *recorder) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Chunk, error] {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return r.Provider.Stream(ctx, req)
}

func (r *recorder) requests() []provider.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.reqs)
}

// turns makes a script with one default scenario.
func turns(ts ...[]demo.Step) demo.Script {
	sc := demo.Scenario{}
	for _, steps := range ts {
		sc.Turns = append(sc.Turns, demo.Turn{Steps: steps})
	}
	return demo.Script{Scenarios: []demo.Scenario{sc}}
}

func say(text string) demo.Step { return demo.Step{Kind: demo.KindText, Text: text} }

func think(text, sig string) demo.Step {
	return demo.Step{Kind: demo.KindReasoning, Text: text, Signature: sig}
}

func callTool(id, name, args string) demo.Step {
	return demo.Step{Kind: demo.KindToolCall, ID: id, Name: name, Args: json.RawMessage(args)}
}

type fixture struct {
	loop *agent.Loop
	rec  *recorder
	ws   string
}

func newFixture(t *testing.T, s demo.Script) *fixture {
	t.Helper()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "hello.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{Provider: demo.New(s)}
	return &fixture{ws: ws, rec: rec, loop: &agent.Loop{
		Provider: rec, Tools: tool.Builtin(tool.Config{}), Model: "demo", System: "be brief",
		Workspace: ws, MaxTurns: 10, Mode: policy.ModeManual,
	}}
}

func userHistory(text string) []provider.Message {
	return []provider.Message{{Role: provider.RoleUser, Text: text}}
}

func run(t *testing.T, f *fixture, h *fakeHost) agent.Result {
	t.Helper()
	res, err := f.loop.Run(context.Background(), h, userHistory("go"), nil)
	if err != nil {
		t.Fatalf("Run: %v (events %v)", err, h.types())
	}
	return res
}

func TestTextOnly(t *testing.T) {
	f := newFixture(t, turns([]demo.Step{say("Hello there")}))
	h := &fakeHost{}
	res := run(t, f, h)
	if res.Err != nil {
		t.Fatalf("Err = %+v", res.Err)
	}
	want := []event.Type{event.TurnStarted, event.MessageDelta, event.MessageDelta, event.MessageDelta,
		event.MessageDone, event.TurnEnded, event.Usage}
	if got := h.types(); !slices.Equal(got, want) {
		t.Fatalf("events = %v, want %v", got, want)
	}
	started := of[event.TurnStartedPayload](h, event.TurnStarted)[0]
	if started.Index != 0 || started.TurnID == "" {
		t.Fatalf("turn.started = %+v", started)
	}
	var text string
	deltas := of[event.DeltaPayload](h, event.MessageDelta)
	for _, d := range deltas {
		if d.ID != deltas[0].ID || d.TurnID != started.TurnID || d.ID == "" {
			t.Fatalf("delta %+v does not belong to segment %s of turn %s", d, deltas[0].ID, started.TurnID)
		}
		text += d.Delta
	}
	done := of[event.DonePayload](h, event.MessageDone)[0]
	if text != "Hello there" || done.Text != text || done.ID != deltas[0].ID || done.Partial || done.TurnID != started.TurnID {
		t.Fatalf("deltas %q, done %+v", text, done)
	}
	ended := of[event.TurnEndedPayload](h, event.TurnEnded)[0]
	if ended.TurnID != started.TurnID || ended.StopReason != provider.StopEnd {
		t.Fatalf("turn.ended = %+v", ended)
	}
	usage := of[event.UsagePayload](h, event.Usage)[0]
	if usage.TurnID != started.TurnID || usage.Turn != usage.Total || res.Usage != usage.Total || usage.Total.OutputTokens == 0 {
		t.Fatalf("usage = %+v, result usage %+v", usage, res.Usage)
	}
	// The model got the system prompt, the history and every tool.
	req := f.rec.requests()[0]
	if req.System != "be brief" || req.Model != "demo" || len(req.Messages) != 1 || len(req.Tools) != len(f.loop.Tools.Names()) {
		t.Fatalf("request: system %q model %q, %d messages, %d tools", req.System, req.Model, len(req.Messages), len(req.Tools))
	}
}

func TestReasoningThenText(t *testing.T) {
	f := newFixture(t, turns([]demo.Step{think("Let me think.", "sig-1"), say("Answer.")}))
	h := &fakeHost{}
	if res := run(t, f, h); res.Err != nil {
		t.Fatalf("Err = %+v", res.Err)
	}
	rDone := h.index(isType(event.ReasoningDone))
	firstText := h.index(isType(event.MessageDelta))
	if rDone < 0 || firstText < 0 || rDone > firstText {
		t.Fatalf("reasoning.done at %d, first message.delta at %d: %v", rDone, firstText, h.types())
	}
	for i, typ := range h.types() {
		if typ == event.ReasoningDelta && i > rDone {
			t.Fatalf("reasoning.delta at %d after reasoning.done at %d", i, rDone)
		}
	}
	done := of[event.DonePayload](h, event.ReasoningDone)
	if len(done) != 1 || done[0].Text != "Let me think." || done[0].Signature != "sig-1" || done[0].Partial {
		t.Fatalf("reasoning.done = %+v", done)
	}
	for _, d := range of[event.DeltaPayload](h, event.ReasoningDelta) {
		if d.ID != done[0].ID {
			t.Fatalf("reasoning delta %+v not of block %s", d, done[0].ID)
		}
	}
	if md := of[event.DonePayload](h, event.MessageDone); len(md) != 1 || md[0].Text != "Answer." || md[0].ID == done[0].ID {
		t.Fatalf("message.done = %+v", md)
	}
}

func TestToolCallListDir(t *testing.T) {
	f := newFixture(t, turns(
		[]demo.Step{say("Looking."), callTool("call_ls", tool.NameListDir, `{"path":"."}`)},
		[]demo.Step{say("There is hello.txt.")},
	))
	h := &fakeHost{}
	if res := run(t, f, h); res.Err != nil {
		t.Fatalf("Err = %+v", res.Err)
	}
	for_ := func(typ event.Type, pred func(any) bool) int {
		return h.index(func(e emitted) bool { return e.Type == typ && (pred == nil || pred(e.Payload)) })
	}
	started := for_(event.ToolStarted, nil)
	executing := for_(event.ToolUpdated, func(p any) bool {
		u := p.(event.ToolUpdatedPayload)
		return u.ToolCallID == "call_ls" && u.Phase == "executing"
	})
	done := for_(event.ToolDone, nil)
	secondTurn := for_(event.TurnStarted, func(p any) bool { return p.(event.TurnStartedPayload).Index == 1 })
	firstEnded := for_(event.TurnEnded, nil)
	if !(firstEnded < started && started < executing && executing < done && done < secondTurn) {
		t.Fatalf("order: turn.ended %d tool.started %d executing %d tool.done %d second turn %d: %v",
			firstEnded, started, executing, done, secondTurn, h.types())
	}
	ts := of[event.ToolStartedPayload](h, event.ToolStarted)
	turn0 := of[event.TurnStartedPayload](h, event.TurnStarted)[0]
	if len(ts) != 1 || ts[0].ToolCallID != "call_ls" || ts[0].Name != tool.NameListDir || ts[0].Label != "ls ." ||
		string(ts[0].Args) != `{"path":"."}` || ts[0].TurnID != turn0.TurnID {
		t.Fatalf("tool.started = %+v", ts)
	}
	td := of[event.ToolDonePayload](h, event.ToolDone)
	if len(td) != 1 || td[0].ToolCallID != "call_ls" || td[0].Status != event.ToolOK || td[0].Error != "" ||
		!strings.Contains(td[0].Output, "hello.txt") || !json.Valid(td[0].Result) {
		t.Fatalf("tool.done = %+v", td)
	}
	if len(h.approvals) != 0 {
		t.Fatalf("list_dir asked for approval: %+v", h.approvals)
	}
	// The second model call sees the assistant turn and the result.
	reqs := f.rec.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2", len(reqs))
	}
	msgs := reqs[1].Messages
	if len(msgs) != 3 || msgs[1].Role != provider.RoleAssistant || msgs[1].Text != "Looking." ||
		len(msgs[1].ToolCalls) != 1 || msgs[1].ToolCalls[0].ID != "call_ls" ||
		msgs[2].Role != provider.RoleTool || len(msgs[2].ToolResults) != 1 ||
		msgs[2].ToolResults[0].ToolCallID != "call_ls" || msgs[2].ToolResults[0].IsError ||
		msgs[2].ToolResults[0].Content != td[0].Output {
		t.Fatalf("second request messages = %+v", msgs)
	}
	if ended := of[event.TurnEndedPayload](h, event.TurnEnded); ended[0].StopReason != provider.StopToolUse {
		t.Fatalf("first turn.ended = %+v", ended[0])
	}
}

func TestRunCommandApproval(t *testing.T) {
	tests := []struct {
		choice     string
		wantStatus string
		wantOutput string
		wantRan    bool
	}{
		{"once", event.ToolOK, "ran", true},
		{"session", event.ToolOK, "ran", true},
		{"always", event.ToolOK, "ran", true},
		{"deny", event.ToolDenied, "Not run: the user denied this action.", false},
		{agent.ChoiceExpired, event.ToolDenied, "Not run: the approval request expired without an answer.", false},
	}
	for _, tt := range tests {
		t.Run(tt.choice, func(t *testing.T) {
			const cmd = "touch marker && echo ran"
			f := newFixture(t, turns(
				[]demo.Step{callTool("call_rc", tool.NameRunCommand, `{"command":"touch marker && echo ran"}`)},
				[]demo.Step{say("Moving on.")},
			))
			h := &fakeHost{choice: tt.choice}
			res := run(t, f, h)
			if res.Err != nil {
				t.Fatalf("Err = %+v", res.Err)
			}
			if len(h.approvals) != 1 {
				t.Fatalf("approvals = %+v", h.approvals)
			}
			a := h.approvals[0]
			if a.ToolCallID != "call_rc" || a.Tool != tool.NameRunCommand || a.Action != "$ "+cmd || a.Reason == "" {
				t.Fatalf("approval ask = %+v", a)
			}
			td := of[event.ToolDonePayload](h, event.ToolDone)
			if len(td) != 1 || td[0].Status != tt.wantStatus || !strings.Contains(td[0].Output, tt.wantOutput) {
				t.Fatalf("tool.done = %+v", td)
			}
			if (td[0].Error != "") == (tt.wantStatus == event.ToolOK) {
				t.Fatalf("tool.done error %q for status %s", td[0].Error, td[0].Status)
			}
			executing := h.index(func(e emitted) bool {
				u, ok := e.Payload.(event.ToolUpdatedPayload)
				return ok && u.Phase == "executing"
			})
			if (executing >= 0) != tt.wantRan {
				t.Fatalf("executing mark present = %v, want %v", executing >= 0, tt.wantRan)
			}
			_, err := os.Stat(filepath.Join(f.ws, "marker"))
			if (err == nil) != tt.wantRan {
				t.Fatalf("command ran = %v, want %v", err == nil, tt.wantRan)
			}
			// The model continues either way and reads the outcome.
			reqs := f.rec.requests()
			if len(reqs) != 2 {
				t.Fatalf("%d model calls, want 2", len(reqs))
			}
			r := reqs[1].Messages[2].ToolResults[0]
			if r.ToolCallID != "call_rc" || r.Content != td[0].Output || r.IsError != (tt.wantStatus != event.ToolOK) {
				t.Fatalf("tool result = %+v", r)
			}
			if md := of[event.DonePayload](h, event.MessageDone); len(md) != 1 || md[0].Text != "Moving on." {
				t.Fatalf("final message = %+v", md)
			}
		})
	}
}

func TestClarify(t *testing.T) {
	tests := []struct {
		name       string
		answer     string
		ok         bool
		args       string
		wantAsk    bool
		wantStatus string
		wantOutput string
	}{
		{"answered", "blue", true, `{"question":" Which colour? ","choices":["red","blue"]}`, true, event.ToolOK, "The user answered: blue"},
		{"expired", "", false, `{"question":"Which colour?","choices":["red","blue"]}`, true, event.ToolError, "expired without an answer"},
		{"invalid arguments", "", true, `{"choices":["red"]}`, false, event.ToolError, "question is required"},
		{"too many choices", "", true, `{"question":"q","choices":["a","b","c","d","e"]}`, false, event.ToolError, "at most 4 choices"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, turns(
				[]demo.Step{callTool("call_q", tool.NameClarify, tt.args)},
				[]demo.Step{say("Thanks.")},
			))
			h := &fakeHost{answer: tt.answer, clarifyOK: tt.ok}
			if res := run(t, f, h); res.Err != nil {
				t.Fatalf("Err = %+v", res.Err)
			}
			if (len(h.clarifies) == 1) != tt.wantAsk || len(h.clarifies) > 1 {
				t.Fatalf("clarify asks = %+v", h.clarifies)
			}
			if tt.wantAsk {
				c := h.clarifies[0]
				if c.ToolCallID != "call_q" || c.Question != "Which colour?" || !slices.Equal(c.Choices, []string{"red", "blue"}) {
					t.Fatalf("clarify ask = %+v", c)
				}
			}
			if len(h.approvals) != 0 {
				t.Fatalf("clarify asked for approval")
			}
			if h.index(isType(event.ToolUpdated)) >= 0 {
				t.Fatalf("clarify was marked executing: %v", h.types())
			}
			td := of[event.ToolDonePayload](h, event.ToolDone)
			if len(td) != 1 || td[0].Status != tt.wantStatus || !strings.Contains(td[0].Output, tt.wantOutput) {
				t.Fatalf("tool.done = %+v", td)
			}
			if tt.wantStatus == event.ToolOK {
				var data map[string]string
				if err := json.Unmarshal(td[0].Result, &data); err != nil || data["answer"] != tt.answer {
					t.Fatalf("result = %s (%v)", td[0].Result, err)
				}
			}
			r := f.rec.requests()[1].Messages[2].ToolResults[0]
			if r.ToolCallID != "call_q" || !strings.Contains(r.Content, tt.wantOutput) {
				t.Fatalf("tool result = %+v", r)
			}
		})
	}
}

func TestProviderError(t *testing.T) {
	tests := []struct {
		name        string
		steps       []demo.Step
		wantCode    string
		wantPartial map[event.Type]string // done event type → partial text
	}{
		{"error after text", []demo.Step{say("partial answer"), {Kind: demo.KindError, Code: "rate_limited", Message: "slow down"}},
			"provider_rate_limited", map[event.Type]string{event.MessageDone: "partial answer"}},
		{"error during reasoning", []demo.Step{think("hmm", ""), {Kind: demo.KindError, Message: "cut"}},
			"provider_scripted", map[event.Type]string{event.ReasoningDone: "hmm"}},
		{"error before anything", []demo.Step{{Kind: demo.KindError, Code: "auth", Message: "bad key"}},
			"provider_auth", map[event.Type]string{}},
		{"error after a tool call drops the call", []demo.Step{callTool("c", tool.NameListDir, `{}`), {Kind: demo.KindError, Code: "stream_cut", Message: "eof"}},
			"provider_stream_cut", map[event.Type]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, turns(tt.steps))
			h := &fakeHost{}
			res := run(t, f, h)
			if res.Err == nil || res.Err.Code != tt.wantCode || !strings.HasPrefix(res.Err.Message, "demo: ") {
				t.Fatalf("Err = %+v, want code %s", res.Err, tt.wantCode)
			}
			for _, typ := range []event.Type{event.MessageDone, event.ReasoningDone} {
				done := of[event.DonePayload](h, typ)
				want, ok := tt.wantPartial[typ]
				if !ok {
					if len(done) != 0 {
						t.Fatalf("%s = %+v, want none", typ, done)
					}
					continue
				}
				if len(done) != 1 || !done[0].Partial || done[0].Text != want {
					t.Fatalf("%s = %+v, want partial %q", typ, done, want)
				}
			}
			ended := of[event.TurnEndedPayload](h, event.TurnEnded)
			if len(ended) != 1 || ended[0].StopReason != "error" {
				t.Fatalf("turn.ended = %+v", ended)
			}
			if n := len(of[event.ToolStartedPayload](h, event.ToolStarted)); n != 0 {
				t.Fatalf("%d tool calls announced after a failed stream", n)
			}
			if len(f.rec.requests()) != 1 {
				t.Fatalf("the loop called the model again after an error")
			}
		})
	}
}

func TestCancelDuringDelay(t *testing.T) {
	f := newFixture(t, turns([]demo.Step{say("Start"), {Kind: demo.KindDelay, DelayMS: 60_000}, say("never")}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := &fakeHost{onEmit: func(typ event.Type, _ any) {
		if typ == event.MessageDelta {
			// Cancel once the delay has surely begun.
			time.AfterFunc(20*time.Millisecond, cancel)
		}
	}}
	start := time.Now()
	res, err := f.loop.Run(ctx, h, userHistory("go"), nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %+v, %v; want context.Canceled", res, err)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatalf("Run took %v: the delay was not interrupted", time.Since(start))
	}
	// What streamed stays; closing it is Finish's job.
	for _, typ := range []event.Type{event.MessageDone, event.TurnEnded} {
		if h.index(isType(typ)) >= 0 {
			t.Fatalf("%s emitted after cancel: %v", typ, h.types())
		}
	}
	if d := of[event.DeltaPayload](h, event.MessageDelta); len(d) == 0 || d[0].Delta != "Star" {
		t.Fatalf("deltas = %+v", d)
	}
}

func TestCancelWhileWaitingForApproval(t *testing.T) {
	f := newFixture(t, turns([]demo.Step{callTool("c", tool.NameRunCommand, `{"command":"touch marker"}`)}))
	ctx, cancel := context.WithCancel(context.Background())
	h := &cancellingHost{fakeHost: &fakeHost{choice: "once"}, cancel: cancel}
	_, err := f.loop.Run(ctx, h, userHistory("go"), nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run err = %v, want context.Canceled", err)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "marker")); err == nil {
		t.Fatal("the command ran although the approval wait was cancelled")
	}
	if h.index(isType(event.ToolDone)) >= 0 {
		t.Fatalf("tool.done emitted for a call cancelled before it ran: %v", h.types())
	}
}

// cancellingHost cancels the run while Approve waits, the way a cancel
// request reaches a runner blocked on a person.
type cancellingHost struct {
	*fakeHost
	cancel context.CancelFunc
}

func (h *cancellingHost) Approve(ctx context.Context, a agent.ApprovalAsk) (string, error) {
	h.fakeHost.Approve(ctx, a)
	h.cancel()
	<-ctx.Done()
	return "", ctx.Err()
}

func TestUnknownTool(t *testing.T) {
	f := newFixture(t, turns(
		[]demo.Step{callTool("call_x", "teleport", `{"to":"mars"}`)},
		[]demo.Step{say("Sorry.")},
	))
	h := &fakeHost{}
	if res := run(t, f, h); res.Err != nil {
		t.Fatalf("Err = %+v", res.Err)
	}
	if ts := of[event.ToolStartedPayload](h, event.ToolStarted); len(ts) != 1 || ts[0].Label != "teleport" {
		t.Fatalf("tool.started = %+v", ts)
	}
	td := of[event.ToolDonePayload](h, event.ToolDone)
	if len(td) != 1 || td[0].Status != event.ToolError || !strings.Contains(td[0].Output, `unknown tool "teleport"`) ||
		!strings.Contains(td[0].Output, tool.NameListDir) || td[0].Error == "" {
		t.Fatalf("tool.done = %+v", td)
	}
	if h.index(isType(event.ToolUpdated)) >= 0 || len(h.approvals) != 0 {
		t.Fatalf("unknown tool was executed or asked about: %v", h.types())
	}
	if reqs := f.rec.requests(); len(reqs) != 2 || !reqs[1].Messages[2].ToolResults[0].IsError {
		t.Fatalf("the loop did not continue with an error result: %+v", reqs)
	}
}

// TestErrorFieldIsValidUTF8: tool.done's one-line error is cut at a rune
// boundary, whatever the model put in the output.
func TestErrorFieldIsValidUTF8(t *testing.T) {
	// The unknown tool's name is echoed in the output; the prefixes shift
	// where byte 300 falls relative to the two-byte runes.
	for _, prefix := range []string{"", "x"} {
		t.Run(fmt.Sprintf("prefix %q", prefix), func(t *testing.T) {
			name := prefix + strings.Repeat("é", 200)
			f := newFixture(t, turns([]demo.Step{callTool("call_x", name, `{}`)}, []demo.Step{say("ok")}))
			h := &fakeHost{}
			run(t, f, h)
			td := of[event.ToolDonePayload](h, event.ToolDone)
			if len(td) != 1 || !utf8.ValidString(td[0].Error) || !strings.HasSuffix(td[0].Error, "…") || len(td[0].Error) > 300+len("…") {
				t.Fatalf("tool.done error = %q (valid UTF-8: %v)", td[0].Error, utf8.ValidString(td[0].Error))
			}
		})
	}
}

func TestMalformedArgs(t *testing.T) {
	tests := []struct {
		name     string
		args     string
		wantArgs string
	}{
		{"truncated object", `{"path":`, `{"_invalid_json":"{\"path\":"}`},
		{"not json at all", `path=.`, `{"_invalid_json":"path=."}`},
		{"empty means no arguments", ``, `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// demo.New does not validate, so the model can stream broken JSON.
			f := newFixture(t, turns(
				[]demo.Step{callTool("call_bad", tool.NameListDir, tt.args)},
				[]demo.Step{say("Fixed.")},
			))
			h := &fakeHost{}
			if res := run(t, f, h); res.Err != nil {
				t.Fatalf("Err = %+v", res.Err)
			}
			ts := of[event.ToolStartedPayload](h, event.ToolStarted)
			if len(ts) != 1 || string(ts[0].Args) != tt.wantArgs {
				t.Fatalf("tool.started args = %s, want %s", ts[0].Args, tt.wantArgs)
			}
			td := of[event.ToolDonePayload](h, event.ToolDone)[0]
			if tt.wantArgs == `{}` {
				if td.Status != event.ToolOK {
					t.Fatalf("tool.done = %+v", td)
				}
			} else if td.Status != event.ToolError || !strings.Contains(td.Output, "invalid arguments") {
				t.Fatalf("tool.done = %+v", td)
			}
			// Every request stays valid JSON for the provider.
			reqs := f.rec.requests()
			if len(reqs) != 2 {
				t.Fatalf("%d model calls", len(reqs))
			}
			msgs := reqs[1].Messages
			for _, m := range msgs {
				for _, c := range m.ToolCalls {
					if !json.Valid(c.Args) {
						t.Fatalf("history holds invalid args %q", c.Args)
					}
				}
			}
			if _, err := json.Marshal(msgs); err != nil {
				t.Fatalf("history does not marshal: %v", err)
			}
			if got := string(msgs[1].ToolCalls[0].Args); got != tt.wantArgs {
				t.Fatalf("history args = %s, want %s", got, tt.wantArgs)
			}
		})
	}
}

func TestMaxTurns(t *testing.T) {
	ls := []demo.Step{callTool("", tool.NameListDir, `{}`)}
	f := newFixture(t, turns(ls, ls, ls, ls))
	f.loop.MaxTurns = 2
	h := &fakeHost{}
	res := run(t, f, h)
	if res.Err == nil || res.Err.Code != "max_turns" || !strings.Contains(res.Err.Message, "2") {
		t.Fatalf("Err = %+v", res.Err)
	}
	if n := len(of[event.TurnStartedPayload](h, event.TurnStarted)); n != 2 {
		t.Fatalf("%d turns, want 2", n)
	}
	if n := len(of[event.ToolDonePayload](h, event.ToolDone)); n != 2 {
		t.Fatalf("%d tool calls finished, want 2", n)
	}
	if h.flushes == 0 {
		t.Fatal("no flush before returning")
	}
	usage := of[event.UsagePayload](h, event.Usage)
	if len(usage) != 2 || usage[1].Total != res.Usage || usage[1].Total != usage[0].Turn.Add(usage[1].Turn) {
		t.Fatalf("usage events %+v, result %+v", usage, res.Usage)
	}
}

func TestEmitErrorStopsTheLoop(t *testing.T) {
	lost := errors.New("lease lost")
	f := newFixture(t, turns([]demo.Step{say("Hello")}))
	h := &fakeHost{emitErr: lost}
	_, err := f.loop.Run(context.Background(), h, userHistory("go"), nil)
	if !errors.Is(err, lost) {
		t.Fatalf("Run err = %v, want %v", err, lost)
	}
	if got := h.types(); len(got) != 1 || got[0] != event.TurnStarted {
		t.Fatalf("events after a failed emit: %v", got)
	}
}

func TestResumePending(t *testing.T) {
	f := newFixture(t, turns(
		[]demo.Step{say("never played: the first turn already happened")},
		[]demo.Step{say("Resumed.")},
	))
	calls := []provider.ToolCall{
		{ID: "c_exec", Name: tool.NameRunCommand, Args: json.RawMessage(`{"command":"touch exec_marker"}`)},
		{ID: "c_fresh", Name: tool.NameRunCommand, Args: json.RawMessage(`{"command":"touch fresh_marker"}`)},
		{ID: "c_done", Name: tool.NameListDir, Args: json.RawMessage(`{}`)},
	}
	history := []provider.Message{
		{Role: provider.RoleUser, Text: "go"},
		{Role: provider.RoleAssistant, Text: "Three calls.", ToolCalls: calls},
	}
	doneResult := provider.ToolResult{ToolCallID: "c_done", Content: "earlier listing"}
	pending := []transcript.Pending{
		{Call: calls[0], Executing: true},
		{Call: calls[1]},
		{Call: calls[2], Result: &doneResult},
	}
	h := &fakeHost{choice: "once"}
	res, err := f.loop.Run(context.Background(), h, history, pending)
	if err != nil || res.Err != nil {
		t.Fatalf("Run = %+v, %v", res, err)
	}

	byCall := map[string][]event.Type{}
	for _, e := range h.snapshot() {
		var id string
		switch p := e.Payload.(type) {
		case event.ToolDonePayload:
			id = p.ToolCallID
		case event.ToolUpdatedPayload:
			id = p.ToolCallID
		case event.ToolStartedPayload:
			id = p.ToolCallID
		}
		if id != "" {
			byCall[id] = append(byCall[id], e.Type)
		}
	}
	// The executing call is reported, never run twice.
	if got := byCall["c_exec"]; !slices.Equal(got, []event.Type{event.ToolDone}) {
		t.Fatalf("c_exec events = %v", got)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "exec_marker")); err == nil {
		t.Fatal("the executing call was run again")
	}
	var execDone event.ToolDonePayload
	for _, d := range of[event.ToolDonePayload](h, event.ToolDone) {
		if d.ToolCallID == "c_exec" {
			execDone = d
		}
	}
	if execDone.Status != event.ToolError || execDone.Output != transcript.InterruptedResult || !strings.Contains(execDone.Error, "interrupted") {
		t.Fatalf("c_exec tool.done = %+v", execDone)
	}
	// The fresh call goes through approval again and runs.
	if len(h.approvals) != 1 || h.approvals[0].ToolCallID != "c_fresh" || h.approvals[0].Action != "$ touch fresh_marker" {
		t.Fatalf("approvals = %+v", h.approvals)
	}
	if got := byCall["c_fresh"]; !slices.Equal(got, []event.Type{event.ToolUpdated, event.ToolDone}) {
		t.Fatalf("c_fresh events = %v", got)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "fresh_marker")); err != nil {
		t.Fatalf("the fresh call did not run: %v", err)
	}
	// The finished call is reused silently.
	if got := byCall["c_done"]; len(got) != 0 {
		t.Fatalf("c_done events = %v", got)
	}
	// The next model call sees one tool message answering all three, in order.
	reqs := f.rec.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model calls, want 1", len(reqs))
	}
	msgs := reqs[0].Messages
	if len(msgs) != 3 || msgs[2].Role != provider.RoleTool || len(msgs[2].ToolResults) != 3 {
		t.Fatalf("resumed history = %+v", msgs)
	}
	rs := msgs[2].ToolResults
	if rs[0] != (provider.ToolResult{ToolCallID: "c_exec", Content: transcript.InterruptedResult, IsError: true}) ||
		rs[1].ToolCallID != "c_fresh" || rs[1].IsError || rs[2] != doneResult {
		t.Fatalf("tool results = %+v", rs)
	}
	if md := of[event.DonePayload](h, event.MessageDone); len(md) != 1 || md[0].Text != "Resumed." {
		t.Fatalf("final message = %+v", md)
	}
}

// TestResumeFromJournal runs the whole path a resumed run takes: the
// journal of a crashed run folded into history and pending calls, then the
// loop settling them.
func TestResumeFromJournal(t *testing.T) {
	f := newFixture(t, turns(
		[]demo.Step{say("unused")},
		[]demo.Step{say("Back.")},
	))
	h0 := &fakeHost{}
	// Record a first run that dies after announcing one call and executing another.
	payloads := []emitted{
		{event.MessageUser, event.MessageUserPayload{MessageID: "u", Content: "go"}},
		{event.ToolStarted, event.ToolStartedPayload{ToolCallID: "a", Name: tool.NameListDir, Args: json.RawMessage(`{}`), TurnID: "t1"}},
		{event.ToolStarted, event.ToolStartedPayload{ToolCallID: "b", Name: tool.NameListDir, Args: json.RawMessage(`{}`), TurnID: "t1"}},
		{event.ToolUpdated, event.ToolUpdatedPayload{ToolCallID: "a", Phase: "executing"}},
	}
	var evs []event.Event
	for i, p := range payloads {
		b, _ := json.Marshal(p.Payload)
		evs = append(evs, event.Event{ID: int64(i + 1), RunID: "r", Type: p.Type, Payload: b})
	}
	msgs, pending := transcript.History(transcript.Fold(evs))
	if len(pending) != 2 || !pending[0].Executing || pending[1].Executing {
		t.Fatalf("pending = %+v", pending)
	}
	if _, err := f.loop.Run(context.Background(), h0, msgs, pending); err != nil {
		t.Fatal(err)
	}
	td := of[event.ToolDonePayload](h0, event.ToolDone)
	if len(td) != 2 || td[0].ToolCallID != "a" || td[0].Status != event.ToolError || td[1].ToolCallID != "b" || td[1].Status != event.ToolOK {
		t.Fatalf("tool.done = %+v", td)
	}
}

// A resumed run continues the numbering, the turn budget and the usage
// total of its earlier claims instead of starting over.
func TestResumedRunContinuesProgress(t *testing.T) {
	ls := []demo.Step{callTool("", tool.NameListDir, `{}`)}
	f := newFixture(t, turns(ls, ls, ls, ls))
	f.loop.MaxTurns = 3
	prior := event.UsageTotals{InputTokens: 100, OutputTokens: 7}
	f.loop.Done = agent.Progress{Turns: 2, Usage: prior}
	h := &fakeHost{}
	res := run(t, f, h)
	if res.Err == nil || res.Err.Code != "max_turns" {
		t.Fatalf("Err = %+v, want max_turns after one more turn", res.Err)
	}
	started := of[event.TurnStartedPayload](h, event.TurnStarted)
	if len(started) != 1 || started[0].Index != 2 {
		t.Fatalf("turn.started = %+v, want one turn with index 2", started)
	}
	usage := of[event.UsagePayload](h, event.Usage)[0]
	if usage.Total != prior.Add(usage.Turn) || res.Usage != usage.Total {
		t.Fatalf("usage %+v, result %+v, want totals counted from %+v", usage, res.Usage, prior)
	}
}

// Yield stops the loop between steps: after the tool call in flight is
// done, before the next model call, with everything flushed.
func TestYieldAtStepBoundary(t *testing.T) {
	ls := []demo.Step{callTool("", tool.NameListDir, `{}`)}
	f := newFixture(t, turns(ls, ls, []demo.Step{say("never")}))
	h := &fakeHost{}
	calls := 0
	f.loop.Yield = func() bool { calls++; return calls > 2 } // allow turn 0 and its one tool call
	_, err := f.loop.Run(context.Background(), h, userHistory("go"), nil)
	if !errors.Is(err, agent.ErrYield) {
		t.Fatalf("err = %v, want ErrYield", err)
	}
	if n := len(of[event.TurnStartedPayload](h, event.TurnStarted)); n != 1 {
		t.Fatalf("%d turns started, want 1", n)
	}
	if n := len(of[event.ToolDonePayload](h, event.ToolDone)); n != 1 {
		t.Fatalf("%d tool calls done, want the one in flight finished", n)
	}
	if h.flushes == 0 {
		t.Fatal("no flush before yielding")
	}
}

// countingDelegator counts the delegate calls it serves.
type countingDelegator struct{ calls int }

func (d *countingDelegator) Delegate(_ context.Context, env tool.Env, tasks []tool.DelegateTask) ([]tool.DelegateOutcome, error) {
	d.calls++
	return []tool.DelegateOutcome{{Title: tasks[0].Title, SessionID: "ses_child", Status: "completed", Answer: "child answer for " + env.CallID}}, nil
}

// A delegate call found executing after a handover runs again (the tool
// is Resumable: it finds its children instead of making new ones), where
// any other executing call is reported interrupted.
func TestResumeRunsAResumableCallAgain(t *testing.T) {
	f := newFixture(t, turns(
		[]demo.Step{say("never played")},
		[]demo.Step{say("Resumed.")},
	))
	d := &countingDelegator{}
	f.loop.Tools = f.loop.Tools.With(tool.NewDelegate(d))
	f.loop.RunID, f.loop.SessionID = "run_1", "ses_1"
	call := provider.ToolCall{ID: "c_del", Name: tool.NameDelegate, Args: json.RawMessage(`{"tasks":[{"prompt":"look"}]}`)}
	history := []provider.Message{
		{Role: provider.RoleUser, Text: "go"},
		{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{call}},
	}
	h := &fakeHost{choice: "once"}
	res, err := f.loop.Run(context.Background(), h, history, []transcript.Pending{{Call: call, Executing: true}})
	if err != nil || res.Err != nil {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if d.calls != 1 {
		t.Fatalf("delegate ran %d times on resume, want 1", d.calls)
	}
	done := of[event.ToolDonePayload](h, event.ToolDone)
	if len(done) != 1 || done[0].Status != event.ToolOK || !strings.Contains(done[0].Output, "child answer for c_del") {
		t.Fatalf("tool.done = %+v", done)
	}
}
