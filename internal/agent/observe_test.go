package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/agent"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// watched is an agent.Observer that records what it was told, and checks
// that every call it saw start ended exactly once and that the work ran
// under the context it returned.
type watched struct {
	mu      sync.Mutex
	calls   []string // "model demo/demo", "tool list_dir c1"
	ends    []string // "model <err code>", "tool <status>"
	usage   event.UsageTotals
	started int
	ended   int
}

type watchKey struct{}

func (w *watched) ModelCall(ctx context.Context, provider, model string) (context.Context, func(agent.ModelOutcome)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, "model "+provider+"/"+model)
	w.started++
	once := false
	return context.WithValue(ctx, watchKey{}, "model"), func(o agent.ModelOutcome) {
		w.mu.Lock()
		defer w.mu.Unlock()
		if once {
			panic("model call ended twice")
		}
		once = true
		w.ended++
		w.usage = w.usage.Add(o.Usage)
		w.ends = append(w.ends, "model "+o.ErrCode)
	}
}

func (w *watched) ToolCall(ctx context.Context, name, callID string) (context.Context, func(string)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, "tool "+name+" "+callID)
	w.started++
	return context.WithValue(ctx, watchKey{}, "tool"), func(status string) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.ended++
		w.ends = append(w.ends, "tool "+status)
	}
}

// ctxTool reports whether it ran under the context the observer gave it.
type ctxTool struct {
	tool.Tool
	saw *string
}

func (c ctxTool) Run(ctx context.Context, env tool.Env, args json.RawMessage) (tool.Result, error) {
	*c.saw, _ = ctx.Value(watchKey{}).(string)
	return c.Tool.Run(ctx, env, args)
}

func TestObserverSeesModelAndToolCalls(t *testing.T) {
	tests := []struct {
		name      string
		steps     [][]demo.Step
		host      *fakeHost
		wantCalls []string
		wantEnds  []string
	}{
		{"a tool turn then an answer",
			[][]demo.Step{{callTool("c1", tool.NameListDir, `{}`)}, {say("done")}},
			&fakeHost{},
			[]string{"model demo/demo", "tool list_dir c1", "model demo/demo"},
			[]string{"model ", "tool ok", "model "}},
		{"a tool that fails",
			[][]demo.Step{{callTool("c1", tool.NameReadFile, `{"path":"missing.txt"}`)}, {say("done")}},
			&fakeHost{},
			[]string{"model demo/demo", "tool read_file c1", "model demo/demo"},
			[]string{"model ", "tool error", "model "}},
		{"a denied call never runs",
			[][]demo.Step{{callTool("c1", tool.NameRunCommand, `{"command":"touch x"}`)}, {say("ok")}},
			&fakeHost{choice: "deny"},
			[]string{"model demo/demo", "model demo/demo"},
			[]string{"model ", "model "}},
		{"a provider error has its code",
			[][]demo.Step{{{Kind: demo.KindError, Code: "rate_limited", Message: "slow down"}}},
			&fakeHost{},
			[]string{"model demo/demo"},
			[]string{"model provider_rate_limited"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, turns(tt.steps...))
			w := &watched{}
			f.loop.Observe = w
			res, err := f.loop.Run(context.Background(), tt.host, userHistory("go"), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(w.calls, tt.wantCalls) || !slices.Equal(w.ends, tt.wantEnds) {
				t.Fatalf("calls %q ends %q, want %q %q", w.calls, w.ends, tt.wantCalls, tt.wantEnds)
			}
			if w.usage != res.Usage {
				t.Fatalf("observed usage %+v, run usage %+v", w.usage, res.Usage)
			}
		})
	}
}

// A host that fails after the model call began (a lost lease while the
// model streams) still ends the call, once.
func TestObserverEndsCallCutByTheHost(t *testing.T) {
	lost := errors.New("lease lost")
	f := newFixture(t, turns([]demo.Step{say("Hello there, a long answer")}))
	w := &watched{}
	f.loop.Observe = w
	h := &fakeHost{}
	h.onEmit = func(typ event.Type, _ any) {
		if typ == event.TurnStarted {
			h.mu.Lock()
			h.emitErr = lost
			h.mu.Unlock()
		}
	}
	// turn.started itself succeeds: the hook runs after Emit read emitErr.
	_, err := f.loop.Run(context.Background(), h, userHistory("go"), nil)
	if !errors.Is(err, lost) {
		t.Fatalf("err %v", err)
	}
	if w.started != 1 || w.ended != 1 || w.ends[0] != "model interrupted" {
		t.Fatalf("started %d ended %d: %q", w.started, w.ended, w.ends)
	}
}

func TestToolRunsUnderTheObserversContext(t *testing.T) {
	f := newFixture(t, turns([]demo.Step{callTool("c1", tool.NameListDir, `{}`)}, []demo.Step{say("done")}))
	var saw string
	var tools []tool.Tool
	for _, name := range f.loop.Tools.Names() {
		tl, _ := f.loop.Tools.Get(name)
		if name == tool.NameListDir {
			tl = ctxTool{Tool: tl, saw: &saw}
		}
		tools = append(tools, tl)
	}
	f.loop.Tools = tool.NewRegistry(tools...)
	f.loop.Observe = &watched{}
	run(t, f, &fakeHost{})
	if saw != "tool" {
		t.Fatalf("the tool ran under context %q, not the observer's", saw)
	}
}
