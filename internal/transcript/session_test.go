package transcript_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/transcript"
)

// session is a journal of two runs with everything the views time or
// summarise: reasoning, turns, approvals settled every way, waits, todos,
// context figures, a compaction, and a second run cancelled mid-call.
func session() *journal {
	j := newJournal()
	j.add("run_1", event.RunQueued, event.RunQueuedPayload{Input: "go"})
	j.user("run_1", "msg_u1", "go")
	j.add("run_1", event.RunStarted, event.RunStartedPayload{RunnerID: "rn", Attempt: 1, ContextWindow: 1000})
	j.add("run_1", event.TurnStarted, event.TurnStartedPayload{TurnID: "trn_1"})
	j.add("run_1", event.ReasoningDelta, event.DeltaPayload{ID: "rsn_1", TurnID: "trn_1", Delta: "hm"})
	j.add("run_1", event.ReasoningDone, event.DonePayload{ID: "rsn_1", TurnID: "trn_1", Text: "hm", DurationMS: 318})
	j.text("run_1", "trn_1", "msg_a1", "Let me")
	j.add("run_1", event.TurnEnded, event.TurnEndedPayload{TurnID: "trn_1", StopReason: "tool_use", DurationMS: 700})
	j.add("run_1", event.Usage, event.UsagePayload{TurnID: "trn_1", Turn: event.UsageTotals{InputTokens: 300, OutputTokens: 20}})
	for _, c := range []string{"c_once", "c_rule", "c_deny", "c_expired", "c_todo"} {
		j.toolStarted("run_1", "trn_1", c, "run_command", `{}`)
	}
	j.add("run_1", event.ApprovalRequested, event.ApprovalRequestedPayload{RequestID: "req_1", ToolCallID: "c_once"})
	j.add("run_1", event.ApprovalResolved, event.ResolvedPayload{RequestID: "req_1", Status: "resolved", Choice: "once"})
	j.executing("run_1", "c_once")
	j.add("run_1", event.ToolDone, event.ToolDonePayload{ToolCallID: "c_once", Name: "run_command", Status: event.ToolOK, DurationMS: 40, WaitMS: 12000})
	j.add("run_1", event.Diagnostic, event.DiagnosticPayload{Level: "info", Code: "auto_approved", Message: "Approved by a remembered rule: $ ls",
		Details: map[string]any{"tool_call_id": "c_rule", "rule_id": "rul_1", "pattern": "ls"}})
	j.executing("run_1", "c_rule")
	j.add("run_1", event.ToolDone, event.ToolDonePayload{ToolCallID: "c_rule", Name: "run_command", Status: event.ToolOK, DurationMS: 5})
	j.add("run_1", event.ApprovalRequested, event.ApprovalRequestedPayload{RequestID: "req_2", ToolCallID: "c_deny"})
	j.add("run_1", event.ApprovalResolved, event.ResolvedPayload{RequestID: "req_2", Status: "resolved", Choice: "deny"})
	j.add("run_1", event.ToolDone, event.ToolDonePayload{ToolCallID: "c_deny", Name: "run_command", Status: event.ToolDenied, WaitMS: 3000})
	j.add("run_1", event.ApprovalRequested, event.ApprovalRequestedPayload{RequestID: "req_3", ToolCallID: "c_expired"})
	j.add("run_1", event.ApprovalResolved, event.ResolvedPayload{RequestID: "req_3", Status: "expired"})
	j.add("run_1", event.ToolDone, event.ToolDonePayload{ToolCallID: "c_expired", Name: "run_command", Status: event.ToolDenied, WaitMS: 60000})
	j.add("run_1", event.TodoUpdated, event.TodoPayload{ToolCallID: "c_todo", Items: []event.TodoItem{{ID: "1", Content: "old", Status: "pending"}}})
	j.add("run_1", event.TodoUpdated, event.TodoPayload{ToolCallID: "c_todo", Items: []event.TodoItem{{ID: "1", Content: "Read", Status: "done"}, {ID: "2", Content: "Fix", Status: "in_progress"}}})
	j.toolDone("run_1", "c_todo", "todo", event.ToolOK, "ok", "")
	j.add("run_1", event.TurnStarted, event.TurnStartedPayload{TurnID: "trn_2", Index: 1})
	j.text("run_1", "trn_2", "msg_a2", "Done.")
	j.add("run_1", event.TurnEnded, event.TurnEndedPayload{TurnID: "trn_2", StopReason: "end_turn", DurationMS: 90})
	j.add("run_1", event.Usage, event.UsagePayload{TurnID: "trn_2", Turn: event.UsageTotals{InputTokens: 420, OutputTokens: 9}})
	j.add("run_1", event.RunDone, event.RunDonePayload{Status: "completed"})

	j.add("run_2", event.RunQueued, event.RunQueuedPayload{Kind: "compact"})
	j.add("run_2", event.RunStarted, event.RunStartedPayload{RunnerID: "rn", Attempt: 1, ContextWindow: 1000})
	j.add("run_2", event.Usage, event.UsagePayload{TurnID: "compaction", Turn: event.UsageTotals{InputTokens: 900}})
	j.add("run_2", event.ContextCompacted, event.ContextCompactedPayload{Reason: "manual", TokensBefore: 430, TokensAfter: 120, Covered: 2})
	j.add("run_2", event.RunDone, event.RunDonePayload{Status: "completed"})

	// A run cancelled while the model reasoned: the closing events carry
	// what the closer measured; the turn lasted until the run ended.
	j.add("run_3", event.RunQueued, event.RunQueuedPayload{Input: "more"})
	j.user("run_3", "msg_u3", "more")
	j.add("run_3", event.RunStarted, event.RunStartedPayload{RunnerID: "rn", Attempt: 1})
	j.add("run_3", event.TurnStarted, event.TurnStartedPayload{TurnID: "trn_3"})
	j.add("run_3", event.ReasoningDelta, event.DeltaPayload{ID: "rsn_3", TurnID: "trn_3", Delta: "long"})
	j.add("run_3", event.ReasoningDone, event.DonePayload{ID: "rsn_3", TurnID: "trn_3", Text: "long", Partial: true, DurationMS: 1500})
	j.add("run_3", event.RunDone, event.RunDonePayload{Status: "cancelled"})
	return j
}

