package processes

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/proctrack"
)

// A background command outlives a SIGKILLed runner only until someone
// sweeps: the web tier's watchdog, or the next runner as it starts. Its
// whole process group is killed and its record removed.
func TestBackgroundProcessDiesWithItsRunner(t *testing.T) {
	// The loop writes a tick every 100 ms: while the file grows, the
	// command lives.
	command := `echo $$ > pid; while :; do date +%s%N >> ticks; sleep 0.1; done`
	tests := []struct {
		name string
		// start starts what runs the command and returns a function that
		// SIGKILLs it and starts what should clean up after it.
		start func(t *testing.T, dataDir, ws, sp string) (*e2etest.Server, func())
	}{
		{"the web tier's watchdog", func(t *testing.T, dataDir, ws, sp string) (*e2etest.Server, func()) {
			web := e2etest.StartWeb(t, binary, dataDir, ws, sp, "--approval-mode", "off")
			r := e2etest.StartRunner(t, binary, dataDir, ws, sp, "--approval-mode", "off")
			return web.Server, func() { r.Stop(t, syscall.SIGKILL) }
		}},
		{"the next runner", func(t *testing.T, dataDir, ws, sp string) (*e2etest.Server, func()) {
			p := e2etest.StartServe(t, binary, dataDir, ws, sp, "--approval-mode", "off")
			return p.Server, func() {
				p.Stop(t, syscall.SIGKILL)
				e2etest.StartRunner(t, binary, dataDir, ws, sp, "--approval-mode", "off")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dataDir, ws := t.TempDir(), t.TempDir()
			e2etest.KillPidFile(t, filepath.Join(ws, "pid"))
			args, _ := json.Marshal(map[string]any{"command": command, "background": true, "timeout_s": 300})
			sp := e2etest.WriteScript(t, e2etest.Script(
				e2etest.Turn(e2etest.Call("run_command", string(args))),
				e2etest.Turn(e2etest.Text("It runs in the background.")),
			))
			s, killAndReplace := tt.start(t, dataDir, ws, sp)
			sid := s.NewSession(t)
			r := s.Send(t, sid, "start the loop")
			s.WaitStatus(t, r.ID, "completed")
			e2etest.WaitFile(t, filepath.Join(ws, "pid"))
			pid := readPID(t, filepath.Join(ws, "pid"))

			recs := records(t, dataDir)
			if len(recs) != 1 || recs[0].PID != pid || recs[0].RunID != r.ID || recs[0].SessionID != sid || recs[0].Command != command {
				t.Fatalf("records while it runs = %+v, want one for pid %d of run %s", recs, pid, r.ID)
			}
			ticks := filepath.Join(ws, "ticks")
			if !growing(ticks) {
				t.Fatal("the background loop does not run")
			}

			killed := time.Now()
			killAndReplace()
			// Swept every lease/3 (e2etest.ProcLease) by the web
			// tier, at once by a runner that starts: 15 s is a bound for
			// a loaded machine, not a measurement.
			deadline := killed.Add(15 * time.Second)
			for alive(pid) {
				if time.Now().After(deadline) {
					t.Fatalf("the background command (pid %d) still runs %s after its runner was killed", pid, time.Since(killed).Round(time.Millisecond))
				}
				time.Sleep(20 * time.Millisecond)
			}
			t.Logf("killed %s after its runner", time.Since(killed).Round(time.Millisecond))
			if growing(ticks) {
				t.Error("the loop's children still write: its process group was not killed")
			}
			for deadline := time.Now().Add(5 * time.Second); len(records(t, dataDir)) != 0; {
				if time.Now().After(deadline) {
					t.Fatalf("records after the sweep: %+v", records(t, dataDir))
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// alive reports whether pid runs (a zombie nobody reaped yet has ended).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || !strings.HasPrefix(string(b[i+1:]), " Z") && !strings.HasPrefix(string(b[i+1:]), " X")
}

// growing reports whether the file grows within half a second (the loop
// writes every 100 ms).
func growing(path string) bool {
	size := func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	before := size()
	time.Sleep(500 * time.Millisecond)
	return size() > before
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		t.Fatalf("pid file %q: %v", b, err)
	}
	return pid
}

// records reads the background process records of the data dir.
func records(t *testing.T, dataDir string) []proctrack.Record {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dataDir, "procs", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out []proctrack.Record
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // removed meanwhile
		}
		var rec proctrack.Record
		if err := json.Unmarshal(b, &rec); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, rec)
	}
	return out
}
