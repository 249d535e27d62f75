package transcript_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/transcript"
)

func userMsg(text string) provider.Message {
	return provider.Message{Role: provider.RoleUser, Text: text}
}

func call(id, name, args string) provider.ToolCall {
	return provider.ToolCall{ID: id, Name: name, Args: json.RawMessage(args)}
}

func results(rs ...provider.ToolResult) provider.Message {
	return provider.Message{Role: provider.RoleTool, ToolResults: rs}
}

func okResult(id, content string) provider.ToolResult {
	return provider.ToolResult{ToolCallID: id, Content: content}
}

func errResult(id, content string) provider.ToolResult {
	return provider.ToolResult{ToolCallID: id, Content: content, IsError: true}
}

func interrupted(id string) provider.ToolResult { return errResult(id, transcript.InterruptedResult) }

func TestHistory(t *testing.T) {
	tests := []struct {
		name        string
		build       func(j *journal)
		wantMsgs    []provider.Message
		wantPending []transcript.Pending
	}{
		{
			name: "one assistant message per turn with its tool message",
			build: func(j *journal) {
				j.user("run_1", "u1", "hi")
				j.add("run_1", event.ReasoningDelta, event.DeltaPayload{ID: "r1", TurnID: "t1", Delta: "hm"})
				j.add("run_1", event.ReasoningDone, event.DonePayload{ID: "r1", TurnID: "t1", Text: "hmm", Signature: "s1"})
				j.text("run_1", "t1", "m1", "Look", "ing")
				j.toolStarted("run_1", "t1", "c1", "list_dir", `{"path":"."}`)
				j.toolStarted("run_1", "t1", "c2", "read_file", `{"path":"x"}`)
				j.executing("run_1", "c1")
				j.toolDone("run_1", "c1", "list_dir", event.ToolOK, "a.go", "")
				j.executing("run_1", "c2")
				j.toolDone("run_1", "c2", "read_file", event.ToolError, "", "x does not exist")
				j.text("run_1", "t2", "m2", "Done.")
				j.add("run_1", event.RunDone, event.RunDonePayload{Status: "completed"})
			},
			wantMsgs: []provider.Message{
				userMsg("hi"),
				{Role: provider.RoleAssistant, Text: "Looking", Reasoning: []provider.Reasoning{{Text: "hmm", Signature: "s1"}},
					ToolCalls: []provider.ToolCall{call("c1", "list_dir", `{"path":"."}`), call("c2", "read_file", `{"path":"x"}`)}},
				results(okResult("c1", "a.go"), errResult("c2", "error: x does not exist")),
				{Role: provider.RoleAssistant, Text: "Done."},
			},
		},
		{
			name: "consecutive turns without tools stay separate messages",
			build: func(j *journal) {
				j.user("run_1", "u1", "hi")
				j.text("run_1", "t1", "m1", "one")
				j.text("run_1", "t2", "m2", "two")
			},
			wantMsgs: []provider.Message{userMsg("hi"),
				{Role: provider.RoleAssistant, Text: "one"}, {Role: provider.RoleAssistant, Text: "two"}},
		},
		{
			name: "unfinished calls of an earlier turn are interrupted",
			build: func(j *journal) {
				j.user("run_1", "u1", "hi")
				j.toolStarted("run_1", "t1", "c1", "run_command", `{"command":"make"}`)
				j.toolStarted("run_1", "t1", "c2", "list_dir", `{}`)
				j.toolStarted("run_1", "t1", "c3", "list_dir", `{}`)
				j.executing("run_1", "c1")
				j.toolDone("run_1", "c3", "list_dir", event.ToolDenied, "Not run: denied.", "Not run: denied.")
				j.text("run_1", "t2", "m2", "moving on")
			},
			wantMsgs: []provider.Message{userMsg("hi"),
				{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{
					call("c1", "run_command", `{"command":"make"}`), call("c2", "list_dir", `{}`), call("c3", "list_dir", `{}`)}},
				results(interrupted("c1"), interrupted("c2"), errResult("c3", "Not run: denied.")),
				{Role: provider.RoleAssistant, Text: "moving on"},
			},
		},
		{
			name: "unfinished calls of an earlier run are interrupted",
			build: func(j *journal) {
				j.user("run_1", "u1", "hi")
				j.toolStarted("run_1", "t1", "c1", "list_dir", `{}`)
				j.add("run_1", event.RunDone, event.RunDonePayload{Status: "failed"})
				j.user("run_2", "u2", "again")
				j.text("run_2", "t2", "m2", "ok")
			},
			wantMsgs: []provider.Message{userMsg("hi"),
				{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{call("c1", "list_dir", `{}`)}},
				results(interrupted("c1")),
				userMsg("again"),
				{Role: provider.RoleAssistant, Text: "ok"},
			},
		},
		{
			name: "final turn with unfinished calls is pending",
			build: func(j *journal) {
				j.user("run_1", "u1", "hi")
				j.text("run_1", "t1", "m1", "Three things.")
				j.toolStarted("run_1", "t1", "c1", "list_dir", `{}`)
				j.toolStarted("run_1", "t1", "c2", "run_command", `{"command":"make"}`)
				j.toolStarted("run_1", "t1", "c3", "run_command", `{"command":"ls"}`)
				j.toolStarted("run_1", "t1", "c4", "clarify", `{"question":"?"}`)
				j.executing("run_1", "c1")
				j.toolDone("run_1", "c1", "list_dir", event.ToolOK, "a.go", "")
				j.add("run_1", event.ApprovalRequested, event.ApprovalRequestedPayload{RequestID: "q2", ToolCallID: "c2"})
				j.add("run_1", event.ApprovalResolved, event.ResolvedPayload{RequestID: "q2", Status: "resolved", Choice: "once"})
				j.executing("run_1", "c2")
				j.add("run_1", event.ApprovalRequested, event.ApprovalRequestedPayload{RequestID: "q3", ToolCallID: "c3"})
				j.add("run_1", event.ClarifyRequested, event.ClarifyRequestedPayload{RequestID: "q4", ToolCallID: "c4"})
			},
			wantMsgs: []provider.Message{userMsg("hi"),
				{Role: provider.RoleAssistant, Text: "Three things.", ToolCalls: []provider.ToolCall{
					call("c1", "list_dir", `{}`), call("c2", "run_command", `{"command":"make"}`),
					call("c3", "run_command", `{"command":"ls"}`), call("c4", "clarify", `{"question":"?"}`)}},
			},
			wantPending: []transcript.Pending{
				{Call: call("c1", "list_dir", `{}`), Result: &provider.ToolResult{ToolCallID: "c1", Content: "a.go"}},
				{Call: call("c2", "run_command", `{"command":"make"}`), Executing: true},
				{Call: call("c3", "run_command", `{"command":"ls"}`)},
				{Call: call("c4", "clarify", `{"question":"?"}`)},
			},
		},
		{
			name: "final turn with every call finished is not pending",
			build: func(j *journal) {
				j.user("run_1", "u1", "hi")
				j.toolStarted("run_1", "t1", "c1", "list_dir", `{}`)
				j.toolDone("run_1", "c1", "list_dir", event.ToolCancelled, "", "")
			},
			wantMsgs: []provider.Message{userMsg("hi"),
				{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{call("c1", "list_dir", `{}`)}},
				results(errResult("c1", "cancelled")),
			},
		},
		{
			name: "pending in an earlier turn does not leak into the final one",
			build: func(j *journal) {
				j.user("run_1", "u1", "hi")
				j.toolStarted("run_1", "t1", "c1", "list_dir", `{}`)
				j.executing("run_1", "c1")
				j.text("run_1", "t2", "m2", "answer")
				j.add("run_1", event.RunDone, event.RunDonePayload{Status: "cancelled"})
			},
			wantMsgs: []provider.Message{userMsg("hi"),
				{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{call("c1", "list_dir", `{}`)}},
				results(interrupted("c1")),
				{Role: provider.RoleAssistant, Text: "answer"},
			},
		},
		{
			name: "open text cut off by a crash is kept",
			build: func(j *journal) {
				j.user("run_1", "u1", "hi")
				j.add("run_1", event.MessageDelta, event.DeltaPayload{ID: "m1", TurnID: "t1", Delta: "half an"})
			},
			wantMsgs: []provider.Message{userMsg("hi"), {Role: provider.RoleAssistant, Text: "half an"}},
		},
		{
			name: "only a user message",
			build: func(j *journal) {
				j.user("run_1", "u1", "hi")
			},
			wantMsgs: []provider.Message{userMsg("hi")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := newJournal()
			tt.build(j)
			msgs, pending := transcript.History(transcript.Fold(j.evs))
			if !reflect.DeepEqual(msgs, tt.wantMsgs) {
				t.Errorf("messages:\n got %s\nwant %s", mustJSON(msgs), mustJSON(tt.wantMsgs))
			}
			if !reflect.DeepEqual(pending, tt.wantPending) {
				t.Errorf("pending:\n got %s\nwant %s", mustJSON(pending), mustJSON(tt.wantPending))
			}
			checkWellFormed(t, msgs, len(pending) > 0)
		})
	}
}

