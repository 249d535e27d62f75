package api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
)

// TestDenyWithNote: an approval denied with a note gives the model the
// note as the call's result, and the journal keeps it on
// approval.resolved; a note with any other choice is refused and changes
// nothing.
func TestDenyWithNote(t *testing.T) {
	t.Parallel()
	f := newOpenAIFake(t, openaiTestKey, openaiTestKey)
	f.stream(f.tools(fakeCall{"call_DenyNote01", "run_command", `{"command":"rm -rf build && make"}`}))
	f.stream(f.text("OK, ", "I will run make clean."))
	s := startWith(t, f)
	sid := s.NewSession(t)
	st := e2etest.OpenStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
	defer st.Close()
	r := sendModel(t, s, sid, "rebuild", f.ref())
	evs := st.Until(t, "approval", e2etest.IsType(event.ApprovalRequested))
	qid := e2etest.Payload[event.ApprovalRequestedPayload](t, evs[len(evs)-1]).RequestID

	const note = "use make clean instead"
	for _, bad := range []map[string]string{
		{"choice": "once", "note": note},
		{"choice": "deny", "note": strings.Repeat("x", 16<<10+1)},
	} {
		var e e2etest.ErrorJSON
		if c := e2etest.Do(t, "POST", s.URL+"/api/requests/"+qid+"/respond", bad, &e); c != http.StatusBadRequest || e.Error.Code != "invalid_input" {
			t.Fatalf("respond %v: %d %s, want 400 invalid_input", bad, c, e.Error.Code)
		}
	}
	if p := s.Pending(t); len(p) != 1 || p[0].ID != qid {
		t.Fatalf("after refused answers the request is not pending: %+v", p)
	}
	if c := e2etest.Do(t, "POST", s.URL+"/api/requests/"+qid+"/respond", map[string]string{"choice": "deny", "note": "  " + note + " "}, nil); c != http.StatusOK {
		t.Fatalf("deny with note: %d", c)
	}
	evs = st.Until(t, "run.done", e2etest.IsDone(r.ID))
	if d := summarise(t, evs, r.ID); d.done.Status != "completed" || d.results["call_DenyNote01"].Status != event.ToolDenied {
		t.Fatalf("run %+v, call %+v", d.done, d.results["call_DenyNote01"])
	}
	want := "Denied by the user: " + note
	var resolved event.ResolvedPayload
	for _, e := range s.Journal(t, r.ID) {
		if e.Type == event.ApprovalResolved {
			resolved = e2etest.Payload[event.ResolvedPayload](t, e)
		}
		if e.Type == event.ToolDone {
			if p := e2etest.Payload[event.ToolDonePayload](t, e); p.Output != want {
				t.Fatalf("tool.done output %q, want %q", p.Output, want)
			}
		}
	}
	if resolved.Choice != "deny" || resolved.Note != note {
		t.Fatalf("approval.resolved = %+v", resolved)
	}
	bodies := f.bodies()
	if len(bodies) != 2 {
		t.Fatalf("%d model requests, want 2", len(bodies))
	}
	// The OpenAI client marks an error result with "Error: ".
	if got := f.results(t, bodies[1])["call_DenyNote01"]; got != "Error: "+want {
		t.Fatalf("the model got %q for the denied call, want %q", got, "Error: "+want)
	}
}
