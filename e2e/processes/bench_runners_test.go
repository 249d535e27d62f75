package processes

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
)

// benchSetups are the two deployments compared: one `serve` process that
// runs its own runs, and the web tier with a separate runner process.
var benchSetups = []struct {
	name     string
	separate bool
}{
	{"inprocess", false},
	{"separate", true},
}

// benchDeploy starts setup's processes on a fresh data dir. runner is nil
// for the in-process setup.
func benchDeploy(b *testing.B, separate bool, s demo.Script) (web *e2etest.WebProc, runner *e2etest.RunnerProc) {
	b.Helper()
	if benchBinary == "" {
		b.Fatal("no benchmark binary: TestMain builds it when -test.bench is set")
	}
	dataDir, ws := b.TempDir(), b.TempDir()
	sp := e2etest.WriteScript(b, s)
	if !separate {
		return e2etest.StartServe(b, benchBinary, dataDir, ws, sp), nil
	}
	web = e2etest.StartServe(b, benchBinary, dataDir, ws, sp, "--runner=none")
	return web, e2etest.StartRunner(b, benchBinary, dataDir, ws, sp)
}

func benchPost(b *testing.B, url string, body any, out any) {
	b.Helper()
	raw, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", bytes.NewReader(raw))
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b.Fatalf("POST %s: %d", url, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		b.Fatal(err)
	}
}

// deliveryLatencies runs one message on a new session and returns, for every
// message.delta, the time from the event's ts (taken in the appending
// transaction) to its arrival on the web process's session stream.
func deliveryLatencies(b *testing.B, base string) []float64 {
	b.Helper()
	var ses e2etest.SessionJSON
	benchPost(b, base+"/api/sessions", map[string]any{}, &ses)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/sessions/"+ses.ID+"/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("session stream: %v %v", resp, err)
	}
	defer resp.Body.Close()
	var r e2etest.RunJSON
	benchPost(b, base+"/api/sessions/"+ses.ID+"/messages", map[string]any{"content": "go"}, &r)
	var lat []float64
	rd := bufio.NewReaderSize(resp.Body, 1<<16)
	for {
		line, err := rd.ReadString('\n')
		now := time.Now()
		if err != nil {
			b.Fatalf("stream ended before run.done: %v", err)
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var e event.Event
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			b.Fatal(err)
		}
		switch {
		case e.Type == event.MessageDelta:
			lat = append(lat, float64(now.Sub(e.TS.Time))/float64(time.Millisecond))
		case e.Type == event.RunDone && e.RunID == r.ID:
			return lat
		}
	}
}

// BenchmarkCrossProcessDelivery: how long a streamed fragment takes from its
// journal commit to a client of the web tier, when the runner is the same
// process (in-memory hub wake-up) and when it is another one (wake bus
// datagram). ts has millisecond resolution, so each sample reads up to 1 ms
// high (0.5 ms on average).
func BenchmarkCrossProcessDelivery(b *testing.B) {
	for _, setup := range benchSetups {
		b.Run(setup.name, func(b *testing.B) {
			web, _ := benchDeploy(b, setup.separate, e2etest.Script(e2etest.Turn(e2etest.SlowText(200, 20))))
			var lat []float64
			b.ResetTimer()
			for range b.N {
				lat = append(lat, deliveryLatencies(b, web.URL)...)
			}
			b.StopTimer()
			b.ReportMetric(e2etest.Percentile(lat, 0.50), "p50-ms")
			b.ReportMetric(e2etest.Percentile(lat, 0.99), "p99-ms")
			b.ReportMetric(float64(len(lat))/float64(b.N), "deltas/op")
		})
	}
}

// cpuTicks is the user plus system CPU time of pid in clock ticks.
func cpuTicks(b *testing.B, pid int) int64 {
	b.Helper()
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		b.Fatal(err)
	}
	// The command name may hold spaces; the fields after it do not.
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		b.Fatalf("parse %s: %v %v", raw, err1, err2)
	}
	return ut + st
}

// BenchmarkIdleCPU: what the processes cost while nothing happens (polls,
// heartbeats, watchdog ticks), as a percentage of one core.
func BenchmarkIdleCPU(b *testing.B) {
	const (
		settle  = 2 * time.Second
		window  = 10 * time.Second
		clkTck  = 100 // USER_HZ on Linux
		percent = 100.0
	)
	for _, setup := range benchSetups {
		b.Run(setup.name, func(b *testing.B) {
			web, runner := benchDeploy(b, setup.separate, e2etest.Script(e2etest.Turn(e2etest.Text("idle"))))
			pids := map[string]int{"serve": web.Child.PID()}
			if runner != nil {
				pids = map[string]int{"web": web.Child.PID(), "runner": runner.Child.PID()}
			}
			time.Sleep(settle)
			used := map[string]int64{}
			var wall time.Duration
			b.ResetTimer()
			for range b.N {
				before := map[string]int64{}
				for name, pid := range pids {
					before[name] = cpuTicks(b, pid)
				}
				start := time.Now()
				time.Sleep(window)
				wall += time.Since(start)
				for name, pid := range pids {
					used[name] += cpuTicks(b, pid) - before[name]
				}
			}
			b.StopTimer()
			for name, ticks := range used {
				b.ReportMetric(float64(ticks)/clkTck/wall.Seconds()*percent, name+"-cpu-%")
			}
		})
	}
}
