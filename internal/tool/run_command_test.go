package tool

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
)

func TestRunCommand(t *testing.T) {
	ws := workspace(t, map[string]string{"a.txt": "hello\n", "sub/b.txt": "b\n"})
	outside := workspace(t, nil)
	must(t, os.Symlink(outside, filepath.Join(ws, "out")))

	tests := []struct {
		name      string
		args      string
		status    string
		output    string // substring of Output
		exit      int
		cwd       string
		mentioned []string
	}{
		{name: "ok", args: `{"command": "cat a.txt"}`, status: event.ToolOK, output: "hello", cwd: ".", mentioned: []string{"a.txt"}},
		{name: "stderr", args: `{"command": "echo out; echo err >&2"}`, status: event.ToolOK, output: "err", cwd: "."},
		{name: "no output", args: `{"command": "true"}`, status: event.ToolOK, output: "(no output)", cwd: "."},
		{name: "cwd", args: `{"command": "pwd; cat b.txt ../a.txt", "cwd": "sub"}`, status: event.ToolOK, output: "/sub\nb\nhello", cwd: "sub",
			mentioned: []string{"sub/b.txt", "a.txt"}},
		{name: "exit code", args: `{"command": "echo before; exit 3"}`, status: event.ToolError, output: "before\n[exit code 3]", exit: 3, cwd: "."},
		{name: "signal", args: `{"command": "kill -9 $$"}`, status: event.ToolError, output: "killed by signal", exit: -1, cwd: "."},
		{name: "stdin is empty", args: `{"command": "cat; echo done"}`, status: event.ToolOK, output: "done", cwd: "."},
		{name: "cwd escape", args: `{"command": "ls", "cwd": "../"}`, status: event.ToolDenied, output: "outside the workspace"},
		{name: "cwd symlink escape", args: `{"command": "ls", "cwd": "out"}`, status: event.ToolDenied, output: "symlink"},
		{name: "cwd is a file", args: `{"command": "ls", "cwd": "a.txt"}`, status: event.ToolError, output: "not a directory"},
		{name: "cwd missing", args: `{"command": "ls", "cwd": "nope"}`, status: event.ToolError, output: "does not exist"},
		{name: "empty command", args: `{"command": "  "}`, status: event.ToolError, output: "invalid arguments: command is required"},
		{name: "missing command", args: `{}`, status: event.ToolError, output: "invalid arguments"},
		{name: "bad timeout", args: `{"command": "true", "timeout_s": -1}`, status: event.ToolError, output: "invalid arguments: timeout_s"},
		{name: "timeout type", args: `{"command": "true", "timeout_s": "5"}`, status: event.ToolError, output: `invalid arguments: field "timeout_s" must be an integer`},
		{name: "not json", args: `rm -rf /`, status: event.ToolError, output: "invalid arguments"},
	}
	tl := NewRunCommand(Config{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, tl, ws, tt.args)
			if res.Status != tt.status {
				t.Fatalf("status %s, want %s; output:\n%s", res.Status, tt.status, res.Output)
			}
			if !strings.Contains(res.Output, tt.output) {
				t.Errorf("output lacks %q:\n%s", tt.output, res.Output)
			}
			if res.Status == event.ToolDenied || strings.HasPrefix(res.Output, "invalid") || res.Data == nil {
				return
			}
			d := res.Data.(CommandData)
			if d.ExitCode != tt.exit || d.Cwd != tt.cwd || d.OK != (tt.status == event.ToolOK) {
				t.Errorf("data exit=%d cwd=%q ok=%v", d.ExitCode, d.Cwd, d.OK)
			}
			if tt.mentioned != nil && !slices.Equal(d.MentionedPaths, tt.mentioned) {
				t.Errorf("mentioned_paths %q, want %q", d.MentionedPaths, tt.mentioned)
			}
		})
	}
}

func TestRunCommandOutputCap(t *testing.T) {
	ws := workspace(t, nil)
	res := call(t, NewRunCommand(Config{OutputCap: 1000}), ws,
		`{"command": "printf HEAD; yes x | head -c 100000; printf TAIL"}`)
	if res.Status != event.ToolOK {
		t.Fatalf("status %s: %s", res.Status, res.Output)
	}
	d := res.Data.(CommandData)
	if !d.Truncated || !strings.HasPrefix(d.Output, "HEAD") || !strings.HasSuffix(d.Output, "TAIL") {
		t.Fatalf("truncated=%v output=%q", d.Truncated, d.Output)
	}
	if want := "\n… [output truncated: 100008 bytes total, showing first 500 and last 500]\n"; !strings.Contains(d.Output, want) {
		t.Errorf("output lacks marker %q", want)
	}
	if len(d.Output) > 1200 {
		t.Errorf("output is %d bytes, cap 1000", len(d.Output))
	}
}

func TestRunCommandTimeoutKillsGroup(t *testing.T) {
	tests := []struct{ name, command string }{
		{"sleep", "sleep 30"},
		{"children holding the pipe", "sleep 30 & echo $! > bg.pid; sleep 30 & sleep 30"},
		{"trap ignoring TERM", "trap '' TERM; echo $$ > bg.pid; while :; do sleep 1; done"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := workspace(t, nil)
			args, _ := json.Marshal(map[string]any{"command": tt.command, "timeout_s": 1})
			start := time.Now()
			res := call(t, NewRunCommand(Config{}), ws, string(args))
			if el := time.Since(start); el > 4*time.Second {
				t.Errorf("took %s", el)
			}
			if res.Status != event.ToolTimeout || !strings.Contains(res.Output, "timed out after 1s") {
				t.Fatalf("status %s, output:\n%s", res.Status, res.Output)
			}
			if d := res.Data.(CommandData); d.ExitCode != -1 || d.OK {
				t.Errorf("data %+v", d)
			}
			assertGone(t, filepath.Join(ws, "bg.pid"))
		})
	}
}

