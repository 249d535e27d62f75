package transcript_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/transcript"
)

// journal builds events the way the store would hand them back: ascending
// IDs, per-run seqs, marshalled payloads.
type journal struct {
	evs  []event.Event
	seqs map[string]int64
	ts   time.Time
}

func newJournal() *journal {
	return &journal{seqs: map[string]int64{}, ts: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (j *journal) add(runID string, typ event.Type, payload any) *journal {
	var raw json.RawMessage
	switch p := payload.(type) {
	case string: // a raw payload, possibly not JSON at all
		raw = json.RawMessage(p)
	default:
		b, err := json.Marshal(p)
		if err != nil {
			panic(err)
		}
		raw = b
	}
	j.seqs[runID]++
	j.ts = j.ts.Add(time.Second)
	j.evs = append(j.evs, event.Event{
		ID: int64(len(j.evs) + 1), Seq: j.seqs[runID], RunID: runID, SessionID: "ses_1",
		Type: typ, TS: event.Time{Time: j.ts}, Terminal: event.IsTerminal(typ), Payload: raw,
	})
	return j
}

func (j *journal) user(runID, msgID, text string) *journal {
	return j.add(runID, event.MessageUser, event.MessageUserPayload{MessageID: msgID, Content: text})
}

func (j *journal) text(runID, turnID, segID string, frags ...string) *journal {
	all := ""
	for _, f := range frags {
		all += f
		j.add(runID, event.MessageDelta, event.DeltaPayload{ID: segID, TurnID: turnID, Delta: f})
	}
	return j.add(runID, event.MessageDone, event.DonePayload{ID: segID, TurnID: turnID, Text: all})
}

func (j *journal) toolStarted(runID, turnID, callID, name, args string) *journal {
	return j.add(runID, event.ToolStarted, event.ToolStartedPayload{ToolCallID: callID, Name: name,
		Label: name, Args: json.RawMessage(args), TurnID: turnID})
}

func (j *journal) executing(runID, callID string) *journal {
	return j.add(runID, event.ToolUpdated, event.ToolUpdatedPayload{ToolCallID: callID, Phase: "executing"})
}

func (j *journal) toolDone(runID, callID, name, status, output, errText string) *journal {
	return j.add(runID, event.ToolDone, event.ToolDonePayload{ToolCallID: callID, Name: name, Status: status,
		Output: output, Error: errText, DurationMS: 3})
}

// realistic is one run: a question, reasoning, an answer, an approved
// command with streamed output, then the run fails.
func realistic() *journal {
	j := newJournal()
	j.add("run_1", event.RunQueued, event.RunQueuedPayload{Input: "list it"})                                                 // 1
	j.user("run_1", "msg_u", "list it")                                                                                       // 2
	j.add("run_1", event.RunStarted, event.RunStartedPayload{RunnerID: "rn", Attempt: 1})                                     // 3
	j.add("run_1", event.TurnStarted, event.TurnStartedPayload{TurnID: "trn_1"})                                              // 4
	j.add("run_1", event.ReasoningDelta, event.DeltaPayload{ID: "rsn_1", TurnID: "trn_1", Delta: "Think"})                    // 5
	j.add("run_1", event.ReasoningDelta, event.DeltaPayload{ID: "rsn_1", TurnID: "trn_1", Delta: "ing."})                     // 6
	j.add("run_1", event.ReasoningDone, event.DonePayload{ID: "rsn_1", TurnID: "trn_1", Text: "Thinking.", Signature: "sig"}) // 7
	j.add("run_1", event.MessageDelta, event.DeltaPayload{ID: "msg_a", TurnID: "trn_1", Delta: "Let me "})                    // 8
	j.add("run_1", event.MessageDelta, event.DeltaPayload{ID: "msg_a", TurnID: "trn_1", Delta: "look."})                      // 9
	j.add("run_1", event.MessageDone, event.DonePayload{ID: "msg_a", TurnID: "trn_1", Text: "Let me look."})                  // 10
	j.add("run_1", event.TurnEnded, event.TurnEndedPayload{TurnID: "trn_1", StopReason: "tool_use"})                          // 11
	j.toolStarted("run_1", "trn_1", "call_1", "run_command", `{"command":"ls"}`)                                              // 12
	j.add("run_1", event.ApprovalRequested, event.ApprovalRequestedPayload{RequestID: "req_1", ToolCallID: "call_1",
		Tool: "run_command", Action: "$ ls", Choices: []string{"once", "deny"}}) // 13
	j.add("run_1", event.ApprovalResolved, event.ResolvedPayload{RequestID: "req_1", Status: "resolved", Choice: "once"}) // 14
	j.executing("run_1", "call_1")                                                                                        // 15
	j.add("run_1", event.ToolUpdated, event.ToolUpdatedPayload{ToolCallID: "call_1", Stream: "stdout", Output: "a.go\n"}) // 16
	j.add("run_1", event.ToolUpdated, event.ToolUpdatedPayload{ToolCallID: "call_1", Stream: "stdout", Output: "b.go\n"}) // 17
	j.add("run_1", event.ToolDone, event.ToolDonePayload{ToolCallID: "call_1", Name: "run_command", Status: event.ToolOK,
		DurationMS: 42, Output: "a.go\nb.go", Result: json.RawMessage(`{"exit_code":0}`)}) // 18
	j.add("run_1", event.RunDone, event.RunDonePayload{Status: "failed",
		Error: &event.ErrorInfo{Code: "provider_rate_limited", Message: "slow down"}}) // 19
	return j
}

func find(items []transcript.Item, id string) *transcript.Item {
	for i := range items {
		if items[i].ID == id {
			return &items[i]
		}
	}
	return nil
}

func kinds(items []transcript.Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Kind
	}
	return out
}

func TestFoldRealisticSequence(t *testing.T) {
	evs := realistic().evs
	items := transcript.Fold(evs)

	want := []string{transcript.KindUser, transcript.KindReasoning, transcript.KindAssistant, transcript.KindTool, transcript.KindRunEnd}
	if fmt.Sprint(kinds(items)) != fmt.Sprint(want) {
		t.Fatalf("kinds = %v, want %v", kinds(items), want)
	}
	u, r, a, tl, end := items[0], items[1], items[2], items[3], items[4]

	if u.ID != "msg_u" || u.Text != "list it" || u.RunID != "run_1" || u.LastEventID != 2 || !u.CreatedAt.Equal(evs[1].TS.Time) {
		t.Errorf("user item = %+v", u)
	}
	if r.ID != "rsn_1" || r.TurnID != "trn_1" || r.Text != "Thinking." || r.Signature != "sig" || r.Open || r.Partial || r.LastEventID != 7 {
		t.Errorf("reasoning item = %+v", r)
	}
	if !r.CreatedAt.Equal(evs[4].TS.Time) {
		t.Errorf("reasoning created at %v, want the first delta's time %v", r.CreatedAt, evs[4].TS)
	}
	if a.ID != "msg_a" || a.TurnID != "trn_1" || a.Text != "Let me look." || a.Open || a.LastEventID != 10 {
		t.Errorf("assistant item = %+v", a)
	}
	if tl.ID != "call_1" || tl.TurnID != "trn_1" || tl.Tool == nil || tl.LastEventID != 18 {
		t.Fatalf("tool item = %+v", tl)
	}
	tool := tl.Tool
	if tool.Name != "run_command" || tool.Status != event.ToolOK || tool.Output != "a.go\nb.go" || tool.DurationMS != 42 ||
		tool.RequestID != "req_1" || string(tool.Result) != `{"exit_code":0}` || string(tool.Args) != `{"command":"ls"}` || !tool.Done() {
		t.Errorf("tool = %+v", *tool)
	}
	if end.ID != "end_run_1" || end.Status != "failed" || end.Error == nil || end.Error.Code != "provider_rate_limited" || end.LastEventID != 19 {
		t.Errorf("run end item = %+v", end)
	}
}

// TestFoldPrefixes folds growing prefixes of the realistic journal: what a
// client sees mid-stream, and what Finish sees after a crash.
func TestFoldPrefixes(t *testing.T) {
	evs := realistic().evs
	tests := []struct {
		name  string
		n     int // events folded
		check func(t *testing.T, items []transcript.Item)
	}{
		{"open reasoning carries streamed text", 6, func(t *testing.T, items []transcript.Item) {
			r := find(items, "rsn_1")
			if r == nil || !r.Open || r.Text != "Thinking." || r.Kind != transcript.KindReasoning {
				t.Fatalf("reasoning = %+v", r)
			}
		}},
		{"open text carries streamed text", 9, func(t *testing.T, items []transcript.Item) {
			a := find(items, "msg_a")
			if a == nil || !a.Open || a.Text != "Let me look." || a.LastEventID != 9 {
				t.Fatalf("assistant = %+v", a)
			}
			if r := find(items, "rsn_1"); r.Open {
				t.Fatalf("reasoning still open: %+v", r)
			}
		}},
		{"first delta only", 8, func(t *testing.T, items []transcript.Item) {
			if a := find(items, "msg_a"); a == nil || !a.Open || a.Text != "Let me " {
				t.Fatalf("assistant = %+v", a)
			}
		}},
		{"tool announced is pending", 12, toolStatus(transcript.ToolPending, "")},
		{"approval requested", 13, toolStatus(transcript.ToolAwaitingApproval, "req_1")},
		{"approval resolved back to pending", 14, toolStatus(transcript.ToolPending, "req_1")},
		{"executing is running", 15, toolStatus(transcript.ToolRunning, "req_1")},
		{"streamed output accumulates", 17, func(t *testing.T, items []transcript.Item) {
			toolStatus(transcript.ToolRunning, "req_1")(t, items)
			if out := find(items, "call_1").Tool.Output; out != "a.go\nb.go\n" {
				t.Fatalf("output = %q", out)
			}
		}},
		{"done", 18, toolStatus(event.ToolOK, "req_1")},
		{"no run end before run.done", 18, func(t *testing.T, items []transcript.Item) {
			if find(items, "end_run_1") != nil {
				t.Fatal("run_end item before run.done")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.check(t, transcript.Fold(evs[:tt.n]))
		})
	}
}

func toolStatus(status, requestID string) func(*testing.T, []transcript.Item) {
	return func(t *testing.T, items []transcript.Item) {
		t.Helper()
		it := find(items, "call_1")
		if it == nil || it.Tool == nil {
			t.Fatalf("no tool item in %+v", items)
		}
		if it.Tool.Status != status || it.Tool.RequestID != requestID {
			t.Fatalf("tool status %q request %q, want %q %q", it.Tool.Status, it.Tool.RequestID, status, requestID)
		}
	}
}

func TestFoldClarifyAndRunEnd(t *testing.T) {
	tests := []struct {
		name       string
		doneStatus string
		wantEnd    bool
	}{
		{"completed has no run_end", "completed", false},
		{"failed", "failed", true},
		{"cancelled", "cancelled", true},
		{"expired", "expired", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := newJournal().user("run_1", "msg_u", "q")
			j.toolStarted("run_1", "trn_1", "call_c", "clarify", `{"question":"which?"}`)
			j.add("run_1", event.ClarifyRequested, event.ClarifyRequestedPayload{RequestID: "req_c", ToolCallID: "call_c", Question: "which?"})
			if it := find(transcript.Fold(j.evs), "call_c"); it.Tool.Status != transcript.ToolAwaitingClarify || it.Tool.RequestID != "req_c" {
				t.Fatalf("tool after clarify.requested = %+v", *it.Tool)
			}
			j.add("run_1", event.ClarifyResolved, event.ResolvedPayload{RequestID: "req_c", Status: "resolved", Answer: "a"})
			j.toolDone("run_1", "call_c", "clarify", event.ToolOK, "The user answered: a", "")
			j.add("run_1", event.RunDone, event.RunDonePayload{Status: tt.doneStatus})
			items := transcript.Fold(j.evs)
			if it := find(items, "call_c"); it.Tool.Status != event.ToolOK {
				t.Fatalf("tool = %+v", *it.Tool)
			}
			end := find(items, "end_run_1")
			if (end != nil) != tt.wantEnd {
				t.Fatalf("run_end present = %v, want %v (items %+v)", end != nil, tt.wantEnd, items)
			}
			if end != nil && (end.Kind != transcript.KindRunEnd || end.Status != tt.doneStatus || end.RunID != "run_1") {
				t.Fatalf("run_end = %+v", end)
			}
		})
	}
}

// TestFoldIgnoresBadEvents: the transcript is a view; nothing in the journal
// may make it panic, and what cannot be understood is left out.
func TestFoldIgnoresBadEvents(t *testing.T) {
	base := func() *journal {
		j := newJournal().user("run_1", "msg_u", "hi")
		j.add("run_1", event.MessageDelta, event.DeltaPayload{ID: "msg_a", TurnID: "trn_1", Delta: "ok"})
		return j.toolStarted("run_1", "trn_1", "call_1", "list_dir", `{}`)
	}
	// Each is undecodable for every payload shape: not JSON, not an object,
	// or the identifying field of every shape with the wrong type.
	garbage := []string{`not json`, `{`, `[1,2]`, `"str"`, ``,
		`{"id":5,"message_id":5,"tool_call_id":5,"request_id":5,"status":5}`}
	types := []event.Type{event.MessageUser, event.MessageDelta, event.MessageDone, event.ReasoningDelta,
		event.ReasoningDone, event.ToolStarted, event.ToolUpdated, event.ToolDone, event.ApprovalRequested,
		event.ApprovalResolved, event.ClarifyRequested, event.ClarifyResolved, event.RunDone, event.Type("made.up")}
	for _, typ := range types {
		for i, g := range garbage {
			t.Run(fmt.Sprintf("%s/%d", typ, i), func(t *testing.T) {
				j := base().add("run_1", typ, g)
				items := transcript.Fold(j.evs)
				if fmt.Sprint(kinds(items)) != fmt.Sprint([]string{transcript.KindUser, transcript.KindAssistant, transcript.KindTool}) {
					t.Fatalf("items = %+v", items)
				}
				if a := find(items, "msg_a"); !a.Open || a.Text != "ok" {
					t.Fatalf("assistant = %+v", a)
				}
				if tl := find(items, "call_1"); tl.Tool.Status != transcript.ToolPending {
					t.Fatalf("tool = %+v", *tl.Tool)
				}
			})
		}
	}
}

// TestFoldInconsistentJournal covers decodable events that do not fit what
// came before: they are ignored without panicking.
func TestFoldInconsistentJournal(t *testing.T) {
	tests := []struct {
		name  string
		build func(j *journal)
		check func(t *testing.T, items []transcript.Item)
	}{
		{"tool.updated for an unknown call", func(j *journal) {
			j.executing("run_1", "call_x")
		}, nil},
		{"tool.done for an unknown call", func(j *journal) {
			j.toolDone("run_1", "call_x", "list_dir", event.ToolOK, "x", "")
		}, nil},
		{"approval.resolved for an unknown request", func(j *journal) {
			j.add("run_1", event.ApprovalResolved, event.ResolvedPayload{RequestID: "req_x", Status: "resolved"})
		}, nil},
		{"approval.requested for an unknown call", func(j *journal) {
			j.add("run_1", event.ApprovalRequested, event.ApprovalRequestedPayload{RequestID: "req_x", ToolCallID: "call_x"})
		}, nil},
		{"delta after done keeps the final text", func(j *journal) {
			j.text("run_1", "trn_1", "msg_b", "final")
			j.add("run_1", event.MessageDelta, event.DeltaPayload{ID: "msg_b", TurnID: "trn_1", Delta: " late"})
		}, func(t *testing.T, items []transcript.Item) {
			if b := find(items, "msg_b"); b == nil || b.Open || b.Text != "final" {
				t.Fatalf("segment = %+v", b)
			}
		}},
		{"resolved request id naming a text segment", func(j *journal) {
			j.text("run_1", "trn_1", "msg_b", "text")
			j.add("run_1", event.ApprovalResolved, event.ResolvedPayload{RequestID: "msg_b", Status: "resolved"})
		}, func(t *testing.T, items []transcript.Item) {
			if b := find(items, "msg_b"); b == nil || b.Text != "text" {
				t.Fatalf("segment = %+v", b)
			}
		}},
		{"delta whose id is a tool call", func(j *journal) {
			j.add("run_1", event.MessageDelta, event.DeltaPayload{ID: "call_1", TurnID: "trn_1", Delta: "x"})
		}, nil},
		{"auto_approved naming an unknown call, a finished call, or no call", func(j *journal) {
			j.toolDone("run_1", "call_1", "list_dir", event.ToolOK, "out", "")
			for _, d := range []map[string]any{{"tool_call_id": "call_x"}, {"tool_call_id": "call_1", "pattern": "ls"}, {"tool_call_id": 5}, nil} {
				j.add("run_1", event.Diagnostic, event.DiagnosticPayload{Level: "info", Code: "auto_approved", Details: d})
			}
		}, func(t *testing.T, items []transcript.Item) {
			if tl := find(items, "call_1").Tool; tl.Approval != nil {
				t.Fatalf("tool = %+v", *tl)
			}
		}},
		{"updates after tool.done change nothing", func(j *journal) {
			j.toolDone("run_1", "call_1", "list_dir", event.ToolOK, "out", "")
			j.executing("run_1", "call_1")
			j.add("run_1", event.ToolUpdated, event.ToolUpdatedPayload{ToolCallID: "call_1", Output: "more"})
			j.add("run_1", event.ApprovalRequested, event.ApprovalRequestedPayload{RequestID: "req_late", ToolCallID: "call_1"})
		}, func(t *testing.T, items []transcript.Item) {
			tl := find(items, "call_1").Tool
			if tl.Status != event.ToolOK || tl.Output != "out" || tl.RequestID != "" {
				t.Fatalf("tool = %+v", *tl)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := newJournal().user("run_1", "msg_u", "hi")
			j.toolStarted("run_1", "trn_1", "call_1", "list_dir", `{}`)
			tt.build(j)
			items := transcript.Fold(j.evs)
			if tt.check != nil {
				tt.check(t, items)
			}
			// Items must stay usable for History too.
			transcript.History(items)
		})
	}
}

// TestItemsAreCopies: a caller mutating Items must not change the builder.
func TestItemsAreCopies(t *testing.T) {
	b := transcript.New()
	for _, e := range realistic().evs[:12] {
		b.Add(e)
	}
	items := b.Items()
	items[3].Tool.Status = "tampered"
	items[2].Text = "tampered"
	again := b.Items()
	if again[3].Tool.Status != transcript.ToolPending || again[2].Text != "Let me look." {
		t.Fatalf("builder changed through Items: %+v %+v", again[2], *again[3].Tool)
	}
}

func TestFoldRuns(t *testing.T) {
	// run_2's message was queued while run_1 was still streaming; run_3
	// came later. Journal order interleaves them.
	j := newJournal()
	j.user("run_1", "msg_u1", "first")
	j.add("run_1", event.MessageDelta, event.DeltaPayload{ID: "msg_a1", TurnID: "trn_1", Delta: "answer "})
	j.add("run_2", event.RunQueued, event.RunQueuedPayload{Input: "second"})
	j.user("run_2", "msg_u2", "second")
	j.add("run_1", event.MessageDelta, event.DeltaPayload{ID: "msg_a1", TurnID: "trn_1", Delta: "one"})
	j.add("run_1", event.MessageDone, event.DonePayload{ID: "msg_a1", TurnID: "trn_1", Text: "answer one"})
	j.add("run_1", event.RunDone, event.RunDonePayload{Status: "completed"})
	j.text("run_2", "trn_2", "msg_a2", "answer ", "two")
	j.add("run_other", event.MessageUser, event.MessageUserPayload{MessageID: "msg_stray", Content: "not listed"})
	j.user("run_3", "msg_u3", "third")
	evs := j.evs
	runs := []string{"run_1", "run_2", "run_3"}

	tests := []struct {
		name  string
		until string
		want  []string
	}{
		{"until the second run", "run_2", []string{"msg_u1", "msg_a1", "msg_u2", "msg_a2"}},
		{"until the first run", "run_1", []string{"msg_u1", "msg_a1"}},
		{"every run", "", []string{"msg_u1", "msg_a1", "msg_u2", "msg_a2", "msg_u3"}},
		{"until the last run", "run_3", []string{"msg_u1", "msg_a1", "msg_u2", "msg_a2", "msg_u3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items := transcript.FoldRuns(evs, runs, tt.until)
			var ids []string
			for _, it := range items {
				ids = append(ids, it.ID)
			}
			if fmt.Sprint(ids) != fmt.Sprint(tt.want) {
				t.Fatalf("ids = %v, want %v", ids, tt.want)
			}
			if a := find(items, "msg_a1"); a.Text != "answer one" || a.Open {
				t.Fatalf("run_1 answer = %+v", a)
			}
		})
	}
	// The fold is what the runner turns into history: the queued message
	// follows the complete first answer.
	msgs, pending := transcript.History(transcript.FoldRuns(evs, runs, "run_2"))
	if len(pending) != 0 || len(msgs) != 4 || msgs[1].Text != "answer one" || msgs[2].Text != "second" || msgs[3].Text != "answer two" {
		t.Fatalf("history = %+v pending %+v", msgs, pending)
	}
}

func TestFoldWithdrawsQueuedRunsCancelledBeforeStart(t *testing.T) {
	j := newJournal()
	j.add("run_1", event.RunQueued, event.RunQueuedPayload{Input: "first"})
	j.user("run_1", "msg_u1", "first")
	j.add("run_1", event.RunStarted, event.RunStartedPayload{RunnerID: "rn", Attempt: 1})
	j.add("run_2", event.RunQueued, event.RunQueuedPayload{Input: "removed from the queue"})
	j.user("run_2", "msg_u2", "removed from the queue")
	j.add("run_2", event.RunDone, event.RunDonePayload{Status: "cancelled"}) // never started
	j.text("run_1", "trn_1", "msg_a1", "answer")
	j.add("run_1", event.RunDone, event.RunDonePayload{Status: "cancelled"}) // started: stays, with its end
	items := transcript.Fold(j.evs)
	var got []string
	for _, it := range items {
		got = append(got, it.ID)
	}
	if want := []string{"msg_u1", "msg_a1", "end_run_1"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("items %v, want %v", got, want)
	}
	msgs, _ := transcript.History(items)
	for _, m := range msgs {
		if strings.Contains(m.Text, "removed") {
			t.Fatalf("the model would see the withdrawn message: %+v", msgs)
		}
	}
}

func TestFoldNotices(t *testing.T) {
	j := newJournal().user("run_1", "msg_u", "q")
	j.add("run_1", event.Diagnostic, event.DiagnosticPayload{Level: "info", Code: "auto_approved", Message: "ls ran without asking"})
	j.add("run_1", event.ContextWarning, event.ContextWarningPayload{EstimatedTokens: 105000, ContextWindow: 128000, Ratio: 0.8203, Threshold: 0.8})
	j.text("run_1", "trn_1", "msg_a", "answer")
	items := transcript.Fold(j.evs)
	want := []struct{ id, kind, level, code, text string }{
		{"msg_u", transcript.KindUser, "", "", "q"},
		{"ntc_2", transcript.KindNotice, "info", "auto_approved", "ls ran without asking"},
		{"ntc_3", transcript.KindNotice, "warning", "context_warning",
			"The conversation is using about 82% of the model's context window (105000 of 128000 tokens). Older messages may be compacted."},
		{"msg_a", transcript.KindAssistant, "", "", "answer"},
	}
	if len(items) != len(want) {
		t.Fatalf("%d items: %+v", len(items), items)
	}
	for i, w := range want {
		it := items[i]
		if it.ID != w.id || it.Kind != w.kind || it.Level != w.level || it.Code != w.code || it.Text != w.text {
			t.Errorf("item %d = %+v, want %+v", i, it, w)
		}
	}
	// Notices are for people: the model's history has the question and
	// the answer only.
	if msgs, _ := transcript.History(items); len(msgs) != 2 {
		t.Fatalf("history = %+v", msgs)
	}
}

// A user message is marked queued until a runner takes its run, and never
// once the run has ended (a run cancelled after it started keeps its
// message, unmarked).
func TestQueuedUserMessage(t *testing.T) {
	queuedOf := func(evs []event.Event) map[string]bool {
		out := map[string]bool{}
		for _, it := range transcript.Fold(evs) {
			if it.Kind == transcript.KindUser {
				out[it.ID] = it.Queued
			}
		}
		return out
	}
	tests := []struct {
		name string
		j    *journal
		want map[string]bool
	}{
		{"waiting for a runner", newJournal().user("r1", "m1", "hi"), map[string]bool{"m1": true}},
		{"taken by a runner", newJournal().user("r1", "m1", "hi").add("r1", event.RunStarted, event.RunStartedPayload{}), map[string]bool{"m1": false}},
		{"one taken, one waiting", newJournal().user("r1", "m1", "hi").add("r1", event.RunStarted, event.RunStartedPayload{}).user("r2", "m2", "next"),
			map[string]bool{"m1": false, "m2": true}},
		{"failed before a runner took it", newJournal().user("r1", "m1", "hi").add("r1", event.RunDone, event.RunDonePayload{Status: "failed"}), map[string]bool{"m1": false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := queuedOf(tc.j.evs)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("queued = %v, want %v", got, tc.want)
			}
		})
	}
}

// Text cut short is superseded when its run answered again after it (a
// resumed run regenerates its answer); cut text that is the run's last word
// stays as it is.
func TestSupersededCutText(t *testing.T) {
	j := newJournal().user("r1", "m1", "hi")
	j.add("r1", event.MessageDelta, event.DeltaPayload{ID: "s1", TurnID: "t1", Delta: "w001 w0"})
	j.add("r1", event.MessageDone, event.DonePayload{ID: "s1", TurnID: "t1", Text: "w001 w0", Partial: true})
	j.add("r2", event.MessageDone, event.DonePayload{ID: "x1", TurnID: "t9", Text: "other run, cut", Partial: true})
	before := transcript.Fold(j.evs)
	for _, it := range before {
		if it.Superseded {
			t.Fatalf("%s superseded before any later answer", it.ID)
		}
	}
	j.text("r1", "t2", "s2", "w001 w002")
	got := map[string]bool{}
	for _, it := range transcript.Fold(j.evs) {
		if it.Kind == transcript.KindAssistant {
			got[it.ID] = it.Superseded
		}
	}
	if want := map[string]bool{"s1": true, "s2": false, "x1": false}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("superseded = %v, want %v", got, want)
	}
}

