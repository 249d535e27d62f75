package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
)

// procFixture is a table with the two tools that use it, closed when the
// test ends so no process outlives it.
type procFixture struct {
	t     *testing.T
	ws    string
	table *ProcessTable
	run   Tool
	proc  Tool
}

func newProcFixture(t *testing.T, cfg Config, maxLive, bufBytes int) *procFixture {
	t.Helper()
	table := NewProcessTable(maxLive, bufBytes, nil)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := table.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	cfg.Processes = table
	return &procFixture{t: t, ws: workspace(t, nil), table: table, run: NewRunCommand(cfg), proc: NewProcess(cfg)}
}

// start runs command in the background for session and returns its data.
func (f *procFixture) start(session, command string) BackgroundData {
	f.t.Helper()
	args, _ := json.Marshal(map[string]any{"command": command, "background": true})
	res := callEnv(f.t, context.Background(), f.run, Env{Workspace: f.ws, SessionID: session}, string(args))
	if res.Status != event.ToolOK {
		f.t.Fatalf("start %q: status %s: %s", command, res.Status, res.Output)
	}
	return res.Data.(BackgroundData)
}

func (f *procFixture) do(session string, args any) Result {
	f.t.Helper()
	b, _ := json.Marshal(args)
	return callEnv(f.t, context.Background(), f.proc, Env{Workspace: f.ws, SessionID: session}, string(b))
}

func (f *procFixture) read(session, id string, since int64, waitS int) ProcessReadData {
	f.t.Helper()
	res := f.do(session, map[string]any{"action": "read", "process_id": id, "since": since, "wait_s": waitS})
	if res.Status != event.ToolOK {
		f.t.Fatalf("read %s: status %s: %s", id, res.Status, res.Output)
	}
	return res.Data.(ProcessReadData)
}

// readUntilEnd reads incrementally until the process has ended and
// returns everything read and the last read.
func (f *procFixture) readUntilEnd(session, id string) (string, ProcessReadData) {
	f.t.Helper()
	var all strings.Builder
	var since int64
	deadline := time.Now().Add(15 * time.Second)
	for {
		d := f.read(session, id, since, 5)
		all.WriteString(d.Output)
		since = d.NextOffset
		if !d.Running {
			return all.String(), d
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("%s still running; output so far %q", id, all.String())
		}
	}
}

func TestBackgroundStart(t *testing.T) {
	f := newProcFixture(t, Config{}, 0, 0)
	must(t, os.Mkdir(filepath.Join(f.ws, "sub"), 0o755))
	res := callEnv(t, context.Background(), f.run, Env{Workspace: f.ws, SessionID: "s1"},
		`{"command": "pwd; echo $$ > pid; sleep 30", "cwd": "sub", "background": true}`)
	if res.Status != event.ToolOK {
		t.Fatalf("status %s: %s", res.Status, res.Output)
	}
	d := res.Data.(BackgroundData)
	if !d.OK || !d.Background || !strings.HasPrefix(d.ProcessID, "proc_") || len(d.ProcessID) != 13 ||
		d.PID <= 0 || d.Command != "pwd; echo $$ > pid; sleep 30" || d.Cwd != "sub" {
		t.Errorf("data %+v", d)
	}
	for _, want := range []string{d.ProcessID, `"action": "read"`, `"action": "kill"`, "next_offset"} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("output lacks %q:\n%s", want, res.Output)
		}
	}
	r := f.read("s1", d.ProcessID, 0, 5)
	if !strings.HasSuffix(strings.TrimSpace(r.Output), "/sub") || !r.Running || r.ExitCode != nil {
		t.Errorf("read %+v", r)
	}
	// The shell runs as the process the data names, leading its own group.
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(f.ws, "sub", "pid"))
		if err == nil && strings.TrimSpace(string(b)) == strconv.Itoa(d.PID) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid file %q, want %d", b, d.PID)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if pgid, err := syscall.Getpgid(d.PID); err != nil || pgid != d.PID {
		t.Errorf("pgid %d, %v; want %d", pgid, err, d.PID)
	}
}

