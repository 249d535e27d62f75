package agent_test

import (
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
)

// TestDurationsInPayloads: the figures the transcript shows live and after a
// reload are measured by the loop and journaled, and a tool's own duration
// leaves out the wait for a person, which is reported apart.
func TestDurationsInPayloads(t *testing.T) {
	const wait = 150 * time.Millisecond
	f := newFixture(t, turns(
		[]demo.Step{
			{Kind: demo.KindReasoning, Text: "one two three four", ChunkSize: 4, ChunkDelayMS: 30},
			callTool("c1", "run_command", `{"command":"true"}`),
			callTool("c2", "clarify", `{"question":"which?"}`),
		},
		[]demo.Step{say("done")},
	))
	h := &fakeHost{choice: "once", answer: "A", clarifyOK: true, wait: wait}
	if res := run(t, f, h); res.Err != nil {
		t.Fatalf("Err = %+v", res.Err)
	}
	rsn := of[event.DonePayload](h, event.ReasoningDone)
	if len(rsn) != 1 || rsn[0].DurationMS < 60 {
		t.Fatalf("reasoning.done = %+v, want a duration of at least the streaming pauses", rsn)
	}
	done := of[event.ToolDonePayload](h, event.ToolDone)
	if len(done) != 2 {
		t.Fatalf("tool.done = %+v", done)
	}
	for _, d := range done {
		if d.WaitMS < wait.Milliseconds() {
			t.Errorf("%s: wait_ms = %d, want at least %d", d.ToolCallID, d.WaitMS, wait.Milliseconds())
		}
		if d.DurationMS >= wait.Milliseconds() {
			t.Errorf("%s: duration_ms = %d includes the wait", d.ToolCallID, d.DurationMS)
		}
	}
	if ended := of[event.TurnEndedPayload](h, event.TurnEnded); len(ended) != 2 || ended[0].DurationMS < rsn[0].DurationMS {
		t.Fatalf("turn.ended = %+v", ended)
	}
}
