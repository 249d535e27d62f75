package cli

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
)

func ev(t event.Type, payload any) event.Event {
	b, err := json.Marshal(payload)
	if err != nil {
		panic(err)
	}
	return event.Event{ID: 1, RunID: "run_1", Type: t, Payload: b}
}

func TestRender(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		color  bool
		events []event.Event
		want   string
	}{
		{
			name: "streamed answer then completed",
			events: []event.Event{
				ev(event.MessageDelta, event.DeltaPayload{Delta: "Hello, "}),
				ev(event.MessageDelta, event.DeltaPayload{Delta: "world."}),
				ev(event.MessageDone, event.DonePayload{Text: "Hello, world."}),
				ev(event.RunDone, event.RunDonePayload{Status: "completed"}),
			},
			want: "Hello, world.\n[run completed]\n",
		},
		{
			name: "command with output and approval",
			events: []event.Event{
				ev(event.MessageDelta, event.DeltaPayload{Delta: "Let me check."}),
				ev(event.ToolStarted, event.ToolStartedPayload{Name: "run_command", Label: "$ echo hello"}),
				ev(event.ApprovalRequested, event.ApprovalRequestedPayload{RequestID: "req_1", Action: "$ echo hello\n(in sub)", Reason: "Runs a command"}),
				ev(event.ApprovalResolved, event.ResolvedPayload{RequestID: "req_1", Status: "resolved", Choice: "once"}),
				ev(event.ToolUpdated, event.ToolUpdatedPayload{Phase: "executing"}),
				ev(event.ToolUpdated, event.ToolUpdatedPayload{Stream: "stdout", Output: "hel"}),
				ev(event.ToolUpdated, event.ToolUpdatedPayload{Stream: "stdout", Output: "lo"}),
				ev(event.ToolDone, event.ToolDonePayload{Status: "ok", DurationMS: 12, Output: "hello"}),
			},
			want: "Let me check.\n$ echo hello\n? approval needed: $ echo hello (in sub)\n  reason: Runs a command\n  request: req_1\n  approved (once)\nhello\n  ok (12 ms)\n",
		},
		{
			name: "other tools, denial with a note, failure",
			events: []event.Event{
				ev(event.ToolStarted, event.ToolStartedPayload{Name: "list_dir", Label: "ls ."}),
				ev(event.ApprovalResolved, event.ResolvedPayload{Status: "resolved", Choice: "deny", Note: "use make"}),
				ev(event.ToolDone, event.ToolDonePayload{Status: "denied", Output: "Denied by the user: use make"}),
				ev(event.ToolStarted, event.ToolStartedPayload{Name: "mystery"}),
				ev(event.ToolDone, event.ToolDonePayload{Status: "error", Error: "unknown tool"}),
				ev(event.RunDone, event.RunDonePayload{Status: "failed", Error: &event.ErrorInfo{Code: "provider_auth", Message: "bad key"}}),
			},
			want: "> ls .\n  denied: use make\n  denied: Denied by the user: use make\n> mystery\n  error: unknown tool\n[run failed: provider_auth: bad key]\n",
		},
		{
			name: "question and answer, statuses that matter",
			events: []event.Event{
				ev(event.ClarifyRequested, event.ClarifyRequestedPayload{RequestID: "req_2", Question: "Which one?", Choices: []string{"A", "B"}}),
				ev(event.RunStatus, event.RunStatusPayload{Status: "awaiting_clarify"}),
				ev(event.ClarifyResolved, event.ResolvedPayload{Status: "resolved", Answer: "B"}),
				ev(event.RunStatus, event.RunStatusPayload{Status: "running", Reason: "answered"}),
				ev(event.RunStatus, event.RunStatusPayload{Status: "recovering", Reason: "runner lost"}),
				ev(event.ApprovalResolved, event.ResolvedPayload{Status: "expired"}),
				ev(event.RunDone, event.RunDonePayload{Status: "cancelled"}),
			},
			want: "? question: Which one?\n  choices: A | B\n  request: req_2\n  answered: B\n[run recovering: runner lost]\n  approval expired\n[run cancelled]\n",
		},
		{
			name: "quiet events print nothing; a cut answer says so",
			events: []event.Event{
				ev(event.ReasoningDelta, event.DeltaPayload{Delta: "thinking"}),
				ev(event.Usage, map[string]any{"turn_id": "t"}),
				ev(event.CheckpointCreated, map[string]any{}),
				ev(event.MessageDelta, event.DeltaPayload{Delta: "Half"}),
				ev(event.MessageDone, event.DonePayload{Partial: true}),
				ev("future.event", map[string]any{"x": 1}),
			},
			want: "Half\n[answer cut short]\n",
		},
		{
			name:  "colour on a terminal",
			color: true,
			events: []event.Event{
				ev(event.MessageDelta, event.DeltaPayload{Delta: "Hi"}),
				ev(event.RunDone, event.RunDonePayload{Status: "completed"}),
			},
			want: "Hi\n\x1b[32m[run completed]\x1b[0m\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			r := &renderer{w: &b, color: tc.color}
			for _, e := range tc.events {
				r.render(e)
			}
			if got := b.String(); got != tc.want {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

func TestParseFlagsAnywhere(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args        []string
		wantPos     []string
		wantFollow  bool
		wantSession string
	}{
		{[]string{"hello"}, []string{"hello"}, false, ""},
		{[]string{"hello", "--follow"}, []string{"hello"}, true, ""},
		{[]string{"--session", "ses_1", "hi", "there", "--follow"}, []string{"hi", "there"}, true, "ses_1"},
		{[]string{"--follow", "--", "--not-a-flag"}, []string{"--not-a-flag"}, true, ""},
	}
	for _, tc := range cases {
		var f runFlags
		fs := newFlags("run", IO{Stderr: &bytes.Buffer{}}, &f.common)
		fs.BoolVar(&f.follow, "follow", false, "")
		fs.StringVar(&f.session, "session", "", "")
		pos, err := parse(fs, tc.args)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if len(pos) != len(tc.wantPos) || f.follow != tc.wantFollow || f.session != tc.wantSession {
			t.Errorf("%v: pos %q follow %v session %q", tc.args, pos, f.follow, f.session)
			continue
		}
		for i := range pos {
			if pos[i] != tc.wantPos[i] {
				t.Errorf("%v: pos %q, want %q", tc.args, pos, tc.wantPos)
			}
		}
	}
}