func TestBackgroundIncrementalRead(t *testing.T) {
	f := newProcFixture(t, Config{}, 0, 0)
	d := f.start("s", "echo one; sleep 0.5; echo two; sleep 0.3; exit 3")

	r1 := f.read("s", d.ProcessID, 0, 5)
	if r1.Output != "one\n" || r1.NextOffset != 4 || !r1.Running || r1.Since != 0 || r1.ExitCode != nil {
		t.Fatalf("first read %+v", r1)
	}
	r2 := f.read("s", d.ProcessID, r1.NextOffset, 5)
	if r2.Output != "two\n" || r2.NextOffset != 8 || r2.Since != 4 {
		t.Fatalf("second read %+v", r2)
	}
	r3 := f.read("s", d.ProcessID, r2.NextOffset, 5)
	if r3.Output != "" || r3.NextOffset != 8 || r3.Running || r3.ExitCode == nil || *r3.ExitCode != 3 ||
		r3.EndedAt.IsZero() || r3.DurationMS < 700 {
		t.Fatalf("read at the end %+v", r3)
	}
	if all := f.read("s", d.ProcessID, 0, 0); all.Output != "one\ntwo\n" {
		t.Errorf("a read from 0 gives %q", all.Output)
	}
	res := f.do("s", map[string]any{"action": "read", "process_id": d.ProcessID, "since": 8})
	want := fmt.Sprintf("(no new output)\n[%s exited with code 3 after %s; next_offset=8]", d.ProcessID,
		(time.Duration(r3.DurationMS) * time.Millisecond).Round(100*time.Millisecond))
	if res.Output != want {
		t.Errorf("output at the end:\n%s\nwant:\n%s", res.Output, want)
	}
}

func TestBackgroundReadWait(t *testing.T) {
	f := newProcFixture(t, Config{}, 0, 0)
	d := f.start("s", "sleep 0.4; echo late; sleep 30")

	start := time.Now()
	r := f.read("s", d.ProcessID, 0, 0)
	if r.Output != "" || !r.Running || time.Since(start) > time.Second {
		t.Errorf("no wait: %+v after %s", r, time.Since(start))
	}
	r = f.read("s", d.ProcessID, 0, 5)
	if el := time.Since(start); r.Output != "late\n" || el < 300*time.Millisecond || el > 4*time.Second {
		t.Errorf("wait for output: %q after %s", r.Output, el)
	}
	start = time.Now()
	r = f.read("s", d.ProcessID, r.NextOffset, 1)
	if el := time.Since(start); r.Output != "" || !r.Running || el < 900*time.Millisecond || el > 3*time.Second {
		t.Errorf("wait without news: %+v after %s", r, el)
	}

	// A read waiting for output returns when the call is cancelled.
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start = time.Now()
	res := callEnv(t, ctx, f.proc, Env{Workspace: f.ws, SessionID: "s"},
		fmt.Sprintf(`{"action": "read", "process_id": %q, "since": 5, "wait_s": 30}`, d.ProcessID))
	if el := time.Since(start); res.Status != event.ToolCancelled || el > 3*time.Second {
		t.Errorf("cancelled read: status %s after %s", res.Status, el)
	}
}

func TestBackgroundReadSplitRune(t *testing.T) {
	f := newProcFixture(t, Config{}, 0, 0)
	// "é" is \303\251; its halves arrive half a second apart.
	d := f.start("s", `printf 'a\303'; sleep 0.5; printf '\251b'`)
	r := f.read("s", d.ProcessID, 0, 5)
	if r.Output != "a" || r.NextOffset != 1 {
		t.Fatalf("first read %q next %d", r.Output, r.NextOffset)
	}
	start := time.Now()
	r = f.read("s", d.ProcessID, 1, 5)
	if r.Output != "éb" || r.NextOffset != 4 || time.Since(start) < 200*time.Millisecond {
		t.Errorf("second read %q next %d after %s", r.Output, r.NextOffset, time.Since(start))
	}
}

func TestBackgroundRingDropsOldOutput(t *testing.T) {
	f := newProcFixture(t, Config{OutputCap: 200}, 0, 1000)
	d := f.start("s", "printf START; yes x | head -c 5000; printf END")
	_, last := f.readUntilEnd("s", d.ProcessID)
	if last.OutputBytes != 5008 {
		t.Fatalf("output_bytes %d", last.OutputBytes)
	}
	r := f.read("s", d.ProcessID, 0, 0)
	if r.Dropped != 4008 || r.NextOffset != 5008 || !r.Truncated || !strings.HasSuffix(r.Output, "x\nEND") ||
		strings.Contains(r.Output, "START") {
		t.Errorf("read from 0: dropped %d next %d truncated %v output %q", r.Dropped, r.NextOffset, r.Truncated, r.Output)
	}
	res := f.do("s", map[string]any{"action": "read", "process_id": d.ProcessID})
	if !strings.HasPrefix(res.Output, "[4008 bytes after offset 0 were dropped") || !strings.Contains(res.Output, "output truncated") {
		t.Errorf("output:\n%s", res.Output)
	}
	r = f.read("s", d.ProcessID, 4991, 0)
	if r.Dropped != 0 || r.Output != strings.Repeat("x\n", 7)+"END" || r.Truncated {
		t.Errorf("read of the kept end: %+v", r)
	}
}

