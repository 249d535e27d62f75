package cluster

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
)

// benchWeb runs a web node of the benchmark binary on url, with a lease
// long enough that runners stopped for a while (BenchmarkClaimThroughput)
// keep their registration.
func benchWeb(b *testing.B, url, ws, sp string) *e2etest.WebProc {
	b.Helper()
	return e2etest.StartServe(b, benchBin(b), b.TempDir(), ws, sp, "--runner=none", "--database", url,
		"--approval-mode", "off", "--lease", "15s")
}

func benchRunner(b *testing.B, url, ws, sp string) *e2etest.RunnerProc {
	b.Helper()
	return startRunner(b, benchBin(b), "", url, ws, sp, "--lease", "15s")
}

func benchBin(b *testing.B) string {
	b.Helper()
	if benchBinary == "" {
		b.Fatal("no benchmark binary: TestMain builds it when -test.bench is set")
	}
	return benchBinary
}

func benchPost(b *testing.B, url string, body, out any) {
	b.Helper()
	if err := post(url, body, out); err != nil {
		b.Fatal(err)
	}
}

// deliveryLatencies sends one message through web node `send` on a new
// session whose stream a client reads from web node `read`, and returns,
// for every message.delta, the time from the event's ts (taken in the
// runner's appending transaction) to its arrival at the client.
func deliveryLatencies(b *testing.B, send, read string) []float64 {
	b.Helper()
	var ses e2etest.SessionJSON
	benchPost(b, send+"/api/sessions", map[string]any{}, &ses)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", read+"/api/sessions/"+ses.ID+"/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("session stream: %v %v", resp, err)
	}
	defer resp.Body.Close()
	var r e2etest.RunJSON
	benchPost(b, send+"/api/sessions/"+ses.ID+"/messages", map[string]any{"content": "go"}, &r)
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

// BenchmarkCrossNodeDelivery: how long a streamed fragment takes from the
// runner's append (a separate process) to a client of a web node, on one
// PostgreSQL database over TCP: `one-web` is the baseline (one web node,
// which created the run and serves the client), `other-web` has two web
// nodes and the client on the one that did not create the run. Either way
// the web node learns of the commit by LISTEN/NOTIFY. ts has millisecond
// resolution, so each sample reads up to 1 ms high.
func BenchmarkCrossNodeDelivery(b *testing.B) {
	for _, other := range []bool{false, true} {
		name := map[bool]string{false: "one-web", true: "other-web"}[other]
		b.Run(name, func(b *testing.B) {
			url := pgBench.DatabaseTCP(b)
			ws := b.TempDir()
			sp := e2etest.WriteScript(b, e2etest.Script(e2etest.Turn(e2etest.SlowText(200, 20))))
			send := benchWeb(b, url, ws, sp)
			read := send
			if other {
				read = benchWeb(b, url, ws, sp)
			}
			benchRunner(b, url, ws, sp)
			var lat []float64
			b.ResetTimer()
			for range b.N {
				lat = append(lat, deliveryLatencies(b, send.URL, read.URL)...)
			}
			b.StopTimer()
			b.ReportMetric(e2etest.Percentile(lat, 0.50), "p50-ms")
			b.ReportMetric(e2etest.Percentile(lat, 0.99), "p99-ms")
			b.ReportMetric(float64(len(lat))/float64(b.N), "deltas/op")
		})
	}
}

// claimRuns is how many queued runs one iteration of
// BenchmarkClaimThroughput drains.
const claimRuns = 200

// BenchmarkClaimThroughput: runners (separate processes) on one database
// draining claimRuns queued trivial runs (one short answer each), 1 runner
// (the baseline) against 4. The runners are started first and stopped
// (SIGSTOP) while the runs are queued, then continued together: runs/s is
// claimRuns over the time from the first run.started to the last run.done,
// both from the journal.
func BenchmarkClaimThroughput(b *testing.B) {
	for _, n := range []int{1, 4} {
		b.Run(fmt.Sprintf("runners-%d", n), func(b *testing.B) {
			url := pgBench.DatabaseTCP(b)
			ws := b.TempDir()
			sp := e2etest.WriteScript(b, demo.Script{Scenarios: []demo.Scenario{{Turns: []demo.Turn{e2etest.Turn(e2etest.Text("ok"))}}}})
			web := benchWeb(b, url, ws, sp)
			var runners []*e2etest.RunnerProc
			for range n {
				runners = append(runners, benchRunner(b, url, ws, sp))
			}
			var total time.Duration
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				signal(b, runners, syscall.SIGSTOP)
				ids := enqueue(b, web.URL, claimRuns)
				signal(b, runners, syscall.SIGCONT)
				b.StartTimer()
				first, last := drained(b, web.URL, ids)
				total += last.Sub(first)
			}
			b.StopTimer()
			b.ReportMetric(float64(claimRuns*b.N)/total.Seconds(), "runs/s")
		})
	}
}

func signal(b *testing.B, runners []*e2etest.RunnerProc, sig syscall.Signal) {
	b.Helper()
	for _, r := range runners {
		if err := syscall.Kill(r.Child.PID(), sig); err != nil {
			b.Fatal(err)
		}
	}
}

// enqueue queues n runs, one per new session, eight clients at a time.
func enqueue(b *testing.B, base string, n int) []string {
	b.Helper()
	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	work := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range work {
				var ses e2etest.SessionJSON
				if errs[i] = post(base+"/api/sessions", map[string]any{}, &ses); errs[i] != nil {
					continue
				}
				var r e2etest.RunJSON
				errs[i] = post(base+"/api/sessions/"+ses.ID+"/messages", map[string]any{"content": "go"}, &r)
				ids[i] = r.ID
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
	return ids
}

// post is benchPost for goroutines other than the benchmark's.
func post(url string, body, out any) error {
	raw, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", bytes.NewReader(raw))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST %s: %d", url, resp.StatusCode)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// drained waits for every run of ids to end and returns the first
// run.started and the last run.done, from their journals.
func drained(b *testing.B, base string, ids []string) (first, last time.Time) {
	b.Helper()
	for _, id := range ids {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/runs/"+id+"/events", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			cancel()
			b.Fatalf("run stream: %v %v", resp, err)
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var e event.Event
			if err := json.Unmarshal([]byte(data), &e); err != nil {
				b.Fatal(err)
			}
			switch e.Type {
			case event.RunStarted:
				if first.IsZero() || e.TS.Before(first) {
					first = e.TS.Time
				}
			case event.RunDone:
				if e.TS.After(last) {
					last = e.TS.Time
				}
			}
		}
		resp.Body.Close()
		cancel()
	}
	return first, last
}
