package e2e

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
)

// Two concurrent responses to one approval: one resolution; the other
// caller gets not_pending.
func TestConcurrentResponsesOneWins(t *testing.T) {
	s := startServer(t, script(turn(call("run_command", `{"command":"echo hi"}`)), turn(text("ok"))))
	sid := s.newSession(t)
	st := openStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
	r := s.send(t, sid, "go")
	st.until(t, "approval", isType(event.ApprovalRequested))
	q := s.pending(t)[0]

	const n = 8
	codes := make([]int, n)
	errs := make([]errorJSON, n)
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
			codes[i] = do(t, "POST", s.URL+"/api/requests/"+q.ID+"/respond", map[string]string{"choice": choice}, &errs[i])
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
	st.until(t, "run.done", isDone(r.ID))
	if n := countType(s.journal(t, r.ID), event.ApprovalResolved); n != 1 {
		t.Fatalf("%d resolution events, want 1", n)
	}
}

func TestClarifyAnswered(t *testing.T) {
	s := startServer(t, script(
		turn(call("clarify", `{"question":"Which colour?","choices":["red","blue"]}`)),
		turn(text("Blue it is.")),
	))
	sid := s.newSession(t)
	st := openStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
	r := s.send(t, sid, "pick")
	evs := st.until(t, "clarify", isType(event.ClarifyRequested))
	cp := payload[event.ClarifyRequestedPayload](t, evs[len(evs)-1])
	if cp.Question != "Which colour?" || len(cp.Choices) != 2 {
		t.Fatalf("clarify = %+v", cp)
	}
	s.waitStatus(t, r.ID, "awaiting_clarify")
	var e errorJSON
	if c := do(t, "POST", s.URL+"/api/requests/"+cp.RequestID+"/respond", map[string]string{"answer": "  "}, &e); c != http.StatusBadRequest || e.Error.Code != "invalid_input" {
		t.Fatalf("empty answer: %d %s", c, e.Error.Code)
	}
	if c := do(t, "POST", s.URL+"/api/requests/"+cp.RequestID+"/respond", map[string]string{"answer": "blue"}, nil); c != http.StatusOK {
		t.Fatalf("answer: %d", c)
	}
	evs = st.until(t, "run.done", isDone(r.ID))
	for _, e := range evs {
		if e.Type == event.ToolDone {
			if out := payload[event.ToolDonePayload](t, e).Output; !strings.Contains(out, "blue") {
				t.Fatalf("tool result %q lacks the answer", out)
			}
		}
	}
	if d := payload[event.RunDonePayload](t, evs[len(evs)-1]); d.Status != "completed" {
		t.Fatalf("status %s", d.Status)
	}
}

// An approval nobody answers expires; the tool is denied and the run goes on.
func TestApprovalExpires(t *testing.T) {
	s := startServer(t, script(turn(call("run_command", `{"command":"echo hi"}`)), turn(text("Understood."))),
		withApprovalTTL(300*time.Millisecond))
	sid := s.newSession(t)
	st := openStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
	r := s.send(t, sid, "go")
	evs := st.until(t, "run.done", isDone(r.ID))
	var resolved event.ResolvedPayload
	var tool event.ToolDonePayload
	for _, e := range evs {
		switch e.Type {
		case event.ApprovalRequested:
			if p := payload[event.ApprovalRequestedPayload](t, e); p.ExpiresAt.IsZero() {
				t.Fatal("approval request carries no expiry")
			}
		case event.ApprovalResolved:
			resolved = payload[event.ResolvedPayload](t, e)
		case event.ToolDone:
			tool = payload[event.ToolDonePayload](t, e)
		}
	}
	if resolved.Status != "expired" || tool.Status != event.ToolDenied {
		t.Fatalf("resolved %+v, tool %+v", resolved, tool)
	}
	if d := payload[event.RunDonePayload](t, evs[len(evs)-1]); d.Status != "completed" {
		t.Fatalf("status %s", d.Status)
	}
	var e errorJSON
	if c := do(t, "POST", s.URL+"/api/requests/"+resolved.RequestID+"/respond", map[string]string{"choice": "once"}, &e); c != http.StatusConflict || e.Error.Code != "not_pending" {
		t.Fatalf("late answer: %d %s", c, e.Error.Code)
	}
}

