package api

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
)

// Two concurrent responses to one approval: one resolution; the other
// caller gets not_pending.
func TestConcurrentResponsesOneWins(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Call("run_command", `{"command":"echo hi"}`)), e2etest.Turn(e2etest.Text("ok"))))
	sid := s.NewSession(t)
	st := e2etest.OpenStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
	r := s.Send(t, sid, "go")
	st.Until(t, "approval", e2etest.IsType(event.ApprovalRequested))
	q := s.Pending(t)[0]

	const n = 8
	codes := make([]int, n)
	errs := make([]e2etest.ErrorJSON, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			choice := "once"
			if i%2 == 1 {
				choice = "deny"
			}
			codes[i] = e2etest.Do(t, "POST", s.URL+"/api/requests/"+q.ID+"/respond", map[string]string{"choice": choice}, &errs[i])
		}()
	}
	close(start)
	wg.Wait()
	ok := 0
	for i, c := range codes {
		switch c {
		case http.StatusOK:
			ok++
		case http.StatusConflict:
			if errs[i].Error.Code != "not_pending" {
				t.Fatalf("loser got code %q", errs[i].Error.Code)
			}
		default:
			t.Fatalf("response %d: status %d", i, c)
		}
	}
	if ok != 1 {
		t.Fatalf("%d responses won, want 1", ok)
	}
	st.Until(t, "run.done", e2etest.IsDone(r.ID))
	if n := e2etest.CountType(s.Journal(t, r.ID), event.ApprovalResolved); n != 1 {
		t.Fatalf("%d resolution events, want 1", n)
	}
}

func TestClarifyAnswered(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(
		e2etest.Turn(e2etest.Call("clarify", `{"question":"Which colour?","choices":["red","blue"]}`)),
		e2etest.Turn(e2etest.Text("Blue it is.")),
	))
	sid := s.NewSession(t)
	st := e2etest.OpenStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
	r := s.Send(t, sid, "pick")
	evs := st.Until(t, "clarify", e2etest.IsType(event.ClarifyRequested))
	cp := e2etest.Payload[event.ClarifyRequestedPayload](t, evs[len(evs)-1])
	if cp.Question != "Which colour?" || len(cp.Choices) != 2 {
		t.Fatalf("clarify = %+v", cp)
	}
	s.WaitStatus(t, r.ID, "awaiting_clarify")
	var e e2etest.ErrorJSON
	if c := e2etest.Do(t, "POST", s.URL+"/api/requests/"+cp.RequestID+"/respond", map[string]string{"answer": "  "}, &e); c != http.StatusBadRequest || e.Error.Code != "invalid_input" {
		t.Fatalf("empty answer: %d %s", c, e.Error.Code)
	}
	if c := e2etest.Do(t, "POST", s.URL+"/api/requests/"+cp.RequestID+"/respond", map[string]string{"answer": "blue"}, nil); c != http.StatusOK {
		t.Fatalf("answer: %d", c)
	}
	evs = st.Until(t, "run.done", e2etest.IsDone(r.ID))
	for _, e := range evs {
		if e.Type == event.ToolDone {
			if out := e2etest.Payload[event.ToolDonePayload](t, e).Output; !strings.Contains(out, "blue") {
				t.Fatalf("tool result %q lacks the answer", out)
			}
		}
	}
	if d := e2etest.Payload[event.RunDonePayload](t, evs[len(evs)-1]); d.Status != "completed" {
		t.Fatalf("status %s", d.Status)
	}
}

// An approval nobody answers expires; the tool is denied and the run goes on.
func TestApprovalExpires(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Call("run_command", `{"command":"echo hi"}`)), e2etest.Turn(e2etest.Text("Understood."))),
		e2etest.WithApprovalTTL(300*time.Millisecond))
	sid := s.NewSession(t)
	st := e2etest.OpenStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
	r := s.Send(t, sid, "go")
	evs := st.Until(t, "run.done", e2etest.IsDone(r.ID))
	var resolved event.ResolvedPayload
	var tool event.ToolDonePayload
	for _, e := range evs {
		switch e.Type {
		case event.ApprovalRequested:
			if p := e2etest.Payload[event.ApprovalRequestedPayload](t, e); p.ExpiresAt.IsZero() {
				t.Fatal("approval request carries no expiry")
			}
		case event.ApprovalResolved:
			resolved = e2etest.Payload[event.ResolvedPayload](t, e)
		case event.ToolDone:
			tool = e2etest.Payload[event.ToolDonePayload](t, e)
		}
	}
	if resolved.Status != "expired" || tool.Status != event.ToolDenied {
		t.Fatalf("resolved %+v, tool %+v", resolved, tool)
	}
	if d := e2etest.Payload[event.RunDonePayload](t, evs[len(evs)-1]); d.Status != "completed" {
		t.Fatalf("status %s", d.Status)
	}
	var e e2etest.ErrorJSON
	if c := e2etest.Do(t, "POST", s.URL+"/api/requests/"+resolved.RequestID+"/respond", map[string]string{"choice": "once"}, &e); c != http.StatusConflict || e.Error.Code != "not_pending" {
		t.Fatalf("late answer: %d %s", c, e.Error.Code)
	}
}

