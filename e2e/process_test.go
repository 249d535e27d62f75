package e2e

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
)

// binary is built once for the process tests; benchBinary, without -race,
// only when benchmarks run.
var binary, benchBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "caduceus-e2e")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "caduceus")
	out, err := exec.Command("go", "build", "-race", "-o", binary, "../cmd/caduceus").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build caduceus: %v\n%s", err, out)
		os.Exit(1)
	}
	// Benchmarks measure the product, not the race detector: they get a
	// binary built without -race.
	flag.Parse()
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		benchBinary = filepath.Join(dir, "caduceus-norace")
		out, err := exec.Command("go", "build", "-o", benchBinary, "../cmd/caduceus").CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "build caduceus (benchmarks): %v\n%s", err, out)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// proc is Caduceus running as a separate process.
type proc struct {
	*server
	cmd  *exec.Cmd
	done chan error
}

// startProc runs `caduceus serve` on dataDir and waits until it serves.
func startProc(t *testing.T, dataDir, workspace, scriptPath string) *proc {
	t.Helper()
	cmd := exec.Command(binary, "serve", "--addr", "127.0.0.1:0", "--data-dir", dataDir,
		"--workspace", workspace, "--demo-script", scriptPath, "--lease", "3s", "--approval-mode", "manual", "--max-retries", "0")
	cmd.Env = append(os.Environ(), "CADUCEUS_TOKEN=")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(t.TempDir(), "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, done: make(chan error, 1)}
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if _, u, ok := strings.Cut(sc.Text(), " serving "); ok {
				urlc <- u
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	go func() { p.done <- cmd.Wait() }()
	select {
	case u := <-urlc:
		p.server = &server{t: t, URL: u, DataDir: dataDir, stop: func() {}}
	case err := <-p.done:
		log, _ := os.ReadFile(logf.Name())
		t.Fatalf("caduceus exited before serving: %v\n%s", err, log)
	case <-time.After(30 * time.Second):
		t.Fatal("caduceus did not start")
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			log, _ := os.ReadFile(logf.Name())
			t.Logf("server log:\n%s", log)
		}
	})
	return p
}

// stop sends sig and waits for the process to exit.
func (p *proc) stop(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		if sig == syscall.SIGTERM && err != nil {
			t.Fatalf("graceful stop: %v", err)
		}
		p.done <- err // for Cleanup
	case <-time.After(20 * time.Second):
		t.Fatal("process did not exit")
	}
}

// A run waiting for approval survives a stop of the process (graceful or
// SIGKILL): after a restart on the same data dir the request is still
// pending, and answering it completes the run.
func TestApprovalSurvivesRestart(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			dataDir, ws := t.TempDir(), t.TempDir()
			sp := writeScript(t, script(
				turn(text("I will run it."), call("run_command", `{"command":"echo survived > proof.txt"}`)),
				turn(text("Done after restart.")),
			))
			p := startProc(t, dataDir, ws, sp)
			sid := p.newSession(t)
			r := p.send(t, sid, "go")
			p.waitStatus(t, r.ID, "awaiting_approval")
			reqID := p.pending(t)[0].ID
			p.stop(t, sig)

			p2 := startProc(t, dataDir, ws, sp)
			pend := p2.pending(t)
			if len(pend) != 1 || pend[0].ID != reqID {
				t.Fatalf("after restart pending = %+v, want %s", pend, reqID)
			}
			// Give the new runner time to re-claim the waiting run.
			p2.waitStatus(t, r.ID, "awaiting_approval")
			st := openStream(t, p2.URL+"/api/runs/"+r.ID+"/events", nil)
			if c := do(t, "POST", p2.URL+"/api/requests/"+reqID+"/respond", map[string]string{"choice": "once"}, nil); c != 200 {
				t.Fatalf("respond: %d", c)
			}
			evs := st.drain(t)
			checkJournal(t, evs)
			if d := payload[event.RunDonePayload](t, evs[len(evs)-1]); d.Status != "completed" {
				t.Fatalf("final status %s", d.Status)
			}
			if n := countType(evs, event.ToolStarted); n != 1 {
				t.Fatalf("%d tool.started events: the call was announced twice", n)
			}
			b, err := os.ReadFile(filepath.Join(ws, "proof.txt"))
			if err != nil || strings.TrimSpace(string(b)) != "survived" {
				t.Fatalf("approved command did not run once after restart: %q %v", b, err)
			}
		})
	}
}

// SIGKILL mid-stream: after a restart the run is interrupted with a
// diagnostic that says the worker stopped, and its journal is intact.
func TestKillMidStreamInterrupts(t *testing.T) {
	dataDir, ws := t.TempDir(), t.TempDir()
	sp := writeScript(t, demo.Script{Scenarios: []demo.Scenario{{Turns: []demo.Turn{turn(slowText(500, 10))}}}})
	p := startProc(t, dataDir, ws, sp)
	sid := p.newSession(t)
	st := openStream(t, p.URL+"/api/sessions/"+sid+"/events", nil)
	r := p.send(t, sid, "go")
	n := 0
	live := st.until(t, "deltas", func(e event.Event) bool {
		if e.Type == event.MessageDelta {
			n++
		}
		return n == 30
	})
	p.stop(t, syscall.SIGKILL)
	live = ofRuns(live) // the session stream began with session.created

	p2 := startProc(t, dataDir, ws, sp)
	got := p2.waitStatus(t, r.ID, "interrupted")
	if got.Terminal {
		t.Fatal("interrupted must not be terminal: the run is resumable")
	}
	// The run stream does not end (no terminal event): read what is there.
	evs := openStream(t, p2.URL+"/api/runs/"+r.ID+"/events", nil).until(t, "diagnostic", isType(event.Diagnostic))
	checkJournal(t, evs)
	if len(evs) < len(live) {
		t.Fatalf("journal has %d events, the client saw %d live", len(evs), len(live))
	}
	for i, e := range live {
		if evs[i].ID != e.ID || string(evs[i].Payload) != string(e.Payload) {
			t.Fatalf("journal event %d differs from what was streamed", i)
		}
	}
	d := payload[event.DiagnosticPayload](t, evs[len(evs)-1])
	if d.Code != "worker_stopped" || !strings.Contains(d.Message, "stopped") || d.Details["last_event_type"] == "" {
		t.Fatalf("diagnostic = %+v", d)
	}
	st2 := payload[event.RunStatusPayload](t, evs[len(evs)-2])
	if st2.Status != "interrupted" {
		t.Fatalf("status event = %+v", st2)
	}
	// The session is not stuck: a new message runs.
	r2 := p2.send(t, sid, "next")
	p2.waitStatus(t, r2.ID, "running")
}

// The binary prints its version, and refuses a non-loopback address
// without a token, saying what to do.
func TestBinaryCommands(t *testing.T) {
	out, err := exec.Command(binary, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "caduceus ") {
		t.Fatalf("version: %q %v", out, err)
	}
	cmd := exec.Command(binary, "serve", "--addr", "0.0.0.0:0", "--data-dir", t.TempDir(), "--workspace", t.TempDir())
	cmd.Env = append(os.Environ(), "CADUCEUS_TOKEN=")
	b, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(b), "CADUCEUS_TOKEN") {
		t.Fatalf("non-loopback bind without token: err %v, output %q", err, b)
	}
	b, err = exec.Command(binary, "frobnicate").CombinedOutput()
	if err == nil || !strings.Contains(string(b), "unknown command") {
		t.Fatalf("unknown command: %v %q", err, b)
	}
}
