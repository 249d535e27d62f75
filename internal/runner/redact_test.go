package runner_test

import (
	"context"
	"encoding/json"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/runner"
	"github.com/caduceus-dev/caduceus/internal/secret"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// recordingDemo is the demo model keeping every request it was sent.
type recordingDemo struct {
	*demo.Provider
	mu   sync.Mutex
	reqs []provider.Request
}

func (r *recordingDemo) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Chunk, error] {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return r.Provider.Stream(ctx, req)
}

func (r *recordingDemo) requests() []provider.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.reqs)
}

// A tool that prints a known key — whole, or cut between two chunks of its
// streamed output — leaves "[redacted]" in the journal (the live chunks
// and the result) and in the next request to the model, and the key
// nowhere. The command line spells the key in pieces, so that only the
// output holds it.
func TestToolOutputIsRedacted(t *testing.T) {
	const key = "sk-live-1234567890abcdef"
	s := script(
		demo.Turn{Steps: []demo.Step{{Kind: demo.KindToolCall, Name: tool.NameRunCommand,
			Args: json.RawMessage(`{"command": "echo key=sk-live-$((1233+1))567890abcdef; printf 'then sk-live-12'; sleep 0.4; printf '34567890abcdef done\\n'"}`)}}},
		demo.Turn{Steps: []demo.Step{{Kind: demo.KindText, Text: "noted"}}},
	)
	e := newEnv(t, storetest.SQLite, s, control.RetryPolicy{})
	rec := &recordingDemo{Provider: demo.New(s)}
	e.model = rec
	e.start(runner.Config{ApprovalMode: "off", Redactor: secret.NewRedactor(key)})
	r := e.send("go")
	e.wait(r.ID, "the end", terminal)
	evs := e.events(r.ID)
	checkOnce(t, evs, run.Completed)

	var live strings.Builder
	var done event.ToolDonePayload
	for _, ev := range evs {
		if strings.Contains(string(ev.Payload), key) {
			t.Errorf("%s holds the key: %s", ev.Type, ev.Payload)
		}
		// tool.started and approval.decided repeat the command line, which
		// spells the key only in pieces.
		if ev.Type != event.ToolStarted && ev.Type != event.ApprovalDecided && strings.Contains(string(ev.Payload), "sk-live-12") {
			t.Errorf("%s holds the beginning of the key: %s", ev.Type, ev.Payload)
		}
		switch ev.Type {
		case event.ToolUpdated:
			var u event.ToolUpdatedPayload
			if err := json.Unmarshal(ev.Payload, &u); err != nil {
				t.Fatal(err)
			}
			live.WriteString(u.Output)
		case event.ToolDone:
			if err := json.Unmarshal(ev.Payload, &done); err != nil {
				t.Fatal(err)
			}
		}
	}
	const want = "key=[redacted]\nthen [redacted] done\n"
	if live.String() != want {
		t.Errorf("streamed output %q, want %q", live.String(), want)
	}
	if !strings.HasPrefix(done.Output, want) || !strings.Contains(string(done.Result), `key=[redacted]\nthen [redacted] done`) {
		t.Errorf("tool.done output %q, result %s", done.Output, done.Result)
	}
	reqs := rec.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2", len(reqs))
	}
	b, _ := json.Marshal(reqs[1].Messages)
	if strings.Contains(string(b), key) || !strings.Contains(string(b), "then [redacted] done") {
		t.Errorf("the next request to the model: %s", b)
	}
}
