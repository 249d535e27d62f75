package tool

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
)

// The console sees every session's processes with their run, reads and
// follows their output, and kills a whole process group, idempotently.
func TestProcessTableConsole(t *testing.T) {
	f := newProcFixture(t, Config{}, 0, 0)
	args, _ := json.Marshal(map[string]any{"command": "echo hello; sleep 30 & echo $! > job; wait", "background": true})
	res := callEnv(t, context.Background(), f.run, Env{Workspace: f.ws, SessionID: "ses_a", RunID: "run_a"}, string(args))
	if res.Status != event.ToolOK {
		t.Fatalf("start: %s", res.Output)
	}
	a := res.Data.(BackgroundData)
	b := f.start("ses_b", "echo done")

	all := f.table.All()
	if len(all) != 2 || all[0].ProcessID != a.ProcessID || all[0].SessionID != "ses_a" || all[0].RunID != "run_a" || all[1].SessionID != "ses_b" {
		t.Fatalf("All = %+v", all)
	}

	var since int64
	var out strings.Builder
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "hello") {
		if time.Now().After(deadline) {
			t.Fatalf("no output; got %q", out.String())
		}
		f.table.WaitOutput(context.Background(), a.ProcessID, since, time.Second)
		c, err := f.table.Output(a.ProcessID, since)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(c.Data)
		since = c.Next
	}
	if _, err := f.table.Output(a.ProcessID, since+100); err == nil {
		t.Error("an offset beyond the end was accepted")
	}
	job := 0
	for job == 0 && time.Now().Before(deadline) {
		job = readPIDFile(f.ws + "/job")
		time.Sleep(10 * time.Millisecond)
	}

	p, err := f.table.Kill(context.Background(), a.ProcessID)
	if err != nil || p.Running || p.Reason != reasonConsole || p.ExitCode == nil {
		t.Fatalf("Kill = %+v, %v", p, err)
	}
	// SIGKILL is delivered when the job is next scheduled: wait for it.
	for end := time.Now().Add(5 * time.Second); job > 0 && alivePID(job) && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	if job > 0 && alivePID(job) {
		t.Errorf("the shell's job (pid %d) survived the kill", job)
	}
	again, err := f.table.Kill(context.Background(), a.ProcessID)
	if err != nil || again.Reason != reasonConsole || *again.ExitCode != *p.ExitCode {
		t.Errorf("second Kill = %+v, %v", again, err)
	}
	if _, err := f.table.Kill(context.Background(), "proc_nothere"); !IsNoProcess(err) {
		t.Errorf("Kill of an unknown process = %v", err)
	}
	if _, err := f.table.Get(b.ProcessID); err != nil {
		t.Error(err)
	}
}

func readPIDFile(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0
	}
	return n
}

// alivePID reports a process that runs (a zombie waiting for a parent
// that is not us to reap it does not).
func alivePID(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || i+2 >= len(b) || (b[i+2] != 'Z' && b[i+2] != 'X')
}