// "session" remembers the approval for the session; "always" for every
// session; rules can be listed and removed.
func TestApprovalRules(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Call("run_command", `{"command":"echo ruled"}`)), e2etest.Turn(e2etest.Text("done"))))
	sid := s.NewSession(t)
	st := e2etest.OpenStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
	r := s.Send(t, sid, "go")
	st.Until(t, "approval", e2etest.IsType(event.ApprovalRequested))
	e2etest.Do(t, "POST", s.URL+"/api/requests/"+s.Pending(t)[0].ID+"/respond", map[string]string{"choice": "session"}, nil)
	st.Until(t, "run.done", e2etest.IsDone(r.ID))

	r2 := s.Send(t, sid, "again")
	evs := st.Until(t, "run.done", e2etest.IsDone(r2.ID))
	if e2etest.CountType(evs, event.ApprovalRequested) != 0 {
		t.Fatal("session rule did not apply in the same session")
	}
	other := s.NewSession(t)
	st2 := e2etest.OpenStream(t, s.URL+"/api/sessions/"+other+"/events", nil)
	s.Send(t, other, "go")
	st2.Until(t, "approval in another session", e2etest.IsType(event.ApprovalRequested))

	var rules struct {
		Rules []struct {
			ID, Tool, Pattern, Scope string
		} `json:"rules"`
	}
	e2etest.Do(t, "GET", s.URL+"/api/rules", nil, &rules)
	if len(rules.Rules) != 1 || rules.Rules[0].Pattern != "echo ruled" || rules.Rules[0].Scope != "session" {
		t.Fatalf("rules = %+v", rules.Rules)
	}
	if c := e2etest.Do(t, "DELETE", s.URL+"/api/rules/"+rules.Rules[0].ID, nil, nil); c != http.StatusNoContent {
		t.Fatalf("delete rule: %d", c)
	}
	if c := e2etest.Do(t, "DELETE", s.URL+"/api/rules/"+rules.Rules[0].ID, nil, nil); c != http.StatusNotFound {
		t.Fatalf("delete rule twice: %d", c)
	}
}

// if_busy: enqueue runs after the current run, reject answers 409,
// interrupt cancels the current run (keeping its progress) and runs next.
func TestIfBusy(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("start "), e2etest.SlowText(100, 20))))
	sid := s.NewSession(t)
	st := e2etest.OpenStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
	first := s.Send(t, sid, "one")
	st.Until(t, "first delta", e2etest.IsType(event.MessageDelta))

	var e e2etest.ErrorJSON
	if c := e2etest.Do(t, "POST", s.URL+"/api/sessions/"+sid+"/messages", map[string]string{"content": "x", "if_busy": "reject"}, &e); c != http.StatusConflict || e.Error.Code != "session_busy" {
		t.Fatalf("reject: %d %s", c, e.Error.Code)
	}
	var queued e2etest.RunJSON
	e2etest.Do(t, "POST", s.URL+"/api/sessions/"+sid+"/messages", map[string]string{"content": "two", "if_busy": "enqueue"}, &queued)
	if queued.Status != "queued" {
		t.Fatalf("enqueued run status %s", queued.Status)
	}
	var sess e2etest.SessionJSON
	e2etest.Do(t, "GET", s.URL+"/api/sessions/"+sid, nil, &sess)
	if sess.Status != "running" {
		t.Fatalf("session status %s", sess.Status)
	}
	var urgent e2etest.RunJSON
	e2etest.Do(t, "POST", s.URL+"/api/sessions/"+sid+"/messages", map[string]string{"content": "three", "if_busy": "interrupt"}, &urgent)
	st.Until(t, "first run ends", e2etest.IsDone(first.ID))
	if got := s.Run(t, first.ID).Status; got != "cancelled" {
		t.Fatalf("interrupted run status %s", got)
	}
	// The interrupting run goes before the one queued earlier.
	evs := st.Until(t, "urgent run starts", func(e event.Event) bool { return e.Type == event.RunStarted })
	if evs[len(evs)-1].RunID != urgent.ID {
		t.Fatalf("run started after interrupt is %s, want %s", evs[len(evs)-1].RunID, urgent.ID)
	}
	e2etest.Do(t, "POST", s.URL+"/api/runs/"+urgent.ID+"/cancel", nil, nil)
	st.Until(t, "queued run starts", func(e event.Event) bool { return e.Type == event.RunStarted && e.RunID == queued.ID })
	e2etest.Do(t, "POST", s.URL+"/api/runs/"+queued.ID+"/cancel", nil, nil)
	st.Until(t, "queued run ends", e2etest.IsDone(queued.ID))
}