var sessionRuns = []string{"run_1", "run_2", "run_3"}

func TestFoldSessionState(t *testing.T) {
	j := session()
	snap := transcript.FoldSession(j.evs, sessionRuns)
	ts := func(runID string, typ event.Type, n int) event.Time { return nth(j.evs, runID, typ, n).TS }

	if r := find(snap.Items, "rsn_1"); r == nil || r.DurationMS != 318 {
		t.Errorf("reasoning = %+v, want duration 318", r)
	}
	if r := find(snap.Items, "rsn_3"); r == nil || r.DurationMS != 1500 || !r.Partial {
		t.Errorf("cancelled reasoning = %+v", r)
	}
	tools := map[string]struct {
		approval  *transcript.Approval
		dur, wait int64
	}{
		"c_once":    {&transcript.Approval{Outcome: transcript.ApprovalOnce}, 40, 12000},
		"c_rule":    {&transcript.Approval{Outcome: transcript.ApprovalRule, Pattern: "ls"}, 5, 0},
		"c_deny":    {&transcript.Approval{Outcome: transcript.ApprovalDeny}, 0, 3000},
		"c_expired": {&transcript.Approval{Outcome: transcript.ApprovalExpired}, 0, 60000},
		"c_todo":    {nil, 3, 0},
	}
	for id, want := range tools {
		it := find(snap.Items, id)
		if it == nil || it.Tool == nil {
			t.Fatalf("no tool %s", id)
		}
		if !reflect.DeepEqual(it.Tool.Approval, want.approval) || it.Tool.DurationMS != want.dur || it.Tool.WaitMS != want.wait {
			t.Errorf("%s: approval %+v duration %d wait %d, want %+v %d %d", id, it.Tool.Approval, it.Tool.DurationMS, it.Tool.WaitMS,
				want.approval, want.dur, want.wait)
		}
	}

	wantTodos := []event.TodoItem{{ID: "1", Content: "Read", Status: "done"}, {ID: "2", Content: "Fix", Status: "in_progress"}}
	if !reflect.DeepEqual(snap.Todos, wantTodos) {
		t.Errorf("todos = %+v", snap.Todos)
	}
	// After the compaction the meter shows the compacted size, not the
	// compaction call's own prompt.
	if snap.Context != (transcript.Context{Tokens: 120, Window: 1000}) {
		t.Errorf("context = %+v", snap.Context)
	}

	ptr := func(t event.Time) *event.Time { return &t }
	want := []transcript.RunActivity{
		{RunID: "run_1", StartedAt: ptr(ts("run_1", event.RunStarted, 0)), EndedAt: ptr(ts("run_1", event.RunDone, 0)), Steps: []transcript.Step{
			{Kind: transcript.StepTurn, ID: "trn_1", StartedAt: ts("run_1", event.TurnStarted, 0), State: transcript.StepDone, DurationMS: 700},
			{Kind: transcript.StepTurn, ID: "trn_2", StartedAt: ts("run_1", event.TurnStarted, 1), State: transcript.StepDone, DurationMS: 90},
		}},
		{RunID: "run_2", StartedAt: ptr(ts("run_2", event.RunStarted, 0)), EndedAt: ptr(ts("run_2", event.RunDone, 0)), Steps: []transcript.Step{}},
		{RunID: "run_3", StartedAt: ptr(ts("run_3", event.RunStarted, 0)), EndedAt: ptr(ts("run_3", event.RunDone, 0)), Steps: []transcript.Step{
			{Kind: transcript.StepTurn, ID: "trn_3", StartedAt: ts("run_3", event.TurnStarted, 0), State: transcript.StepCancelled, // cut by a cancel: neither done nor failed
				DurationMS: ts("run_3", event.RunDone, 0).Sub(ts("run_3", event.TurnStarted, 0).Time).Milliseconds()},
		}},
	}
	if !reflect.DeepEqual(snap.Activity, want) {
		t.Errorf("activity:\n got %s\nwant %s", mustJSON(snap.Activity), mustJSON(want))
	}
}