// checkWellFormed asserts what every provider requires: each assistant
// message with tool calls is followed by one tool message answering each of
// them, in order (except a final turn handed back as pending).
func checkWellFormed(t *testing.T, msgs []provider.Message, pendingTail bool) {
	t.Helper()
	for i, m := range msgs {
		if m.Role != provider.RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		if i == len(msgs)-1 && pendingTail {
			continue
		}
		if i+1 >= len(msgs) || msgs[i+1].Role != provider.RoleTool || len(msgs[i+1].ToolResults) != len(m.ToolCalls) {
			t.Fatalf("message %d's tool calls are not answered by the next message: %s", i, mustJSON(msgs))
		}
		for k, c := range m.ToolCalls {
			if msgs[i+1].ToolResults[k].ToolCallID != c.ID {
				t.Fatalf("result %d of message %d answers %q, want %q", k, i+1, msgs[i+1].ToolResults[k].ToolCallID, c.ID)
			}
		}
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

func TestResultText(t *testing.T) {
	tests := []struct {
		tool transcript.Tool
		want string
	}{
		{transcript.Tool{Status: event.ToolOK, Output: "out"}, "out"},
		{transcript.Tool{Status: event.ToolError, Output: "out", Error: "e"}, "out"},
		{transcript.Tool{Status: event.ToolError, Error: "boom"}, "error: boom"},
		{transcript.Tool{Status: event.ToolTimeout}, "timeout"},
	}
	for _, tt := range tests {
		if got := transcript.ResultText(&tt.tool); got != tt.want {
			t.Errorf("ResultText(%+v) = %q, want %q", tt.tool, got, tt.want)
		}
	}
}

func TestHistoryAppliesLatestCompaction(t *testing.T) {
	j := newJournal().
		user("r1", "m1", "first").
		text("r1", "t1", "s1", "one").
		user("r2", "m2", "second").
		text("r2", "t2", "s2", "two").
		add("r3", event.ContextCompacted, event.ContextCompactedPayload{Reason: "auto", Summary: "S1", Covered: 2}).
		user("r3", "m3", "third").
		text("r3", "t3", "s3", "three").
		add("r4", event.ContextCompacted, event.ContextCompactedPayload{Reason: "manual", Summary: "S2", Covered: 4}).
		user("r4", "m4", "fourth")
	items := transcript.Fold(j.evs)
	if got := transcript.Covered(items); got != 4 {
		t.Fatalf("Covered = %d", got)
	}
	msgs, pending := transcript.History(items)
	want := []provider.Message{transcript.SummaryMessage("S2"), userMsg("third"),
		{Role: provider.RoleAssistant, Text: "three"}, userMsg("fourth")}
	if !reflect.DeepEqual(msgs, want) || pending != nil {
		t.Fatalf("History =\n%s\nwant\n%s", mustJSON(msgs), mustJSON(want))
	}
	// People still see everything, with a marker where the model's view
	// was summarised.
	if ks := kinds(items); len(ks) != 9 || ks[4] != transcript.KindCompaction {
		t.Errorf("items = %v", ks)
	}
}
