package browser

import (
	"net/http"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

// An expired run (h17-expiry) ends with "Expired after 2s" in the err
// tone, live and after a reload.
func TestUIExpiredRunEnd(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(
		e2etest.Turn(e2etest.Text("Sleeping."), e2etest.Call("run_command", `{"command":"sleep 10"}`)),
		e2etest.Turn(e2etest.Text("Slept.")),
	), e2etest.WithApprovalMode("off"))
	sid := s.NewSession(t)
	b := openBrowser(t, s)
	b.navigate("/s/" + sid)
	b.waitSessionLoaded()
	var r e2etest.RunJSON
	if c := e2etest.Do(t, "POST", s.URL+"/api/sessions/"+sid+"/messages", map[string]any{"content": "sleep", "expires_in": "2s"}, &r); c != http.StatusAccepted {
		t.Fatalf("send: %d", c)
	}
	end := "[data-testid=run-end][data-status=expired]"
	check := func(when string) {
		b.waitJSFor("'Expired after 2s' "+when, q(end)+"?.textContent.trim().startsWith('Expired after 2s')", 20*time.Second)
		if !eval[bool](b, q(end)+".closest('.run-end').classList.contains('tone-err')") {
			t.Errorf("%s: the expired end line is not in the err tone", when)
		}
		b.waitJS("the header badge idle "+when, q("[data-testid=run-status]")+"?.dataset.status === 'idle'")
	}
	check("live")
	b.navigate("/s/" + sid)
	check("after a reload")
}
