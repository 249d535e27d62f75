package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
)

// child is one Caduceus process started by a test. done closes when it has
// exited; err is its exit error after that.
type child struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

// launch starts bin with args and waits until ready accepts a line of its
// stdout. The process is killed when the test ends, and its stderr (with
// the rest of its stdout) is printed if the test failed.
func launch(tb testing.TB, bin, name string, args []string, ready func(line string) bool) (*child, string) {
	tb.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "CADUCEUS_TOKEN=")
	// Should the test binary itself die (a panic, the -timeout), the
	// kernel takes the child with it rather than leaving it behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(tb.TempDir(), name+".log"))
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	c := &child{name: name, cmd: cmd, log: logf.Name(), done: make(chan struct{})}
	linec := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		found := false
		for sc.Scan() {
			line := sc.Text()
			if !found && ready(line) {
				found = true
				linec <- line
				continue
			}
			fmt.Fprintf(logf, "stdout: %s\n", line)
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-c.done
		if tb.Failed() {
			b, _ := os.ReadFile(c.log)
			tb.Logf("%s (pid %d) log:\n%s", name, cmd.Process.Pid, b)
		}
		logf.Close()
	})
	select {
	case line := <-linec:
		return c, line
	case <-c.done:
		b, _ := os.ReadFile(c.log)
		tb.Fatalf("%s exited before it was ready: %v\n%s", name, c.err, b)
	case <-time.After(30 * time.Second):
		tb.Fatalf("%s was not ready within 30s", name)
	}
	return nil, ""
}

// stop sends sig and waits (generously) for the process to exit. It returns
// the exit error; SIGTERM must end the process with status 0.
func (c *child) stop(tb testing.TB, sig syscall.Signal) error {
	tb.Helper()
	if err := c.cmd.Process.Signal(sig); err != nil {
		tb.Fatalf("signal %s: %v", c.name, err)
	}
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		tb.Fatalf("%s did not exit within 30s of %s", c.name, sig)
	}
	if sig == syscall.SIGTERM && c.err != nil {
		tb.Fatalf("%s: graceful stop: %v", c.name, c.err)
	}
	return c.err
}

func (c *child) pid() int { return c.cmd.Process.Pid }

// webProc is `caduceus serve` as a separate process.
type webProc struct {
	*server
	c *child
}

func (w *webProc) stop(tb testing.TB, sig syscall.Signal) error { return w.c.stop(tb, sig) }

// runnerProc is `caduceus runner`: ID and Version come from its ready line.
type runnerProc struct {
	ID      string
	Version string
	c       *child
}

func (r *runnerProc) stop(tb testing.TB, sig syscall.Signal) error { return r.c.stop(tb, sig) }

// startWeb runs the web tier (`serve --runner=none`); extra args come last,
// so they override the defaults.
func startWeb(t *testing.T, dataDir, ws, scriptPath string, extra ...string) *webProc {
	t.Helper()
	return startServeBin(t, binary, dataDir, ws, scriptPath, append([]string{"--runner=none"}, extra...)...)
}

// startServeBin runs `bin serve` with the test defaults and extra args.
func startServeBin(tb testing.TB, bin, dataDir, ws, scriptPath string, extra ...string) *webProc {
	tb.Helper()
	args := []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dataDir, "--workspace", ws,
		"--demo-script", scriptPath, "--lease", "2s", "--max-retries", "0"}
	c, line := launch(tb, bin, "web", append(args, extra...), func(l string) bool {
		return strings.Contains(l, " serving ")
	})
	_, u, _ := strings.Cut(line, " serving ")
	t, _ := tb.(*testing.T)
	return &webProc{server: &server{t: t, URL: strings.TrimSpace(u), DataDir: dataDir, stop: func() {}}, c: c}
}

// startRunner runs `caduceus runner` and waits for its ready line.
func startRunner(t *testing.T, dataDir, ws, scriptPath string, extra ...string) *runnerProc {
	t.Helper()
	return startRunnerBin(t, binary, dataDir, ws, scriptPath, extra...)
}

func startRunnerBin(tb testing.TB, bin, dataDir, ws, scriptPath string, extra ...string) *runnerProc {
	tb.Helper()
	args := []string{"runner", "--data-dir", dataDir, "--workspace", ws, "--demo-script", scriptPath,
		"--lease", "2s", "--grace", "5s"}
	var id, version string
	c, _ := launch(tb, bin, "runner", append(args, extra...), func(l string) bool {
		// Caduceus <version> runner <runner-id> ready
		f := strings.Fields(l)
		if len(f) == 5 && f[0] == "Caduceus" && f[2] == "runner" && f[4] == "ready" {
			version, id = f[1], f[3]
			return true
		}
		return false
	})
	if !strings.HasPrefix(id, "rnr_") {
		tb.Fatalf("runner ready line has no runner id: %q", id)
	}
	return &runnerProc{ID: id, Version: version, c: c}
}