// TestFoldApprovalBy: a settled approval names who answered it, except the
// local user of an open server (nobody else to tell apart) and nobody.
func TestFoldApprovalBy(t *testing.T) {
	for _, tc := range []struct {
		name string
		by   *event.Actor
		want string
	}{
		{"a person", &event.Actor{Kind: "user", Name: "ann", UserID: "usr_1"}, "ann"},
		{"a person's token", &event.Actor{Kind: "token", Name: "ann", UserID: "usr_1", TokenID: "tok_1"}, "ann"},
		{"the server token", &event.Actor{Kind: "server_token", Name: "server token"}, "server token"},
		{"the local user", &event.Actor{Kind: "local", Name: "local"}, ""},
		{"nobody (an older journal)", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := newJournal()
			j.toolStarted("run_1", "trn_1", "call_1", "run_command", `{"command":"ls"}`)
			j.add("run_1", event.ApprovalRequested, event.ApprovalRequestedPayload{RequestID: "req_1", ToolCallID: "call_1",
				Tool: "run_command", Action: "$ ls", Choices: []string{"once", "deny"}})
			j.add("run_1", event.ApprovalResolved, event.ResolvedPayload{RequestID: "req_1", Status: "resolved", Choice: "once", By: tc.by})
			tl := find(transcript.Fold(j.evs), "call_1")
			if tl == nil || tl.Tool == nil || tl.Tool.Approval == nil {
				t.Fatalf("no settled approval: %+v", tl)
			}
			if a := tl.Tool.Approval; a.Outcome != "once" || a.By != tc.want {
				t.Errorf("approval = %+v, want once by %q", *a, tc.want)
			}
		})
	}
}