// "session" remembers the approval for the session; "always" for every
// session; rules can be listed and removed.
func TestApprovalRules(t *testing.T) {
	s := startServer(t, script(turn(call("run_command", `{"command":"echo ruled"}`)), turn(text("done"))))
	sid := s.newSession(t)
	st := openStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
	r := s.send(t, sid, "go")
	st.until(t, "approval", isType(event.ApprovalRequested))
	do(t, "POST", s.URL+"/api/requests/"+s.pending(t)[0].ID+"/respond", map[string]string{"choice": "session"}, nil)
	st.until(t, "run.done", isDone(r.ID))

	r2 := s.send(t, sid, "again")
	evs := st.until(t, "run.done", isDone(r2.ID))
	if countType(evs, event.ApprovalRequested) != 0 {
		t.Fatal("session rule did not apply in the same session")
	}
	other := s.newSession(t)
	st2 := openStream(t, s.URL+"/api/sessions/"+other+"/events", nil)
	s.send(t, other, "go")
	st2.until(t, "approval in another session", isType(event.ApprovalRequested))

	var rules struct {
		Rules []struct {
			ID, Tool, Pattern, Scope string
		} `json:"rules"`
	}
	do(t, "GET", s.URL+"/api/rules", nil, &rules)
	if len(rules.Rules) != 1 || rules.Rules[0].Pattern != "echo ruled" || rules.Rules[0].Scope != "session" {
		t.Fatalf("rules = %+v", rules.Rules)
	}
	if c := do(t, "DELETE", s.URL+"/api/rules/"+rules.Rules[0].ID, nil, nil); c != http.StatusNoContent {
		t.Fatalf("delete rule: %d", c)
	}
	if c := do(t, "DELETE", s.URL+"/api/rules/"+rules.Rules[0].ID, nil, nil); c != http.StatusNotFound {
		t.Fatalf("delete rule twice: %d", c)
	}
}

// if_busy: enqueue runs after the current run, reject answers 409,
// interrupt cancels the current run (keeping its progress) and runs next.
func TestIfBusy(t *testing.T) {
	s := startServer(t, script(turn(text("start "), slowText(100, 20))))
	sid := s.newSession(t)
	st := openStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
	first := s.send(t, sid, "one")
	st.until(t, "first delta", isType(event.MessageDelta))

	var e errorJSON
	if c := do(t, "POST", s.URL+"/api/sessions/"+sid+"/messages", map[string]string{"content": "x", "if_busy": "reject"}, &e); c != http.StatusConflict || e.Error.Code != "session_busy" {
		t.Fatalf("reject: %d %s", c, e.Error.Code)
	}
	var queued runJSON
	do(t, "POST", s.URL+"/api/sessions/"+sid+"/messages", map[string]string{"content": "two", "if_busy": "enqueue"}, &queued)
	if queued.Status != "queued" {
		t.Fatalf("enqueued run status %s", queued.Status)
	}
	var sess sessionJSON
	do(t, "GET", s.URL+"/api/sessions/"+sid, nil, &sess)
	if sess.Status != "running" {
		t.Fatalf("session status %s", sess.Status)
	}
	var urgent runJSON
	do(t, "POST", s.URL+"/api/sessions/"+sid+"/messages", map[string]string{"content": "three", "if_busy": "interrupt"}, &urgent)
	st.until(t, "first run ends", isDone(first.ID))
	if got := s.run(t, first.ID).Status; got != "cancelled" {
		t.Fatalf("interrupted run status %s", got)
	}
	// The interrupting run goes before the one queued earlier.
	evs := st.until(t, "urgent run starts", func(e event.Event) bool { return e.Type == event.RunStarted })
	if evs[len(evs)-1].RunID != urgent.ID {
		t.Fatalf("run started after interrupt is %s, want %s", evs[len(evs)-1].RunID, urgent.ID)
	}
	do(t, "POST", s.URL+"/api/runs/"+urgent.ID+"/cancel", nil, nil)
	st.until(t, "queued run starts", func(e event.Event) bool { return e.Type == event.RunStarted && e.RunID == queued.ID })
	do(t, "POST", s.URL+"/api/runs/"+queued.ID+"/cancel", nil, nil)
	st.until(t, "queued run ends", isDone(queued.ID))
}
