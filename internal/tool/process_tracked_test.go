//go:build linux

package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/proctrack"
)

// trackedFixture is a process table with a registry of its own.
func trackedFixture(t *testing.T, cfg Config) (*procFixture, *proctrack.Registry) {
	t.Helper()
	reg, err := proctrack.Open(filepath.Join(t.TempDir(), "procs"), "rnr_test", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	table := NewProcessTable(0, 0, reg)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := table.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	cfg.Processes = table
	return &procFixture{t: t, ws: workspace(t, nil), table: table, run: NewRunCommand(cfg), proc: NewProcess(cfg)}, reg
}

// A background process is recorded, with its run, while it runs, and
// its record goes when it ends, however it ends.
func TestBackgroundTracked(t *testing.T) {
	tests := []struct {
		name    string
		command string
		end     func(f *procFixture, id string)
	}{
		{"killed", "echo $CADUCEUS_PROCESS; sleep 30", func(f *procFixture, id string) {
			f.do("s", map[string]any{"action": "kill", "process_id": id})
		}},
		{"exits", "echo $CADUCEUS_PROCESS; while [ ! -e stop ]; do sleep 0.05; done", func(f *procFixture, id string) {
			must(f.t, os.WriteFile(filepath.Join(f.ws, "stop"), nil, 0o600))
		}},
		{"times out", "echo $CADUCEUS_PROCESS; sleep 30", func(f *procFixture, id string) { f.readUntilEnd("s", id) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, reg := trackedFixture(t, Config{BackgroundTimeout: 20 * time.Second})
			timeout := 20
			if tt.name == "times out" {
				timeout = 1
			}
			args, _ := json.Marshal(map[string]any{"command": tt.command, "background": true, "timeout_s": timeout})
			start := time.Now()
			res := callEnv(t, context.Background(), f.run, Env{Workspace: f.ws, SessionID: "s", RunID: "run_1"}, string(args))
			if res.Status != event.ToolOK {
				t.Fatalf("start: %s %s", res.Status, res.Output)
			}
			d := res.Data.(BackgroundData)
			recs, err := reg.Records()
			if err != nil || len(recs) != 1 {
				t.Fatalf("records while it runs = %+v, %v", recs, err)
			}
			rec := recs[0]
			wantDeadline := start.Add(time.Duration(timeout) * time.Second)
			if rec.ProcessID != d.ProcessID || rec.PID != d.PID || rec.PGID != d.PID || rec.RunID != "run_1" || rec.SessionID != "s" ||
				rec.RunnerID != "rnr_test" || rec.Command != tt.command || rec.StartTicks == 0 ||
				rec.Deadline.Before(wantDeadline) || rec.Deadline.After(wantDeadline.Add(time.Second)) {
				t.Fatalf("record = %+v, want process %+v, deadline about %s", rec, d, wantDeadline)
			}
			// The command sees the entry that marks what it starts.
			out := f.read("s", d.ProcessID, 0, 5)
			if got := strings.TrimSpace(out.Output); got != "rnr_test/"+d.ProcessID {
				t.Fatalf("%s in the command = %q", proctrack.EnvVar, got)
			}

			tt.end(f, d.ProcessID)
			f.readUntilEnd("s", d.ProcessID)
			if recs, _ := reg.Records(); len(recs) != 0 {
				t.Fatalf("records after the end: %+v", recs)
			}
			assertPIDGone(t, d.PID)
		})
	}
}

// A foreground command is recorded while it runs too: its runner dying
// mid-command would leave it running in its own session.
func TestForegroundTracked(t *testing.T) {
	f, reg := trackedFixture(t, Config{})
	// The record is written just after the shell starts: wait for it.
	command := fmt.Sprintf(`while [ -z "$(ls %[1]s)" ]; do sleep 0.01; done; ls %[1]s; echo "$CADUCEUS_PROCESS"`, reg.Dir())
	args, _ := json.Marshal(map[string]any{"command": command, "timeout_s": 10})
	res := callEnv(t, context.Background(), f.run, Env{Workspace: f.ws, SessionID: "s", RunID: "run_1"}, string(args))
	if res.Status != event.ToolOK {
		t.Fatalf("%s: %s", res.Status, res.Output)
	}
	lines := strings.Fields(res.Output)
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "rnr_test.cmd_") || !strings.HasSuffix(lines[0], ".json") ||
		lines[1] != "rnr_test/"+strings.TrimSuffix(strings.TrimPrefix(lines[0], "rnr_test."), ".json") {
		t.Fatalf("the command saw records %q", res.Output)
	}
	if recs, _ := reg.Records(); len(recs) != 0 {
		t.Fatalf("records after the command: %+v", recs)
	}
}

// A process that cannot be recorded does not run: it could outlive its
// runner unseen. The model is told plainly, and nothing is left running.
func TestUnrecordedNotStarted(t *testing.T) {
	for _, background := range []bool{true, false} {
		t.Run(fmt.Sprintf("background=%v", background), func(t *testing.T) {
			f, reg := trackedFixture(t, Config{})
			// Where the registry keeps its records is now a file.
			must(t, os.RemoveAll(reg.Dir()))
			must(t, os.WriteFile(reg.Dir(), nil, 0o600))
			args, _ := json.Marshal(map[string]any{"command": "echo $$ > pid; sleep 30", "background": background})
			res := callEnv(t, context.Background(), f.run, Env{Workspace: f.ws, SessionID: "s"}, string(args))
			if res.Status != event.ToolError || !strings.Contains(res.Output, "was not started: it could not be recorded") ||
				strings.Contains(res.Output, reg.Dir()) {
				t.Fatalf("start without a registry: %s %q", res.Status, res.Output)
			}
			if b, err := os.ReadFile(filepath.Join(f.ws, "pid")); err == nil {
				// The shell ran before it was killed: it must be gone.
				var pid int
				if _, err := fmt.Sscan(string(b), &pid); err == nil {
					assertPIDGone(t, pid)
				}
			}
			list := f.do("s", map[string]any{"action": "list"}).Data.(ProcessListData)
			if len(list.Processes) != 0 {
				t.Fatalf("the table lists %+v", list.Processes)
			}
		})
	}
}