// TestFoldMessageBy: a user message names who sent it and a cancelled
// run who stopped it, except the local user.
func TestFoldMessageBy(t *testing.T) {
	for _, tc := range []struct {
		name string
		by   *event.Actor
		want string
	}{
		{"a person", &event.Actor{Kind: "user", Name: "otto", UserID: "usr_2"}, "otto"},
		{"the local user", &event.Actor{Kind: "local", Name: "local"}, ""},
		{"nobody (an older journal)", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := newJournal()
			j.add("run_1", event.MessageUser, event.MessageUserPayload{MessageID: "msg_u", Content: "hi", By: tc.by})
			// Started: a run cancelled while queued leaves no items.
			j.add("run_1", event.RunStarted, event.RunStartedPayload{RunnerID: "rn", Attempt: 1})
			j.add("run_1", event.RunDone, event.RunDonePayload{Status: "cancelled", By: tc.by})
			items := transcript.Fold(j.evs)
			u := find(items, "msg_u")
			if u == nil || u.Kind != transcript.KindUser || u.By != tc.want {
				t.Fatalf("user item = %+v, want by %q", u, tc.want)
			}
			end := find(items, "end_run_1")
			if end == nil || end.Kind != transcript.KindRunEnd || end.By != tc.want {
				t.Fatalf("run end = %+v, want by %q", end, tc.want)
			}
		})
	}
}