func TestOutputRing(t *testing.T) {
	tests := []struct {
		name    string
		writes  []string
		since   int64
		want    string
		wantOff int64
	}{
		{"empty", nil, 0, "", 0},
		{"fits", []string{"abc", "de"}, 0, "abcde", 0},
		{"from offset", []string{"abc", "de"}, 2, "cde", 2},
		{"at end", []string{"abc"}, 3, "", 3},
		{"exactly full", []string{"abcdefgh"}, 0, "abcdefgh", 0},
		{"wraps", []string{"abcdef", "ghij"}, 0, "cdefghij", 2},
		{"wraps, later offset", []string{"abcdef", "ghij"}, 5, "fghij", 5},
		{"write larger than ring", []string{"ab", "0123456789xyz"}, 0, "56789xyz", 7},
		{"many small", []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"}, 1, "defghijk", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newOutputRing(8)
			for _, w := range tt.writes {
				r.Write([]byte(w))
			}
			got, off := r.Since(tt.since)
			if string(got) != tt.want || off != tt.wantOff {
				t.Errorf("Since(%d) = %q, %d; want %q, %d", tt.since, got, off, tt.want, tt.wantOff)
			}
		})
	}
}

func TestBackgroundKill(t *testing.T) {
	tests := []struct {
		name, command, signal string
		minTime               time.Duration
	}{
		{"sleep", "echo $$ > pid; sleep 30", "terminated", 0},
		{"child ignoring TERM", "sh -c 'trap \"\" TERM; echo $$ > pid; while :; do sleep 1; done' & wait", "", 0},
		{"shell ignoring TERM", "trap '' TERM; echo $$ > pid; while :; do sleep 1; done", "killed", killGrace},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newProcFixture(t, Config{}, 0, 0)
			d := f.start("s", tt.command)
			waitForFile(t, filepath.Join(f.ws, "pid"))

			in := f.proc.Intent(json.RawMessage(`{"action": "kill", "process_id": "` + d.ProcessID + `"}`))
			if in.Effect != EffectExec || in.Action != "kill "+d.ProcessID+" ($ "+tt.command+")" || in.Invalid {
				t.Errorf("intent %+v", in)
			}

			start := time.Now()
			res := f.do("s", map[string]any{"action": "kill", "process_id": d.ProcessID})
			el := time.Since(start)
			if res.Status != event.ToolOK || el < tt.minTime || el > tt.minTime+3*time.Second {
				t.Fatalf("status %s after %s: %s", res.Status, el, res.Output)
			}
			k := res.Data.(ProcessKillData)
			if !k.OK || k.Running || k.ExitCode == nil || k.Reason != reasonKilled || (tt.signal != "" && k.Signal != tt.signal) {
				t.Errorf("kill data %+v", k)
			}
			if !strings.Contains(res.Output, reasonKilled) {
				t.Errorf("output %q", res.Output)
			}
			assertGone(t, filepath.Join(f.ws, "pid"))
			assertPIDGone(t, d.PID)

			res = f.do("s", map[string]any{"action": "kill", "process_id": d.ProcessID})
			if res.Status != event.ToolOK || !strings.Contains(res.Output, "had already ended") ||
				res.Data.(ProcessKillData).Note == "" {
				t.Errorf("second kill: %s %s", res.Status, res.Output)
			}
		})
	}
}

func TestBackgroundKillAfterExit(t *testing.T) {
	f := newProcFixture(t, Config{}, 0, 0)
	d := f.start("s", "exit 0")
	f.readUntilEnd("s", d.ProcessID)
	res := f.do("s", map[string]any{"action": "kill", "process_id": d.ProcessID})
	k, _ := res.Data.(ProcessKillData)
	if res.Status != event.ToolOK || !k.OK || k.Reason != "" || k.ExitCode == nil || *k.ExitCode != 0 ||
		!strings.HasPrefix(res.Output, d.ProcessID+" had already ended (exited with code 0 after ") ||
		!strings.HasSuffix(res.Output, "; nothing to kill.") {
		t.Errorf("status %s data %+v output %q", res.Status, k, res.Output)
	}
}

