package processes

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
)

// startProc runs `caduceus serve` with its own runner on dataDir and the
// store dbArgs name (see e2etest.EachStore), asking before every command,
// and waits until it serves.
func startProc(t *testing.T, dbArgs []string, dataDir, workspace, scriptPath string) *e2etest.WebProc {
	t.Helper()
	return e2etest.StartServe(t, binary, dataDir, workspace, scriptPath, append([]string{"--lease", "3s", "--approval-mode", "manual"}, dbArgs...)...)
}

// A run waiting for approval survives a stop of the process (graceful or
// SIGKILL): after a restart on the same data dir the request is still
// pending, and answering it completes the run.
func TestApprovalSurvivesRestart(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			e2etest.EachStore(t, pg, func(t *testing.T, dbArgs []string) {
				dataDir, ws := t.TempDir(), t.TempDir()
				sp := e2etest.WriteScript(t, e2etest.Script(
					e2etest.Turn(e2etest.Text("I will run it."), e2etest.Call("run_command", `{"command":"echo survived > proof.txt"}`)),
					e2etest.Turn(e2etest.Text("Done after restart.")),
				))
				p := startProc(t, dbArgs, dataDir, ws, sp)
				sid := p.NewSession(t)
				r := p.Send(t, sid, "go")
				p.WaitStatus(t, r.ID, "awaiting_approval")
				reqID := p.Pending(t)[0].ID
				p.Stop(t, sig)

				p2 := startProc(t, dbArgs, dataDir, ws, sp)
				pend := p2.Pending(t)
				if len(pend) != 1 || pend[0].ID != reqID {
					t.Fatalf("after restart pending = %+v, want %s", pend, reqID)
				}
				// Give the new runner time to re-claim the waiting run.
				p2.WaitStatus(t, r.ID, "awaiting_approval")
				st := e2etest.OpenStream(t, p2.URL+"/api/runs/"+r.ID+"/events", nil)
				if c := e2etest.Do(t, "POST", p2.URL+"/api/requests/"+reqID+"/respond", map[string]string{"choice": "once"}, nil); c != 200 {
					t.Fatalf("respond: %d", c)
				}
				evs := st.Drain(t)
				e2etest.CheckJournal(t, evs)
				if d := e2etest.Payload[event.RunDonePayload](t, evs[len(evs)-1]); d.Status != "completed" {
					t.Fatalf("final status %s", d.Status)
				}
				if n := e2etest.CountType(evs, event.ToolStarted); n != 1 {
					t.Fatalf("%d tool.started events: the call was announced twice", n)
				}
				b, err := os.ReadFile(filepath.Join(ws, "proof.txt"))
				if err != nil || strings.TrimSpace(string(b)) != "survived" {
					t.Fatalf("approved command did not run once after restart: %q %v", b, err)
				}
			})
		})
	}
}

// SIGKILL mid-stream: after a restart the run is interrupted with a
// diagnostic that says the worker stopped, and its journal is intact.
func TestKillMidStreamInterrupts(t *testing.T) { e2etest.EachStore(t, pg, testKillMidStreamInterrupts) }

func testKillMidStreamInterrupts(t *testing.T, dbArgs []string) {
	dataDir, ws := t.TempDir(), t.TempDir()
	sp := e2etest.WriteScript(t, demo.Script{Scenarios: []demo.Scenario{{Turns: []demo.Turn{e2etest.Turn(e2etest.SlowText(500, 10))}}}})
	p := startProc(t, dbArgs, dataDir, ws, sp)
	sid := p.NewSession(t)
	st := e2etest.OpenStream(t, p.URL+"/api/sessions/"+sid+"/events", nil)
	r := p.Send(t, sid, "go")
	n := 0
	live := st.Until(t, "deltas", func(e event.Event) bool {
		if e.Type == event.MessageDelta {
			n++
		}
		return n == 30
	})
	p.Stop(t, syscall.SIGKILL)
	live = e2etest.OfRuns(live) // the session stream began with session.created

	p2 := startProc(t, dbArgs, dataDir, ws, sp)
	got := p2.WaitStatus(t, r.ID, "interrupted")
	if got.Terminal {
		t.Fatal("interrupted must not be terminal: the run is resumable")
	}
	// The run stream does not end (no terminal event): read what is there.
	evs := e2etest.OpenStream(t, p2.URL+"/api/runs/"+r.ID+"/events", nil).Until(t, "diagnostic", e2etest.IsType(event.Diagnostic))
	e2etest.CheckJournal(t, evs)
	if len(evs) < len(live) {
		t.Fatalf("journal has %d events, the client saw %d live", len(evs), len(live))
	}
	for i, e := range live {
		if evs[i].ID != e.ID || string(evs[i].Payload) != string(e.Payload) {
			t.Fatalf("journal event %d differs from what was streamed", i)
		}
	}
	d := e2etest.Payload[event.DiagnosticPayload](t, evs[len(evs)-1])
	if d.Code != "worker_stopped" || !strings.Contains(d.Message, "stopped") || d.Details["last_event_type"] == "" {
		t.Fatalf("diagnostic = %+v", d)
	}
	st2 := e2etest.Payload[event.RunStatusPayload](t, evs[len(evs)-2])
	if st2.Status != "interrupted" {
		t.Fatalf("status event = %+v", st2)
	}
	// The session is not stuck: a new message runs.
	r2 := p2.Send(t, sid, "next")
	p2.WaitStatus(t, r2.ID, "running")
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
