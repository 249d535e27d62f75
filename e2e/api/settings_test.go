package api

// Settings (issue 16, h16-providers) take effect without a restart.

import (
	"net/http"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
)

// The approval mode changed in the console applies to the next run: under
// the server's manual mode a command waits for a person; after PATCH
// /api/settings {"approval_mode":"off"} the same command runs unasked.
func TestSettingsApprovalModeLive(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Scenarios(
		e2etest.Scenario("first", e2etest.Turn(e2etest.Call("run_command", `{"command":"echo one"}`)), e2etest.Turn(e2etest.Text("done one"))),
		e2etest.Scenario("second", e2etest.Turn(e2etest.Call("run_command", `{"command":"echo two"}`)), e2etest.Turn(e2etest.Text("done two"))),
	))
	sid := s.NewSession(t)
	st := e2etest.OpenStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
	r1 := s.Send(t, sid, "first")
	st.Until(t, "approval", e2etest.IsType(event.ApprovalRequested))
	q := s.Pending(t)[0]
	if c := e2etest.Do(t, "POST", s.URL+"/api/requests/"+q.ID+"/respond", map[string]string{"choice": "once"}, nil); c != http.StatusOK {
		t.Fatalf("respond: %d", c)
	}
	s.WaitRun(t, r1.ID, 20*time.Second, "the first run to end", func(r e2etest.RunJSON) bool { return r.Terminal })

	var out struct {
		Effective struct {
			ApprovalMode string `json:"approval_mode"`
		} `json:"effective"`
	}
	if c := e2etest.Do(t, "PATCH", s.URL+"/api/settings", map[string]any{"approval_mode": "off"}, &out); c != http.StatusOK || out.Effective.ApprovalMode != "off" {
		t.Fatalf("patch settings: %d %+v", c, out)
	}
	r2 := s.Send(t, sid, "second")
	done := s.WaitRun(t, r2.ID, 20*time.Second, "the second run to end", func(r e2etest.RunJSON) bool { return r.Terminal || len(r.PendingRequestIDs) > 0 })
	if done.Status != "completed" || len(done.PendingRequestIDs) > 0 {
		t.Fatalf("second run: %s, pending %v", done.Status, done.PendingRequestIDs)
	}
	for _, ev := range s.Journal(t, r2.ID) {
		if ev.Type == event.ApprovalRequested {
			t.Fatal("the second run asked for approval after the mode was set off")
		}
	}
}