// nth returns the n-th (0-based) event of type typ in run runID.
func nth(evs []event.Event, runID string, typ event.Type, n int) event.Event {
	for _, e := range evs {
		if e.RunID == runID && e.Type == typ {
			if n == 0 {
				return e
			}
			n--
		}
	}
	panic("no such event: " + runID + " " + string(typ))
}

// withoutDeltas is what GET .../messages folds: finished runs without their
// streamed fragments.
func withoutDeltas(evs []event.Event) []event.Event {
	var out []event.Event
	for _, e := range evs {
		if e.Type != event.MessageDelta && e.Type != event.ReasoningDelta {
			out = append(out, e)
		}
	}
	return out
}

// shown is what the views show of an item: everything but the ids and
// times of the events that built it (a finished run's text is dated by its
// end when its fragments are left out, docs/API.md).
func shown(items []transcript.Item) []transcript.Item {
	out := make([]transcript.Item, len(items))
	for i, it := range items {
		it.LastEventID, it.CreatedAt = 0, event.Time{}
		out[i] = it
	}
	return out
}

// TestLiveFoldEqualsReloadFold: folding the journal event by event as it
// streams, and folding it after the runs finished the way a reload does,
// give the same transcript, durations, todos, context and activity.
func TestLiveFoldEqualsReloadFold(t *testing.T) {
	evs := session().evs
	b := transcript.New()
	for _, e := range evs {
		b.Add(e)
	}
	live := b.Snapshot()
	reload := transcript.FoldSession(withoutDeltas(evs), sessionRuns)
	if !reflect.DeepEqual(shown(live.Items), shown(reload.Items)) {
		t.Errorf("items:\n live   %s\n reload %s", mustJSON(shown(live.Items)), mustJSON(shown(reload.Items)))
	}
	live.Items, reload.Items = nil, nil
	if !reflect.DeepEqual(live, reload) {
		t.Errorf("state:\n live   %s\n reload %s", mustJSON(live), mustJSON(reload))
	}
}

