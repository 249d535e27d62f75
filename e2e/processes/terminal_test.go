package processes

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

// TestTerminalSweptAfterCrash: what a terminal started outlives a
// SIGKILLed server only until the next runner sweeps, even a job that
// ignores the hang-up the dying pty sends: the web tier recorded the shell
// in <data-dir>/procs like a background command.
func TestTerminalSweptAfterCrash(t *testing.T) {
	dataDir, ws := t.TempDir(), t.TempDir()
	e2etest.KillPidFile(t, filepath.Join(ws, "job.pid"))
	sp := e2etest.WriteScript(t, e2etest.Script(e2etest.Turn(e2etest.Text("ok"))))
	p := e2etest.StartServe(t, binary, dataDir, ws, sp)
	sid := p.Server.NewSession(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(p.Server.URL, "http")+"/api/sessions/"+sid+"/terminal", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	go func() {
		for {
			if _, _, err := c.Read(ctx); err != nil {
				return
			}
		}
	}()
	job := `(trap '' HUP; while :; do date +%s%N >> ticks; sleep 0.1; done) & echo $! > job.pid; disown` + "\n"
	if err := c.Write(ctx, websocket.MessageBinary, []byte(job)); err != nil {
		t.Fatal(err)
	}
	e2etest.WaitFile(t, filepath.Join(ws, "job.pid"))
	pid := readPID(t, filepath.Join(ws, "job.pid"))
	if recs := records(t, dataDir); len(recs) != 1 || recs[0].SessionID != sid || !strings.HasPrefix(recs[0].RunnerID, "web_") {
		t.Fatalf("records while the terminal runs = %+v, want the web tier's one", recs)
	}
	ticks := filepath.Join(ws, "ticks")
	if !growing(ticks) {
		t.Fatal("the job does not run")
	}

	p.Stop(t, syscall.SIGKILL)
	// The pty's hang-up does not reach the job: it still runs.
	if !growing(ticks) {
		t.Fatal("the job died with the server; the test shows nothing")
	}
	killed := time.Now()
	e2etest.StartRunner(t, binary, dataDir, ws, sp)
	for deadline := killed.Add(15 * time.Second); alive(pid); {
		if time.Now().After(deadline) {
			t.Fatalf("the terminal's job (pid %d) still runs %s after the crash", pid, time.Since(killed).Round(time.Millisecond))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if growing(ticks) {
		t.Error("the job's loop still writes")
	}
	for deadline := time.Now().Add(5 * time.Second); len(records(t, dataDir)) != 0; {
		if time.Now().After(deadline) {
			t.Fatalf("records after the sweep: %+v", records(t, dataDir))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
