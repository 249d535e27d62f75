package api

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
)

// Issue 17's acceptance "a run that outlives its expiry ends expired"
// (h17-expiry): a run given 2 s whose command sleeps 10 s is cut off at
// its deadline and ends expired, with its command closed, the end-of-run
// checkpoint taken and run.done once, last.
func TestRunOutlivesExpiry(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(
		e2etest.Turn(e2etest.Text("Sleeping."), e2etest.Call("run_command", `{"command":"sleep 10"}`)),
		e2etest.Turn(e2etest.Text("Slept.")),
	), e2etest.WithApprovalMode("off"))
	sid := s.NewSession(t)
	var bad e2etest.ErrorJSON
	if c := e2etest.Do(t, "POST", s.URL+"/api/sessions/"+sid+"/messages", map[string]any{"content": "sleep", "expires_in": "2 seconds"}, &bad); c != http.StatusBadRequest || bad.Error.Code != "invalid_expires_in" {
		t.Fatalf("bad expires_in: %d %+v", c, bad)
	}
	var r struct {
		e2etest.RunJSON
		ExpiresAt time.Time `json:"expires_at"`
	}
	if c := e2etest.Do(t, "POST", s.URL+"/api/sessions/"+sid+"/messages", map[string]any{"content": "sleep", "expires_in": "2s"}, &r); c != http.StatusAccepted || r.ExpiresAt.IsZero() {
		t.Fatalf("send: %d %+v", c, r)
	}
	s.WaitStatus(t, r.ID, "running")
	got := s.WaitRun(t, r.ID, 15*time.Second, "the run to end", func(r e2etest.RunJSON) bool { return r.Terminal })
	if got.Status != "expired" || got.Error == nil || got.Error.Code != "expired" || !strings.HasPrefix(got.Error.Message, "Expired after 2s") {
		t.Fatalf("run = %+v (error %+v), want expired after 2s", got, got.Error)
	}
	evs := s.Journal(t, r.ID)
	e2etest.CheckJournal(t, evs)
	var types []event.Type
	for _, e := range evs {
		switch e.Type {
		case event.ToolDone:
			if p := e2etest.Payload[event.ToolDonePayload](t, e); p.Status == event.ToolOK {
				t.Fatalf("the 10 s command finished: %+v", p)
			}
		case event.RunDone:
			if p := e2etest.Payload[event.RunDonePayload](t, e); p.Status != "expired" {
				t.Fatalf("run.done %+v", p)
			}
		}
		types = append(types, e.Type)
	}
	n := len(types)
	// The checkpoint closing the run's span, then its end.
	if types[n-1] != event.RunDone || types[n-2] != event.CheckpointCreated {
		t.Fatalf("journal ends %v", types[max(0, n-6):])
	}
	if c := count(types, event.ToolStarted); c != 1 || count(types, event.ToolDone) != 1 || count(types, event.RunDone) != 1 {
		t.Fatalf("journal %v", types)
	}
}

func count(ts []event.Type, typ event.Type) int {
	n := 0
	for _, t := range ts {
		if t == typ {
			n++
		}
	}
	return n
}

// A run parked on a question past its deadline does not wait for the
// answer: the sweep ends it expired, cancels the question and, since it
// changed the workspace, takes its end-of-run checkpoint.
func TestParkedRunExpires(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(
		e2etest.Turn(e2etest.Call("run_command", `{"command":"touch made.txt"}`)),
		e2etest.Turn(e2etest.Call("run_command", `{"command":"echo asks first"}`)),
		e2etest.Turn(e2etest.Text("Never reached.")),
	))
	if c := e2etest.Do(t, "POST", s.URL+"/api/rules", map[string]string{"tool": "run_command", "pattern": "touch *"}, nil); c != http.StatusCreated {
		t.Fatalf("create rule: %d", c)
	}
	sid := s.NewSession(t)
	var r e2etest.RunJSON
	if c := e2etest.Do(t, "POST", s.URL+"/api/sessions/"+sid+"/messages", map[string]any{"content": "work", "expires_in": "6s"}, &r); c != http.StatusAccepted {
		t.Fatalf("send: %d", c)
	}
	// 6 s: a loaded machine must still see the question before the end
	// (CI saw a 3 s run expire before a poll caught it waiting).
	parked := s.WaitStatus(t, r.ID, "awaiting_approval")
	if len(parked.PendingRequestIDs) != 1 {
		t.Fatalf("parked run = %+v", parked)
	}
	got := s.WaitRun(t, r.ID, 20*time.Second, "the run to expire", func(r e2etest.RunJSON) bool { return r.Terminal })
	if got.Status != "expired" || got.Error == nil || !strings.HasPrefix(got.Error.Message, "Expired after 6s") {
		t.Fatalf("run = %+v (error %+v)", got, got.Error)
	}
	if p := s.Pending(t); len(p) != 0 {
		t.Fatalf("pending after expiry: %+v", p)
	}
	// Answering late changes nothing.
	if c := e2etest.Do(t, "POST", s.URL+"/api/requests/"+parked.PendingRequestIDs[0]+"/respond", map[string]string{"choice": "once"}, nil); c == http.StatusOK {
		t.Fatalf("a late answer was taken")
	}
	evs := s.Journal(t, r.ID)
	e2etest.CheckJournal(t, evs)
	var types []event.Type
	for _, e := range evs {
		if e.Type == event.ApprovalResolved {
			if p := e2etest.Payload[event.ResolvedPayload](t, e); p.Status != "cancelled" {
				t.Fatalf("approval.resolved %+v, want cancelled", p)
			}
		}
		types = append(types, e.Type)
	}
	// The sweep's end checkpoint follows the question and precedes the
	// closing events Finish writes with run.done.
	n := len(types)
	asked, ended := -1, -1
	for i, ty := range types {
		switch ty {
		case event.ApprovalRequested:
			asked = i
		case event.CheckpointCreated:
			ended = i
		}
	}
	if types[n-1] != event.RunDone || asked < 0 || ended < asked || count(types, event.ApprovalResolved) != 1 ||
		count(types, event.ToolStarted) != count(types, event.ToolDone) {
		t.Fatalf("journal %v", types)
	}
}