// TestFoldOldJournal: journals written before durations were journaled
// still fold: reasoning seen streaming is timed from its first delta to its
// end, a tool's duration is what was journaled, turns keep turn.ended's.
func TestFoldOldJournal(t *testing.T) {
	j := newJournal().user("run_1", "msg_u", "q")
	j.add("run_1", event.RunStarted, event.RunStartedPayload{RunnerID: "rn", Attempt: 1})
	j.add("run_1", event.TurnStarted, event.TurnStartedPayload{TurnID: "trn_1"})
	j.add("run_1", event.ReasoningDelta, event.DeltaPayload{ID: "rsn_1", TurnID: "trn_1", Delta: "a"})
	j.add("run_1", event.ReasoningDelta, event.DeltaPayload{ID: "rsn_1", TurnID: "trn_1", Delta: "b"})
	j.add("run_1", event.ReasoningDone, event.DonePayload{ID: "rsn_1", TurnID: "trn_1", Text: "ab"})
	j.add("run_1", event.ReasoningDone, event.DonePayload{ID: "rsn_2", TurnID: "trn_1", Redacted: "xx"})
	j.add("run_1", event.TurnEnded, event.TurnEndedPayload{TurnID: "trn_1", StopReason: "tool_use", DurationMS: 5000})
	j.toolStarted("run_1", "trn_1", "c1", "run_command", `{}`)
	j.add("run_1", event.ApprovalRequested, event.ApprovalRequestedPayload{RequestID: "req_1", ToolCallID: "c1"})
	j.add("run_1", event.ApprovalResolved, event.ResolvedPayload{RequestID: "req_1", Status: "resolved", Choice: "session"})
	j.toolDone("run_1", "c1", "run_command", event.ToolOK, "ok", "")
	snap := transcript.FoldSession(j.evs, []string{"run_1"})
	if r := find(snap.Items, "rsn_1"); r.DurationMS != (2 * time.Second).Milliseconds() {
		t.Errorf("streamed reasoning duration = %d, want the 2s from its first delta", r.DurationMS)
	}
	if r := find(snap.Items, "rsn_2"); r.DurationMS != 0 {
		t.Errorf("reasoning that arrived whole has duration %d, want unknown", r.DurationMS)
	}
	if tl := find(snap.Items, "c1").Tool; tl.DurationMS != 3 || tl.WaitMS != 0 || tl.Approval == nil || tl.Approval.Outcome != "session" {
		t.Errorf("tool = %+v", *tl)
	}
	if len(snap.Activity) != 1 || len(snap.Activity[0].Steps) != 1 || snap.Activity[0].Steps[0].DurationMS != 5000 || snap.Activity[0].EndedAt != nil {
		t.Errorf("activity = %s", mustJSON(snap.Activity))
	}
	if snap.Todos == nil || len(snap.Todos) != 0 || snap.Context != (transcript.Context{}) {
		t.Errorf("todos %v context %+v", snap.Todos, snap.Context)
	}
}

// TestFoldActivityInterruptions: a turn cut by a stopped runner ends with
// the status change, a resume leaves a mark, and the next turn closes a
// turn whose end never came.
func TestFoldActivityInterruptions(t *testing.T) {
	j := newJournal().user("run_1", "msg_u", "q")
	j.add("run_1", event.RunStarted, event.RunStartedPayload{RunnerID: "rn", Attempt: 1})                 // 2
	j.add("run_1", event.TurnStarted, event.TurnStartedPayload{TurnID: "trn_1"})                          // 3
	j.add("run_1", event.RunStatus, event.RunStatusPayload{Status: "recovering"})                         // 4
	j.add("run_1", event.RunStarted, event.RunStartedPayload{RunnerID: "rn2", Attempt: 2, Resumed: true}) // 5
	j.add("run_1", event.TurnStarted, event.TurnStartedPayload{TurnID: "trn_2"})                          // 6
	j.add("run_1", event.TurnStarted, event.TurnStartedPayload{TurnID: "trn_3"})                          // 7
	j.add("run_1", event.TurnStarted, event.TurnStartedPayload{TurnID: "trn_3"})                          // 8: a repeat
	a := transcript.FoldSession(j.evs, []string{"run_1"}).Activity
	if len(a) != 1 {
		t.Fatalf("activity = %s", mustJSON(a))
	}
	ts := func(id int64) event.Time { return j.evs[id-1].TS }
	want := []transcript.Step{
		{Kind: transcript.StepTurn, ID: "trn_1", StartedAt: ts(3), State: transcript.StepError, DurationMS: ts(4).Sub(ts(3).Time).Milliseconds()},
		{Kind: transcript.StepResumed, ID: "rsm_5", StartedAt: ts(5), State: transcript.StepDone, Attempt: 2},
		{Kind: transcript.StepTurn, ID: "trn_2", StartedAt: ts(6), State: transcript.StepDone},
		{Kind: transcript.StepTurn, ID: "trn_3", StartedAt: ts(7), State: transcript.StepRunning},
	}
	if !reflect.DeepEqual(a[0].Steps, want) || a[0].StartedAt == nil || !a[0].StartedAt.Equal(ts(2).Time) {
		t.Fatalf("activity:\n got %s\nwant %s", mustJSON(a), mustJSON(want))
	}
}