func TestBackgroundLeftoverJobsDie(t *testing.T) {
	f := newProcFixture(t, Config{}, 0, 0)
	d := f.start("s", "sleep 30 & echo $! > pid; echo started")
	_, last := f.readUntilEnd("s", d.ProcessID)
	if *last.ExitCode != 0 {
		t.Errorf("exit %d", *last.ExitCode)
	}
	assertGone(t, filepath.Join(f.ws, "pid"))
}

func TestBackgroundTimeout(t *testing.T) {
	f := newProcFixture(t, Config{BackgroundTimeout: 300 * time.Millisecond}, 0, 0)
	d := f.start("s", "sleep 30")
	_, last := f.readUntilEnd("s", d.ProcessID)
	if last.Reason != "timed out after 0.3s" || last.Signal != "terminated" || *last.ExitCode != -1 {
		t.Errorf("data %+v", last)
	}

	// timeout_s shortens the limit, never lengthens it.
	args := `{"command": "sleep 30", "background": true, "timeout_s": 1}`
	res := callEnv(t, context.Background(), f.run, Env{Workspace: f.ws, SessionID: "s"}, args)
	if !strings.Contains(res.Output, "killed after 0.3s at the latest") {
		t.Errorf("output %s", res.Output)
	}
	g := newProcFixture(t, Config{}, 0, 0)
	res = callEnv(t, context.Background(), g.run, Env{Workspace: g.ws, SessionID: "s"}, args)
	if !strings.Contains(res.Output, "killed after 1s at the latest") {
		t.Errorf("output %s", res.Output)
	}
	_, last = g.readUntilEnd("s", res.Data.(BackgroundData).ProcessID)
	if last.Reason != "timed out after 1s" {
		t.Errorf("data %+v", last)
	}
}

func TestBackgroundSessionIsolation(t *testing.T) {
	f := newProcFixture(t, Config{}, 0, 0)
	d := f.start("alice", "echo secret; sleep 30")
	f.start("bob", "sleep 30")

	for _, action := range []string{"read", "kill"} {
		res := f.do("bob", map[string]any{"action": action, "process_id": d.ProcessID})
		if res.Status != event.ToolError || !strings.Contains(res.Output, "no background process") || strings.Contains(res.Output, "secret") {
			t.Errorf("%s from another session: %s %s", action, res.Status, res.Output)
		}
	}
	res := f.do("bob", map[string]any{"action": "list"})
	l := res.Data.(ProcessListData)
	if len(l.Processes) != 1 || l.Processes[0].ProcessID == d.ProcessID || strings.Contains(res.Output, d.ProcessID) {
		t.Errorf("bob's list: %s", res.Output)
	}
	if r := f.read("alice", d.ProcessID, 0, 5); !r.Running || r.Output != "secret\n" {
		t.Errorf("alice's process after bob's attempts: %+v", r)
	}
}

func TestBackgroundList(t *testing.T) {
	f := newProcFixture(t, Config{}, 0, 0)
	res := f.do("s", map[string]any{"action": "list"})
	if res.Status != event.ToolOK || res.Output != "(no background processes in this session)" {
		t.Errorf("empty list: %s", res.Output)
	}
	if b, _ := json.Marshal(res.Data); !strings.Contains(string(b), `"processes":[]`) {
		t.Errorf("empty list data %s", b)
	}
	a := f.start("s", "sleep 30")
	time.Sleep(5 * time.Millisecond) // distinct start times keep the order meaningful
	b := f.start("s", "echo hi\nexit 2")
	f.readUntilEnd("s", b.ProcessID)
	res = f.do("s", map[string]any{"action": "list"})
	l := res.Data.(ProcessListData)
	if len(l.Processes) != 2 || l.Processes[0].ProcessID != a.ProcessID || l.Processes[1].ProcessID != b.ProcessID {
		t.Fatalf("list %+v", l)
	}
	if !l.Processes[0].Running || l.Processes[1].Running || *l.Processes[1].ExitCode != 2 || l.Processes[1].OutputBytes != 3 {
		t.Errorf("list %+v", l)
	}
	for _, want := range []string{a.ProcessID, "running for", "$ sleep 30", b.ProcessID, "exited with code 2", "$ echo hi …"} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("list output lacks %q:\n%s", want, res.Output)
		}
	}
}

