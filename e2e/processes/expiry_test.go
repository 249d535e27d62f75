package processes

import (
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
)

// A run whose runner process is SIGKILLed ends expired at its deadline
// all the same (h17-expiry): the web tier's sweep takes it back from the
// dead runner, then expires it; nobody runs it again.
func TestRunnerKilledRunExpires(t *testing.T) { e2etest.EachStore(t, pg, testRunnerKilledRunExpires) }

func testRunnerKilledRunExpires(t *testing.T, dbArgs []string) {
	dataDir, ws := t.TempDir(), t.TempDir()
	sp := e2etest.WriteScript(t, e2etest.Script(
		e2etest.Turn(e2etest.Text("Running it."), e2etest.Call("run_command", fmt.Sprintf(`{"command":%q}`, "sleep 30"))),
		e2etest.Turn(e2etest.Text("finished")),
	))
	web := e2etest.StartWeb(t, binary, dataDir, ws, sp, append(dbArgs, "--approval-mode", "off")...)
	r1 := e2etest.StartRunner(t, binary, dataDir, ws, sp, append(dbArgs, "--approval-mode", "off")...)
	sid := web.NewSession(t)
	st := e2etest.OpenStream(t, web.URL+"/api/sessions/"+sid+"/events", nil)
	var r e2etest.RunJSON
	if c := e2etest.Do(t, "POST", web.URL+"/api/sessions/"+sid+"/messages", map[string]any{"content": "go", "expires_in": "5s"}, &r); c != http.StatusAccepted {
		t.Fatalf("send: %d", c)
	}
	st.Until(t, "the executing mark", func(e event.Event) bool {
		return e.Type == event.ToolUpdated && e2etest.Payload[event.ToolUpdatedPayload](t, e).Phase == "executing"
	})
	r1.Stop(t, syscall.SIGKILL)

	got := web.WaitRun(t, r.ID, 40*time.Second, "expired", func(r e2etest.RunJSON) bool { return r.Terminal })
	if got.Status != "expired" || got.Error == nil || !strings.HasPrefix(got.Error.Message, "Expired after 5s") {
		t.Fatalf("run = %+v (error %+v), want expired", got, got.Error)
	}
	evs := e2etest.OpenStream(t, web.URL+"/api/runs/"+r.ID+"/events", nil).Drain(t)
	e2etest.CheckJournal(t, evs)
	started := 0
	for _, e := range evs {
		if e.Type == event.RunStarted {
			started++
		}
	}
	if started != 1 || evs[len(evs)-1].Type != event.RunDone {
		t.Fatalf("run started %d times, last event %s", started, evs[len(evs)-1].Type)
	}
}
