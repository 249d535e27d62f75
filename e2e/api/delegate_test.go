package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/config"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
)

// delegateCall is a delegate call of one task per prompt.
func delegateCall(prompts ...string) demo.Step {
	var tasks []map[string]string
	for _, p := range prompts {
		tasks = append(tasks, map[string]string{"prompt": p})
	}
	b, _ := json.Marshal(map[string]any{"tasks": tasks})
	return e2etest.Call("delegate", string(b))
}

// childSessions lists the sessions the delegate call of parent made.
func childSessions(t *testing.T, s *e2etest.Server, parent string) []string {
	t.Helper()
	var out struct {
		Sessions []struct {
			ID          string `json:"id"`
			DelegatedBy *struct {
				SessionID  string `json:"session_id"`
				RunID      string `json:"run_id"`
				ToolCallID string `json:"tool_call_id"`
			} `json:"delegated_by"`
		} `json:"sessions"`
	}
	if c := e2etest.Do(t, "GET", s.URL+"/api/sessions?limit=200", nil, &out); c != http.StatusOK {
		t.Fatalf("list sessions: %d", c)
	}
	var ids []string
	for _, ss := range out.Sessions {
		if ss.DelegatedBy != nil && ss.DelegatedBy.SessionID == parent {
			if ss.DelegatedBy.RunID == "" || ss.DelegatedBy.ToolCallID == "" {
				t.Fatalf("child %s names no run or tool call: %+v", ss.ID, ss.DelegatedBy)
			}
			ids = append(ids, ss.ID)
		}
	}
	return ids
}

// A parent delegates three tasks: three child runs in three child
// sessions run at the same time (their run.started all come before the
// first run.done, read from the journal), the parent's journal has
// subagent.started and subagent.done for each, and its tool result holds
// every child's answer. The runner's limit is 2 executing runs: the
// parent waiting for its children holds no slot, or the third child could
// not start before the first ended.
func TestDelegateThreeTasksRunConcurrently(t *testing.T) {
	t.Parallel()
	child := func(name string) demo.Scenario {
		return e2etest.Scenario("task "+name, e2etest.Turn(e2etest.Delay(1500), e2etest.Text(name+" result")))
	}
	s := e2etest.StartServer(t, e2etest.Scenarios(
		e2etest.Scenario("please delegate", e2etest.Turn(delegateCall("task alpha", "task beta", "task gamma")),
			e2etest.Turn(e2etest.Text("All three are done."))),
		child("alpha"), child("beta"), child("gamma"),
	), func(c *config.Config) { c.MaxConcurrent = 3 })
	sid := s.NewSession(t)
	r := s.Send(t, sid, "please delegate the work")
	s.WaitRun(t, r.ID, 30*time.Second, "completed", func(r e2etest.RunJSON) bool { return r.Terminal })
	if got := s.Run(t, r.ID); got.Status != "completed" {
		t.Fatalf("parent ended %s (%+v)", got.Status, got.Error)
	}
	evs := s.Journal(t, r.ID)
	started := e2etest.OfType[event.SubagentStartedPayload](t, evs, event.SubagentStarted)
	done := e2etest.OfType[event.SubagentDonePayload](t, evs, event.SubagentDone)
	if len(started) != 3 || len(done) != 3 {
		t.Fatalf("subagent.started %d, subagent.done %d; want 3 each\n%s", len(started), len(done), e2etest.Summarize(evs))
	}
	results := e2etest.OfType[event.ToolDonePayload](t, evs, event.ToolDone)
	if len(results) != 1 || results[0].Status != event.ToolOK {
		t.Fatalf("tool results %+v, want one ok", results)
	}
	for _, name := range []string{"alpha", "beta", "gamma"} {
		if !strings.Contains(results[0].Output, name+" result") {
			t.Fatalf("the parent's result lacks %s's answer:\n%s", name, results[0].Output)
		}
	}
	kids := childSessions(t, s, sid)
	if len(kids) != 3 {
		t.Fatalf("children in the session list: %v, want 3", kids)
	}
	var lastStart, firstEnd time.Time
	for i, d := range done {
		if d.Status != "completed" || d.ParentSessionID != sid || d.ToolCallID != started[i].ToolCallID {
			t.Fatalf("subagent.done %d = %+v", i, d)
		}
		cev := s.Journal(t, d.RunID)
		for _, e := range cev {
			switch e.Type {
			case event.RunStarted:
				if e.TS.After(lastStart) {
					lastStart = e.TS.Time
				}
			case event.RunDone:
				if firstEnd.IsZero() || e.TS.Before(firstEnd) {
					firstEnd = e.TS.Time
				}
			}
		}
	}
	if !lastStart.Before(firstEnd) {
		t.Fatalf("children did not overlap: the last started at %v, the first ended at %v", lastStart, firstEnd)
	}
}

