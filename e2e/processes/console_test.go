package processes

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

// consoleProcess is a process as GET /api/processes lists it.
type consoleProcess struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	PID      int    `json:"pid"`
	RunID    string `json:"run_id"`
	Output   bool   `json:"output"`
	Reason   string `json:"reason"`
	RunnerID string `json:"runner_id"`
}

func listed(t *testing.T, s *e2etest.Server, pid int) (consoleProcess, bool) {
	t.Helper()
	var out struct {
		Processes []consoleProcess `json:"processes"`
	}
	if code := e2etest.Do(t, "GET", s.URL+"/api/processes", nil, &out); code != http.StatusOK {
		t.Fatalf("GET /api/processes: %d", code)
	}
	for _, p := range out.Processes {
		if p.PID == pid {
			return p, true
		}
	}
	return consoleProcess{}, false
}

func waitListed(t *testing.T, s *e2etest.Server, pid int, status string) consoleProcess {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		p, ok := listed(t, s, pid)
		if ok && p.Status == status {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d listed as %+v (found %v), want status %s", pid, p, ok, status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The web tier (no runner of its own) lists a background process of a
// runner process of this host through its record; once that runner is
// SIGKILLed, a sweep either kills the process and the list says so, or,
// with --kill-orphans=false, leaves it running as orphaned until a person
// kills it from the console.
func TestConsoleListsAndKillsAnotherRunnersProcesses(t *testing.T) {
	command := `echo $$ > pid; while :; do date +%s%N >> ticks; sleep 0.1; done`
	for _, keep := range []bool{false, true} {
		name := "orphans killed by the sweep"
		if keep {
			name = "orphans kept for a person"
		}
		t.Run(name, func(t *testing.T) {
			dataDir, ws := t.TempDir(), t.TempDir()
			e2etest.KillPidFile(t, filepath.Join(ws, "pid"))
			args, _ := json.Marshal(map[string]any{"command": command, "background": true, "timeout_s": 300})
			sp := e2etest.WriteScript(t, e2etest.Script(
				e2etest.Turn(e2etest.Call("run_command", string(args))),
				e2etest.Turn(e2etest.Text("It runs in the background.")),
			))
			flags := []string{"--approval-mode", "off"}
			if keep {
				flags = append(flags, "--kill-orphans=false")
			}
			web := e2etest.StartWeb(t, binary, dataDir, ws, sp, flags...)
			r := e2etest.StartRunner(t, binary, dataDir, ws, sp, flags...)
			s := web.Server
			sid := s.NewSession(t)
			run := s.Send(t, sid, "start the loop")
			s.WaitStatus(t, run.ID, "completed")
			e2etest.WaitFile(t, filepath.Join(ws, "pid"))
			pid := readPID(t, filepath.Join(ws, "pid"))

			p := waitListed(t, s, pid, "running")
			if p.Output || p.RunID != run.ID || p.RunnerID == "" {
				t.Errorf("listed %+v", p)
			}
			var e e2etest.ErrorJSON
			if code := e2etest.Do(t, "GET", s.URL+"/api/processes/"+p.ID+"/log", nil, &e); code != http.StatusConflict || e.Error.Code != "no_output" {
				t.Errorf("log of another runner's process: %d %s", code, e.Error.Code)
			}

			_ = r.Stop(t, syscall.SIGKILL)
			ticks := filepath.Join(ws, "ticks")
			if !keep {
				p = waitListed(t, s, pid, "killed")
				// The note is written as the signal is sent; the process
				// goes a moment later.
				for deadline := time.Now().Add(5 * time.Second); alive(pid); time.Sleep(20 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatalf("pid %d listed killed but still runs 5 s later", pid)
					}
				}
				if growing(ticks) {
					t.Fatalf("pid %d listed killed but its loop goes on", pid)
				}
				if p.Reason != "killed by the sweep: its runner is gone" {
					t.Errorf("reason %q", p.Reason)
				}
				return
			}
			p = waitListed(t, s, pid, "orphaned")
			// Several sweeps later it still runs: kept.
			time.Sleep(3 * time.Second)
			if !alive(pid) || !growing(ticks) {
				t.Fatal("an orphan kept for a person was killed")
			}
			if p, _ = listed(t, s, pid); p.Status != "orphaned" {
				t.Fatalf("after more sweeps: %+v", p)
			}
			var killed struct {
				Process consoleProcess `json:"process"`
			}
			if code := e2etest.Do(t, "POST", s.URL+"/api/processes/"+p.ID+"/kill", nil, &killed); code != http.StatusOK || killed.Process.Status != "killed" {
				t.Fatalf("kill: %d %+v", code, killed.Process)
			}
			for deadline := time.Now().Add(5 * time.Second); alive(pid); {
				if time.Now().After(deadline) {
					t.Fatalf("pid %d still runs after the kill", pid)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if growing(ticks) {
				t.Error("the loop's children still write")
			}
			if code := e2etest.Do(t, "POST", s.URL+"/api/processes/"+p.ID+"/kill", nil, nil); code != http.StatusOK {
				t.Errorf("a second kill answered %d", code)
			}
			waitListed(t, s, pid, "killed")
		})
	}
}