func TestBackgroundCap(t *testing.T) {
	f := newProcFixture(t, Config{}, 2, 0)
	a := f.start("s1", "sleep 30")
	f.start("s2", "sleep 30")
	res := callEnv(t, context.Background(), f.run, Env{Workspace: f.ws, SessionID: "s1"}, `{"command": "sleep 30", "background": true}`)
	if res.Status != event.ToolError || !strings.Contains(res.Output, "2 background processes are already running (1 of them started in this session)") {
		t.Fatalf("over the cap: %s %s", res.Status, res.Output)
	}
	f.do("s1", map[string]any{"action": "kill", "process_id": a.ProcessID})
	f.start("s1", "sleep 30")
}

func TestProcessTablePrunesFinished(t *testing.T) {
	table := NewProcessTable(0, 0, nil)
	defer table.Close(context.Background())
	base := time.Now()
	for i := range maxFinished + 5 {
		id := fmt.Sprintf("proc_%08d", i)
		table.procs[id] = &bgProcess{id: id, ended: base.Add(time.Duration(i) * time.Second)}
	}
	table.pruneLocked()
	if len(table.procs) != maxFinished {
		t.Fatalf("%d kept", len(table.procs))
	}
	for i := range 5 {
		if _, ok := table.procs[fmt.Sprintf("proc_%08d", i)]; ok {
			t.Errorf("oldest finished %d kept", i)
		}
	}
}

func TestProcessTableClose(t *testing.T) {
	table := NewProcessTable(0, 0, nil)
	cfg := Config{Processes: table}
	run := NewRunCommand(cfg)
	ws := workspace(t, nil)
	var pids []int
	for i, cmd := range []string{
		"sleep 30",
		"sleep 30 & echo $! > child.pid; wait",
		"trap '' TERM; echo $$ > trap.pid; while :; do sleep 1; done",
	} {
		res := callEnv(t, context.Background(), run, Env{Workspace: ws, SessionID: strconv.Itoa(i)},
			`{"command": `+strconv.Quote(cmd)+`, "background": true}`)
		if res.Status != event.ToolOK {
			t.Fatalf("start: %s", res.Output)
		}
		pids = append(pids, res.Data.(BackgroundData).PID)
	}
	waitForFile(t, filepath.Join(ws, "child.pid"))
	waitForFile(t, filepath.Join(ws, "trap.pid"))

	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := table.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	// The TERM-ignoring one needs SIGKILL after the grace period.
	if el := time.Since(start); el < killGrace || el > killGrace+3*time.Second {
		t.Errorf("Close took %s", el)
	}
	for _, pid := range pids {
		assertPIDGone(t, pid)
	}
	assertGone(t, filepath.Join(ws, "child.pid"))
	for _, p := range table.list("2") {
		if in := p.info(); in.Reason != reasonShutdown || in.Signal != "killed" {
			t.Errorf("after Close: %+v", in)
		}
	}

	res := callEnv(t, context.Background(), run, Env{Workspace: ws, SessionID: "0"}, `{"command": "true", "background": true}`)
	if res.Status != event.ToolError || !strings.Contains(res.Output, "shutting down") {
		t.Errorf("start after Close: %s %s", res.Status, res.Output)
	}
	if err := table.Close(ctx); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestProcessTableCloseDeadline(t *testing.T) {
	table := NewProcessTable(0, 0, nil)
	run := NewRunCommand(Config{Processes: table})
	ws := workspace(t, nil)
	res := callEnv(t, context.Background(), run, Env{Workspace: ws},
		`{"command": "trap '' TERM; echo $$ > trap.pid; while :; do sleep 1; done", "background": true}`)
	pid := res.Data.(BackgroundData).PID
	waitForFile(t, filepath.Join(ws, "trap.pid"))

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := table.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close = %v", err)
	}
	if el := time.Since(start); el > time.Second {
		t.Errorf("Close took %s", el)
	}
	assertPIDGone(t, pid)
}

