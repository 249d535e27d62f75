package processes

import (
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
)

// A runner stopped (SIGTERM, 1 s grace) while a delegate call waits for
// its two children hands the parent over with the call still open; the
// next runner runs the call again, which finds the two child sessions it
// made instead of making new ones, and the parent completes with both
// answers: two child sessions, two subagent.started, two subagent.done,
// one tool.done.
func TestDelegateSurvivesRunnerHandover(t *testing.T) {
	dataDir, ws := t.TempDir(), t.TempDir()
	sp := e2etest.WriteScript(t, e2etest.Scenarios(
		e2etest.Scenario("please delegate", e2etest.Turn(e2etest.Call("delegate", `{"tasks":[{"prompt":"slow alpha"},{"prompt":"slow beta"}]}`)),
			e2etest.Turn(e2etest.Text("Both done."))),
		e2etest.Scenario("slow alpha", e2etest.Turn(e2etest.Delay(6000), e2etest.Text("alpha answer"))),
		e2etest.Scenario("slow beta", e2etest.Turn(e2etest.Delay(6000), e2etest.Text("beta answer"))),
	))
	web := e2etest.StartWeb(t, binary, dataDir, ws, sp, "--approval-mode", "off")
	ra := e2etest.StartRunner(t, binary, dataDir, ws, sp, "--approval-mode", "off", "--grace", "1s")
	sid := web.NewSession(t)
	st := e2etest.OpenStream(t, web.URL+"/api/sessions/"+sid+"/events", nil)
	r := web.Send(t, sid, "please delegate the work")
	n := 0
	st.Until(t, "two subagents started", func(e event.Event) bool {
		if e.Type == event.SubagentStarted {
			n++
		}
		return n == 2
	})
	ra.Stop(t, syscall.SIGTERM)
	e2etest.StartRunner(t, binary, dataDir, ws, sp, "--approval-mode", "off")
	web.WaitRun(t, r.ID, 60*time.Second, "completed", func(r e2etest.RunJSON) bool { return r.Terminal })
	if got := web.Run(t, r.ID); got.Status != "completed" {
		t.Fatalf("parent ended %s (%+v)", got.Status, got.Error)
	}
	evs := web.Journal(t, r.ID)
	if s, d, td := e2etest.CountType(evs, event.SubagentStarted), e2etest.CountType(evs, event.SubagentDone), e2etest.CountType(evs, event.ToolDone); s != 2 || d != 2 || td != 1 {
		t.Fatalf("subagent.started %d, subagent.done %d, tool.done %d; want 2, 2, 1\n%s", s, d, td, e2etest.Summarize(evs))
	}
	res := e2etest.OfType[event.ToolDonePayload](t, evs, event.ToolDone)[0]
	if res.Status != event.ToolOK || !strings.Contains(res.Output, "alpha answer") || !strings.Contains(res.Output, "beta answer") {
		t.Fatalf("delegate result %s: %s", res.Status, res.Output)
	}
	var out struct {
		Sessions []struct {
			ID          string `json:"id"`
			DelegatedBy *struct {
				SessionID string `json:"session_id"`
			} `json:"delegated_by"`
		} `json:"sessions"`
	}
	if c := e2etest.Do(t, "GET", web.URL+"/api/sessions?limit=200", nil, &out); c != http.StatusOK {
		t.Fatalf("list sessions: %d", c)
	}
	kids := 0
	for _, s := range out.Sessions {
		if s.DelegatedBy != nil && s.DelegatedBy.SessionID == sid {
			kids++
		}
	}
	if kids != 2 {
		t.Fatalf("%d child sessions, want the two made before the handover", kids)
	}
}
