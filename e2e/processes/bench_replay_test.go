package processes

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

// replayScenario is issue 12's load: 200 clients replay a session with a
// 20 MB history through 4 KiB receive buffers, each reading 4 KiB every
// 50 ms (80 KB/s), for window; then every stream is cut.
var replayScenario = struct {
	history int
	load    slowLoad
	window  time.Duration
	settle  time.Duration
}{
	history: 20 << 20,
	load:    slowLoad{clients: 200, rcvbuf: 4 << 10, chunk: 4 << 10, pause: 50 * time.Millisecond},
	window:  15 * time.Second,
	settle:  5 * time.Second,
}

// BenchmarkSlowReplayMemory: the server's RSS while 200 slow clients
// replay a 20 MB history, against the same server idle with that history.
// One iteration is a fresh server process on a freshly seeded data dir:
// idle-MB is its RSS 1 s after it started serving, peak-MB the highest RSS
// sampled (every 50 ms) while the clients read, after-MB its RSS settle
// after every stream was cut. read-MB is what the clients received in all.
func BenchmarkSlowReplayMemory(b *testing.B) {
	if benchBinary == "" {
		b.Fatal("no benchmark binary: TestMain builds it when -test.bench is set")
	}
	sc := replayScenario
	const mb = 1 << 20
	var idle, peak, after, read, history float64
	for range b.N {
		b.StopTimer()
		dataDir, ws := b.TempDir(), b.TempDir()
		sid, written := seedHistory(b, dataDir, ws, sc.history)
		web := e2etest.StartServe(b, benchBinary, dataDir, ws, e2etest.WriteScript(b, e2etest.Script(e2etest.Turn(e2etest.Text("hi")))))
		pid := web.Child.PID()
		time.Sleep(time.Second)
		idle += float64(rssBytes(b, pid)) / mb
		b.StartTimer()

		stopPeak := peakRSS(b, pid)
		stop := slowReplays(b, strings.TrimPrefix(web.URL, "http://"), "/api/sessions/"+sid+"/events", sc.load)
		time.Sleep(sc.window)
		n, dropped := stop()
		time.Sleep(sc.settle)
		peak += float64(stopPeak()) / mb
		after += float64(rssBytes(b, pid)) / mb

		b.StopTimer()
		if dropped > 0 {
			b.Errorf("%d of %d slow clients were refused or dropped", dropped, sc.load.clients)
		}
		read += float64(n) / mb
		history += float64(written) / mb
		web.Child.Stop(b, syscall.SIGTERM)
	}
	n := float64(b.N)
	b.ReportMetric(history/n, "history-MB")
	b.ReportMetric(idle/n, "idle-MB")
	b.ReportMetric(peak/n, "peak-MB")
	b.ReportMetric(after/n, "after-MB")
	b.ReportMetric(read/n, "read-MB")
}
