package processes

import (
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

// raceMemoryBound is what TestSlowReplaysMemoryBound allows the server:
// twice the documented bound of 300 MB (docs/API.md, "Connections"),
// because the test runs the -race binary, whose RSS is about twice the
// plain one's (60 MB idle against 23). Before replays were paged by bytes
// the plain binary reached 1.9 GB in this scenario.
const raceMemoryBound = 600 << 20

// 200 clients replaying a 20 MB history through 4 KiB receive windows,
// reading slowly, keep the server's RSS under a bound, and none of them
// is refused or dropped (each client is its own address).
func TestSlowReplaysMemoryBound(t *testing.T) {
	if testing.Short() {
		t.Skip("200 slow clients for 5 s")
	}
	sc := replayScenario
	dataDir, ws := t.TempDir(), t.TempDir()
	sid, _ := seedHistory(t, dataDir, ws, sc.history)
	web := e2etest.StartServe(t, binary, dataDir, ws, e2etest.WriteScript(t, e2etest.Script(e2etest.Turn(e2etest.Text("hi")))))
	pid := web.Child.PID()
	idle := rssBytes(t, pid)
	stopPeak := peakRSS(t, pid)
	stop := slowReplays(t, strings.TrimPrefix(web.URL, "http://"), "/api/sessions/"+sid+"/events", sc.load)
	time.Sleep(5 * time.Second)
	read, dropped := stop()
	peak := stopPeak()
	t.Logf("server RSS: idle %d MB, peak %d MB with %d slow clients (%d MB read)", idle>>20, peak>>20, sc.load.clients, read>>20)
	if dropped > 0 {
		t.Errorf("%d of %d slow clients were refused or dropped", dropped, sc.load.clients)
	}
	if peak > raceMemoryBound {
		t.Fatalf("server RSS peaked at %d MB, bound %d MB", peak>>20, raceMemoryBound>>20)
	}
}