// killPidFile kills, when the test ends, the process groups whose leaders
// wrote their pids into path: commands run by a runner live in their own
// session and survive a SIGKILLed runner.
func killPidFile(t *testing.T, path string) {
	t.Cleanup(func() {
		b, _ := os.ReadFile(path)
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 1 {
				_ = syscall.Kill(-pid, syscall.SIGKILL)
			}
		}
	})
}

// The issue 5 fields of run.status and run.started, decoded here so the
// tests read the wire format rather than the Go types.
type statusJSON struct {
	Status     string `json:"status"`
	Reason     string `json:"reason"`
	Retry      int    `json:"retry"`
	MaxRetries int    `json:"max_retries"`
	RetryAt    string `json:"retry_at"`
}

type startedJSON struct {
	RunnerID string `json:"runner_id"`
	Attempt  int    `json:"attempt"`
	Resumed  bool   `json:"resumed"`
}

type runnerJSON struct {
	ID          string `json:"id"`
	Host        string `json:"host"`
	PID         int    `json:"pid"`
	Version     string `json:"version"`
	StartedAt   string `json:"started_at"`
	HeartbeatAt string `json:"heartbeat_at"`
	RunsHeld    *int   `json:"runs_held"`
}

type healthJSON struct {
	Status     string       `json:"status"`
	Store      string       `json:"store"`
	RunnerMode string       `json:"runner_mode"`
	Runners    []runnerJSON `json:"runners"`
	QueueDepth int          `json:"queue_depth"`
	Recovering int          `json:"recovering"`
	Reason     string       `json:"reason"`
}

// health reads /api/health, keeping the raw body to check "runners": [].
func (s *server) health(t *testing.T) (healthJSON, map[string]json.RawMessage) {
	t.Helper()
	var raw map[string]json.RawMessage
	if c := do(t, "GET", s.URL+"/api/health", nil, &raw); c != http.StatusOK {
		t.Fatalf("health: %d", c)
	}
	b, _ := json.Marshal(raw)
	var h healthJSON
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatalf("health %s: %v", b, err)
	}
	return h, raw
}

// waitRun polls the run until ok holds for it, for at most d.
func (s *server) waitRun(t *testing.T, runID string, d time.Duration, what string, ok func(runJSON) bool) runJSON {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		r := s.run(t, runID)
		if ok(r) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s: still %s after %s, waiting for %s", runID, r.Status, d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func deltas(n int) func(event.Event) bool {
	seen := 0
	return func(e event.Event) bool {
		if e.Type == event.MessageDelta {
			seen++
		}
		return seen >= n
	}
}

func ofType[T any](t *testing.T, evs []event.Event, typ event.Type) []T {
	t.Helper()
	var out []T
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, payload[T](t, e))
		}
	}
	return out
}

// checkOnce asserts what every finished run's journal must show: seqs
// 1..n, one terminal event, and it is the last one.
func checkOnce(t *testing.T, evs []event.Event, wantStatus string) {
	t.Helper()
	defer func() {
		if t.Failed() {
			t.Logf("journal:\n%s", summarize(evs))
		}
	}()
	checkJournal(t, evs)
	terminal := 0
	for _, e := range evs {
		if e.Terminal {
			terminal++
		}
	}
	if terminal != 1 || countType(evs, event.RunDone) != 1 {
		t.Fatalf("journal has %d terminal events and %d run.done, want 1", terminal, countType(evs, event.RunDone))
	}
	last := evs[len(evs)-1]
	if last.Type != event.RunDone {
		t.Fatalf("last event is %s, want run.done", last.Type)
	}
	if d := payload[event.RunDonePayload](t, last); d.Status != wantStatus {
		t.Fatalf("run.done = %+v, want status %s", d, wantStatus)
	}
}

// waitFile waits until path exists and is not empty.
func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s was not written", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// summarize lists a journal one event per line, runs of deltas folded, for
// failure messages.
func summarize(evs []event.Event) string {
	var b strings.Builder
	for i := 0; i < len(evs); i++ {
		e := evs[i]
		if e.Type == event.MessageDelta {
			j := i
			for j+1 < len(evs) && evs[j+1].Type == event.MessageDelta {
				j++
			}
			fmt.Fprintf(&b, "  %d-%d message.delta x%d\n", e.Seq, evs[j].Seq, j-i+1)
			i = j
			continue
		}
		p := string(e.Payload)
		if len(p) > 300 {
			p = p[:300]
		}
		fmt.Fprintf(&b, "  %d %s %s %s\n", e.Seq, e.TS.Format("05.000"), e.Type, p)
	}
	return b.String()
}