// assertGone checks the process whose pid is in pidFile (if any) has died.
func assertGone(t *testing.T, pidFile string) {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid file: %v", err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		// A zombie waiting for a reaper that is not us counts as dead.
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

func TestRunCommandBackgroundJobsDoNotHold(t *testing.T) {
	ws := workspace(t, nil)
	start := time.Now()
	res := call(t, NewRunCommand(Config{}), ws, `{"command": "sleep 30 & echo $! > bg.pid; echo started"}`)
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("took %s", el)
	}
	if res.Status != event.ToolOK || res.Output != "started\n" {
		t.Fatalf("status %s output %q", res.Status, res.Output)
	}
	assertGone(t, filepath.Join(ws, "bg.pid"))
}

func TestRunCommandEscapedChildDoesNotHang(t *testing.T) {
	if _, err := os.Stat("/usr/bin/setsid"); err != nil {
		t.Skip("no setsid")
	}
	ws := workspace(t, nil)
	start := time.Now()
	// setsid leaves our process group, so only closing the pipe frees us.
	res := call(t, NewRunCommand(Config{}), ws, `{"command": "setsid sh -c 'echo $$ > esc.pid; exec sleep 30' & sleep 0.2; echo hi"}`)
	if el := time.Since(start); el > pipeGrace+2*time.Second {
		t.Errorf("took %s", el)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "esc.pid")); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if res.Status != event.ToolOK || !strings.Contains(res.Output, "hi") {
		t.Fatalf("status %s output %q", res.Status, res.Output)
	}
}

func TestRunCommandCancel(t *testing.T) {
	ws := workspace(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	// Cancel once the command has surely started (a loaded machine may
	// take a while to exec the shell).
	var once sync.Once
	progress := func(_, text string) {
		if strings.Contains(text, "begun") {
			once.Do(func() { time.AfterFunc(50*time.Millisecond, cancel) })
		}
	}
	start := time.Now()
	res := callEnv(t, ctx, NewRunCommand(Config{}), Env{Workspace: ws, Progress: progress}, `{"command": "echo begun; sleep 30 & sleep 30"}`)
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("took %s", el)
	}
	if res.Status != event.ToolCancelled || !strings.Contains(res.Output, "begun") {
		t.Fatalf("status %s output %q", res.Status, res.Output)
	}

	res = callEnv(t, ctx, NewRunCommand(Config{}), Env{Workspace: ws}, `{"command": "touch ran"}`)
	if res.Status != event.ToolCancelled {
		t.Errorf("already cancelled: status %s", res.Status)
	}
	if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
		t.Error("command ran with a cancelled context")
	}
}

func TestRunCommandProgress(t *testing.T) {
	ws := workspace(t, nil)
	var (
		mu     sync.Mutex
		calls  int
		stream = map[string]string{}
	)
	env := Env{Workspace: ws, Progress: func(s, text string) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		stream[s] += text
	}}
	res := callEnv(t, context.Background(), NewRunCommand(Config{}), env,
		`{"command": "for i in 1 2 3; do echo line$i; sleep 0.05; done; echo oops >&2; seq 1 20000"}`)
	if res.Status != event.ToolOK {
		t.Fatalf("status %s", res.Status)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.HasPrefix(stream["stdout"], "line1\nline2\nline3\n1\n2\n") || !strings.HasSuffix(stream["stdout"], "\n20000\n") {
		t.Errorf("stdout progress %q…", stream["stdout"][:min(40, len(stream["stdout"]))])
	}
	if stream["stderr"] != "oops\n" {
		t.Errorf("stderr progress %q", stream["stderr"])
	}
	// seq writes in small pieces; merging must keep the call count low.
	if calls > 40 {
		t.Errorf("Progress called %d times", calls)
	}
}

func TestRunCommandNoGoroutineLeak(t *testing.T) {
	ws := workspace(t, nil)
	tl := NewRunCommand(Config{})
	before := runtime.NumGoroutine()
	call(t, tl, ws, `{"command": "echo hi"}`)
	call(t, tl, ws, `{"command": "sleep 30 & sleep 30", "timeout_s": 1}`)
	callEnv(t, context.Background(), tl, Env{Workspace: ws, Progress: func(string, string) {}}, `{"command": "seq 1 1000; exit 2"}`)
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("goroutines: %d before, %d after\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRunCommandLabelAndIntent(t *testing.T) {
	tl := NewRunCommand(Config{})
	long := strings.Repeat("x", 200)
	for args, want := range map[string]string{
		`{"command": "go test ./..."}`:  "$ go test ./...",
		`{"command": "echo a\necho b"}`: "$ echo a …",
		`{"command": "` + long + `"}`:   "$ " + strings.Repeat("x", 119) + "…",
		`{"command": 3}`:                "$ (invalid arguments)",
	} {
		if got := tl.Label([]byte(args)); got != want {
			t.Errorf("Label(%.40s) = %q, want %q", args, got, want)
		}
	}
	in := tl.Intent([]byte(`{"command": "rm -rf build\nls"}`))
	if in.Effect != EffectExec || in.Action != "$ rm -rf build\nls" || in.Command != "rm -rf build\nls" || in.Invalid {
		t.Errorf("intent %+v", in)
	}
	if in := tl.Intent([]byte(`{"command": "make", "cwd": "sub"}`)); in.Action != "$ make\n(in sub)" {
		t.Errorf("intent with cwd %+v", in)
	}
	if in := tl.Intent([]byte(`{{`)); !in.Invalid || in.Effect != EffectExec {
		t.Errorf("intent of bad args %+v", in)
	}
}