// Cancelling the parent cancels every child run.
func TestDelegateCancelParentCancelsChildren(t *testing.T) {
	t.Parallel()
	slow := e2etest.Turn(e2etest.Delay(60000), e2etest.Text("too late"))
	s := e2etest.StartServer(t, e2etest.Scenarios(
		e2etest.Scenario("please delegate", e2etest.Turn(delegateCall("slow one", "slow two", "slow three")),
			e2etest.Turn(e2etest.Text("unreachable"))),
		e2etest.Scenario("slow", slow),
	))
	sid := s.NewSession(t)
	st := e2etest.OpenStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
	r := s.Send(t, sid, "please delegate the work")
	n := 0
	evs := st.Until(t, "three subagents started", func(e event.Event) bool {
		if e.Type == event.SubagentStarted {
			n++
		}
		return n == 3
	})
	started := e2etest.OfType[event.SubagentStartedPayload](t, evs, event.SubagentStarted)
	for _, p := range started {
		s.WaitStatus(t, p.RunID, "running")
	}
	if c := e2etest.Do(t, "POST", s.URL+"/api/runs/"+r.ID+"/cancel", map[string]any{}, nil); c != http.StatusAccepted && c != http.StatusOK {
		t.Fatalf("cancel: %d", c)
	}
	s.WaitStatus(t, r.ID, "cancelled")
	for _, p := range started {
		s.WaitStatus(t, p.RunID, "cancelled")
	}
}

// A child's approval is in the needs-you list naming the parent session;
// answering it lets the child, then the parent, finish.
func TestDelegateChildApprovalNamesParent(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Scenarios(
		e2etest.Scenario("please delegate", e2etest.Turn(delegateCall("run the listing")),
			e2etest.Turn(e2etest.Text("The child is done."))),
		e2etest.Scenario("run the listing", e2etest.Turn(e2etest.Call("run_command", `{"command":"echo hi"}`)),
			e2etest.Turn(e2etest.Text("listed"))),
	))
	sid := s.NewSession(t)
	if c := e2etest.Do(t, "PATCH", s.URL+"/api/sessions/"+sid, map[string]any{"title": "The parent"}, nil); c != http.StatusOK {
		t.Fatalf("rename: %d", c)
	}
	r := s.Send(t, sid, "please delegate the work")
	type pending struct {
		ID        string `json:"id"`
		SessionID string `json:"session_id"`
		Parent    *struct {
			SessionID string `json:"session_id"`
			Title     string `json:"title"`
		} `json:"parent"`
	}
	var q pending
	deadline := time.Now().Add(15 * time.Second)
	for q.ID == "" {
		var out struct {
			Requests []pending `json:"requests"`
		}
		e2etest.Do(t, "GET", s.URL+"/api/requests?status=pending", nil, &out)
		if len(out.Requests) > 0 {
			q = out.Requests[0]
		} else if time.Now().After(deadline) {
			t.Fatal("no approval request from the child")
		} else {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if q.SessionID == sid || q.Parent == nil || q.Parent.SessionID != sid || q.Parent.Title != "The parent" {
		t.Fatalf("request %+v (parent %+v), want the child's, naming session %s \"The parent\"", q, q.Parent, sid)
	}
	if c := e2etest.Do(t, "POST", s.URL+"/api/requests/"+q.ID+"/respond", map[string]string{"choice": "once"}, nil); c != http.StatusOK {
		t.Fatalf("respond: %d", c)
	}
	s.WaitRun(t, r.ID, 30*time.Second, "completed", func(r e2etest.RunJSON) bool { return r.Terminal })
	evs := s.Journal(t, r.ID)
	res := e2etest.OfType[event.ToolDonePayload](t, evs, event.ToolDone)
	if len(res) != 1 || !strings.Contains(res[0].Output, "listed") {
		t.Fatalf("parent result %+v, want the child's answer", res)
	}
}

// The children's tokens count toward the parent's budget: three children
// of 610 tokens each take a parent session limited to 1,000 over its
// limit, and the parent pauses right after the delegate call, naming the
// 1,940 tokens it and its children used.
func TestDelegateChildrenSpendTheParentsBudget(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Scenarios(
		e2etest.Scenario("please delegate", e2etest.Turn(delegateCall("cost one", "cost two", "cost three"), usageStep(100, 10)),
			e2etest.Turn(e2etest.Text("unreachable"))),
		e2etest.Scenario("cost", e2etest.Turn(e2etest.Text("spent"), usageStep(600, 10))),
	), e2etest.WithApprovalMode("off"))
	sid := s.NewSession(t)
	if c := e2etest.Do(t, "PUT", s.URL+"/api/budgets", map[string]any{"scope": "session", "target": sid,
		"limits": map[string]any{"max_tokens": 1000}}, nil); c != http.StatusOK {
		t.Fatalf("set the session's budget: %d", c)
	}
	r := s.Send(t, sid, "please delegate the work")
	s.WaitRun(t, r.ID, 30*time.Second, "paused", func(r e2etest.RunJSON) bool { return r.Status == "paused" || r.Terminal })
	var got pausedJSON
	e2etest.Do(t, "GET", s.URL+"/api/runs/"+r.ID, nil, &got)
	if got.Status != "paused" || got.Paused == nil || got.Paused.Code != "budget_exceeded" ||
		got.Paused.Reason != "token budget of this session of 1000 reached: 1940 used" {
		t.Fatalf("parent = %s %+v, want paused by the session's token budget", got.Status, got.Paused)
	}
}
