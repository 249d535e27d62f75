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
	h.mu.Lock()
	defer h.mu.Unlock()
	h.approvals = append(h.approvals, a)
	return h.choice, nil
}

func (h *fakeHost) Clarify(_ context.Context, c agent.ClarifyAsk) (string, bool, error) {
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
		Workspace: ws, MaxTurns: 10,
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
	if req.System != "be brief" || req.Model != "demo" || len(req.Messages) != 1 || len(req.Tools) != 4 {
		t.Fatalf("request = %+v", req)
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