func TestBackgroundUnavailable(t *testing.T) {
	ws := workspace(t, nil)
	run := NewRunCommand(Config{})
	res := call(t, run, ws, `{"command": "sleep 30", "background": true}`)
	if res.Status != event.ToolError || !strings.Contains(res.Output, "background commands are not available") {
		t.Errorf("run_command: %s %s", res.Status, res.Output)
	}
	if strings.Contains(string(run.Spec().Parameters), "background") {
		t.Errorf("schema offers background without a table")
	}
	res = call(t, NewProcess(Config{}), ws, `{"action": "list"}`)
	if res.Status != event.ToolError || !strings.Contains(res.Output, "not available") {
		t.Errorf("process: %s %s", res.Status, res.Output)
	}
}

func TestProcessArgs(t *testing.T) {
	f := newProcFixture(t, Config{}, 0, 0)
	d := f.start("s", "echo hi; sleep 30")
	tests := []struct{ name, args, output string }{
		{"no action", `{}`, `invalid arguments: action is required`},
		{"bad action", `{"action": "stop"}`, `invalid arguments: action must be "list", "read" or "kill", got "stop"`},
		{"read without id", `{"action": "read"}`, "invalid arguments: process_id is required for read"},
		{"kill without id", `{"action": "kill", "process_id": " "}`, "invalid arguments: process_id is required for kill"},
		{"negative since", `{"action": "read", "process_id": "proc_x", "since": -1}`, "invalid arguments: since must be at least 0"},
		{"negative wait", `{"action": "read", "process_id": "proc_x", "wait_s": -1}`, "invalid arguments: wait_s must be at least 0"},
		{"unknown field", `{"action": "list", "pid": 3}`, `invalid arguments: unknown field "pid"`},
		{"unknown id", `{"action": "read", "process_id": "proc_nope"}`, `no background process "proc_nope" in this session`},
		{"since beyond the end", `{"action": "read", "process_id": "` + d.ProcessID + `", "since": 100000}`, "since 100000 is beyond the end of the output"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := callEnv(t, context.Background(), f.proc, Env{Workspace: f.ws, SessionID: "s"}, tt.args)
			if res.Status != event.ToolError || !strings.Contains(res.Output, tt.output) {
				t.Errorf("status %s output %q, want %q", res.Status, res.Output, tt.output)
			}
		})
	}
}

func TestProcessLabelAndIntent(t *testing.T) {
	tl := NewProcess(Config{Processes: NewProcessTable(0, 0, nil)})
	tests := []struct {
		args, label string
		intent      Intent
	}{
		{`{"action": "list"}`, "list background processes", Intent{Effect: EffectNone}},
		{`{"action": "read", "process_id": "proc_a", "wait_s": 5}`, "read output of proc_a", Intent{Effect: EffectNone}},
		{`{"action": "kill", "process_id": "proc_a"}`, "kill proc_a", Intent{Effect: EffectExec, Action: "kill proc_a"}},
		{`{"action": "kill"}`, "process (invalid arguments)", Intent{Effect: EffectNone, Action: `process {"action": "kill"}`, Invalid: true}},
	}
	for _, tt := range tests {
		if got := tl.Label(json.RawMessage(tt.args)); got != tt.label {
			t.Errorf("Label(%s) = %q, want %q", tt.args, got, tt.label)
		}
		if got := tl.Intent(json.RawMessage(tt.args)); fmt.Sprint(got) != fmt.Sprint(tt.intent) {
			t.Errorf("Intent(%s) = %+v, want %+v", tt.args, got, tt.intent)
		}
	}
	if !json.Valid(tl.Spec().Parameters) {
		t.Error("schema is not JSON")
	}

	run := NewRunCommand(Config{Processes: NewProcessTable(0, 0, nil)})
	if s := run.Spec().Parameters; !json.Valid(s) || !strings.Contains(string(s), `"background"`) {
		t.Errorf("run_command schema with a table:\n%s", s)
	}
	args := json.RawMessage(`{"command": "npm run dev", "background": true}`)
	if l := run.Label(args); l != "$ npm run dev (background)" {
		t.Errorf("label %q", l)
	}
	if in := run.Intent(args); in.Effect != EffectExec || in.Command != "npm run dev" || in.Action != "$ npm run dev\n(in the background)" {
		t.Errorf("intent %+v", in)
	}
}

// assertPIDGone checks that pid has died (or is a zombie nobody reaps).
func assertPIDGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if syscall.Kill(pid, 0) != nil || (err == nil && strings.Contains(string(stat), ") Z ")) {
			return
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d survived", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waitForFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
