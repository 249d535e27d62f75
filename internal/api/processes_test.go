package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/api"
	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/proctrack"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// consoleEnv is an API with an in-process runner's process table and the
// records of its data dir, as the app wires them.
type consoleEnv struct {
	*env
	table *tool.ProcessTable
	run   tool.Tool
	reg   *proctrack.Registry // the runner's
	web   *proctrack.Registry // the web tier's view of the same dir
}

func newConsoleEnv(t *testing.T, opts ...envOpt) *consoleEnv {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "procs")
	log := slog.New(slog.DiscardHandler)
	reg, err := proctrack.Open(dir, "rnr_test", log)
	if err != nil {
		t.Skip(err) // no /proc
	}
	web, err := proctrack.Open(dir, "", log)
	if err != nil {
		t.Fatal(err)
	}
	table := tool.NewProcessTable(0, 0, reg)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = table.Close(ctx)
	})
	opts = append(opts, func(c *envConfig) {
		c.options = append(c.options, func(o *api.Options) { o.Processes, o.ProcessRecords = table, web })
	})
	return &consoleEnv{env: newEnv(t, opts...), table: table, run: tool.NewRunCommand(tool.Config{Processes: table}), reg: reg, web: web}
}

// start runs command in the background as run run_x of session ses_x
// would.
func (c *consoleEnv) start(t *testing.T, command string) tool.BackgroundData {
	t.Helper()
	args, _ := json.Marshal(map[string]any{"command": command, "background": true})
	res, err := c.run.Run(context.Background(), tool.Env{Workspace: c.ws, SessionID: "ses_x", RunID: "run_x"}, args)
	if err != nil || res.Status != event.ToolOK {
		t.Fatalf("start %q: %v %s", command, err, res.Output)
	}
	return res.Data.(tool.BackgroundData)
}

type processJSON struct {
	ID        string `json:"id"`
	Kind      string `json:"kind"`
	Status    string `json:"status"`
	Command   string `json:"command"`
	SessionID string `json:"session_id"`
	RunID     string `json:"run_id"`
	PID       int    `json:"pid"`
	StartedAt string `json:"started_at"`
	ExitCode  *int   `json:"exit_code"`
	Reason    string `json:"reason"`
	Output    bool   `json:"output"`
}

func (c *consoleEnv) list(t *testing.T) map[string]processJSON {
	t.Helper()
	r := c.req("GET", "/api/processes", "")
	r.want(t, http.StatusOK, "")
	var out struct {
		Processes  []processJSON `json:"processes"`
		Visibility string        `json:"visibility"`
	}
	r.decode(t, &out)
	if out.Visibility == "" {
		t.Error("no visibility note")
	}
	m := map[string]processJSON{}
	for _, p := range out.Processes {
		m[p.ID] = p
	}
	return m
}

// A background process is listed with its session, run and status, its
// output read and followed live, and killed with its whole group; a kill
// is idempotent and the process really gone.
func TestProcessesListFollowKill(t *testing.T) {
	c := newConsoleEnv(t)
	bg := c.start(t, `echo first; sleep 30 & echo $! > job; while sleep 0.05; do [ -f go ] && echo second && break; done; wait`)
	p, ok := c.list(t)[bg.ProcessID]
	if !ok || p.Status != "running" || p.Kind != "agent" || p.SessionID != "ses_x" || p.RunID != "run_x" || p.PID != bg.PID || !p.Output || p.StartedAt == "" || p.ExitCode != nil {
		t.Fatalf("listed %+v (found %v)", p, ok)
	}

	s := c.openRaw(t, "/api/processes/"+bg.ProcessID+"/log?follow=1&since=0")
	got := s.untilOutput(t, "first")
	if err := os.WriteFile(filepath.Join(c.ws, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	got += s.untilOutput(t, "second")
	if !strings.Contains(got, "first\n") {
		t.Errorf("followed output %q", got)
	}

	r := c.req("GET", "/api/processes/"+bg.ProcessID+"/log", "")
	r.want(t, http.StatusOK, "")
	var tail struct {
		Output string `json:"output"`
		Next   int64  `json:"next"`
	}
	r.decode(t, &tail)
	if tail.Output != "first\nsecond\n" || tail.Next != int64(len(tail.Output)) {
		t.Errorf("tail %+v", tail)
	}

	job, _ := strconv.Atoi(strings.TrimSpace(waitFile(t, filepath.Join(c.ws, "job"))))
	r = c.req("POST", "/api/processes/"+bg.ProcessID+"/kill", "")
	r.want(t, http.StatusOK, "")
	var killed struct {
		Process processJSON `json:"process"`
	}
	r.decode(t, &killed)
	if killed.Process.Status != "killed" || killed.Process.ExitCode == nil || killed.Process.Reason == "" {
		t.Errorf("after the kill %+v", killed.Process)
	}
	for _, pid := range []int{bg.PID, job} {
		if running(pid) {
			t.Errorf("pid %d still runs after the kill", pid)
		}
	}
	s.untilEnd(t)
	c.req("POST", "/api/processes/"+bg.ProcessID+"/kill", "").want(t, http.StatusOK, "")
	if p := c.list(t)[bg.ProcessID]; p.Status != "killed" {
		t.Errorf("listed after the kill: %+v", p)
	}
}

// A process of a runner in another server process is seen through its
// record, without output, and killed through it; one whose runner died is
// listed as orphaned when the sweep keeps orphans.
func TestProcessesOfOtherRunners(t *testing.T) {
	c := newConsoleEnv(t)
	dir := c.reg.Dir()
	other := exec.Command("sleep", "30")
	other.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-other.Process.Pid, syscall.SIGKILL); _ = other.Wait() })
	// The other runner is this test process too (its owner is alive):
	// a registry of another runner id over the same dir.
	elsewhere, err := proctrack.Open(dir, "rnr_other", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := elsewhere.Track(proctrack.Process{ProcessID: "proc_other1", PID: other.Process.Pid, RunID: "run_o", SessionID: "ses_o",
		Command: "sleep 30", StartedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	p, ok := c.list(t)["proc_other1"]
	if !ok || p.Status != "running" || p.Output || p.RunID != "run_o" || p.Kind != "agent" {
		t.Fatalf("listed %+v (found %v)", p, ok)
	}
	c.req("GET", "/api/processes/proc_other1/log", "").want(t, http.StatusConflict, api.CodeNoOutput)
	c.req("POST", "/api/processes/proc_other1/kill", "").want(t, http.StatusOK, "")
	done := make(chan struct{})
	go func() { _ = other.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the other runner's process survived the kill")
	}
	if p := c.list(t)["proc_other1"]; p.Status != "killed" {
		t.Errorf("after the kill: %+v", p)
	}
	c.req("POST", "/api/processes/proc_other1/kill", "").want(t, http.StatusOK, "")
}

func TestProcessesBadInput(t *testing.T) {
	c := newConsoleEnv(t)
	bg := c.start(t, "echo hi")
	c.runErrCases(t, []errCase{
		{name: "unknown process log", method: "GET", path: "/api/processes/proc_nothere/log", status: 404, code: control.CodeNotFound},
		{name: "unknown process kill", method: "POST", path: "/api/processes/proc_nothere/kill", status: 404, code: control.CodeNotFound},
		{name: "bad id", method: "POST", path: "/api/processes/a.b/kill", status: 404, code: control.CodeNotFound},
		{name: "bad since", method: "GET", path: "/api/processes/" + bg.ProcessID + "/log?since=-1", status: 400, code: control.CodeInvalidCursor},
		{name: "since beyond the end", method: "GET", path: "/api/processes/" + bg.ProcessID + "/log?since=999999", status: 400, code: control.CodeInvalidCursor},
		{name: "bad tail", method: "GET", path: "/api/processes/" + bg.ProcessID + "/log?tail=x", status: 400, code: control.CodeInvalidInput},
		{name: "bad follow", method: "GET", path: "/api/processes/" + bg.ProcessID + "/log?follow=maybe", status: 400, code: control.CodeInvalidInput},
	})
}

// Without a runner in this process nor records, the list is empty and
// says so.
func TestProcessesNone(t *testing.T) {
	e := newEnv(t)
	r := e.req("GET", "/api/processes", "")
	r.want(t, http.StatusOK, "")
	if !strings.Contains(string(r.body), `"processes":[]`) || !strings.Contains(string(r.body), "no runner runs in this server") {
		t.Errorf("body %s", r.body)
	}
}

// rawSSE reads named Server-Sent Events.
type rawSSE struct {
	frames chan rawFrame
}

type rawFrame struct {
	name, id string
	data     json.RawMessage
}

func (e *env) openRaw(t *testing.T, path string) *rawSSE {
	t.Helper()
	ctx, cancel := context.WithCancel(e.ctx)
	r, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+path, nil)
	res, err := e.srv.Client().Do(r)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		cancel()
		t.Fatalf("status %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	s := &rawSSE{frames: make(chan rawFrame, 256)}
	go func() {
		defer close(s.frames)
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var f rawFrame
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if f.data != nil {
					s.frames <- f
				}
				f = rawFrame{}
			case strings.HasPrefix(line, "event: "):
				f.name = line[7:]
			case strings.HasPrefix(line, "id: "):
				f.id = line[4:]
			case strings.HasPrefix(line, "data: "):
				f.data = json.RawMessage(line[6:])
			}
		}
	}()
	t.Cleanup(func() { cancel(); res.Body.Close() })
	return s
}

func (s *rawSSE) next(t *testing.T) rawFrame {
	t.Helper()
	select {
	case f, ok := <-s.frames:
		if !ok {
			t.Fatal("the stream ended")
		}
		return f
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
	}
	return rawFrame{}
}

// untilOutput reads output events until their text holds want.
func (s *rawSSE) untilOutput(t *testing.T, want string) string {
	t.Helper()
	var all strings.Builder
	for !strings.Contains(all.String(), want) {
		f := s.next(t)
		if f.name != "output" {
			t.Fatalf("event %q before %q: %s", f.name, want, f.data)
		}
		var c struct {
			Output string `json:"output"`
			Next   int64  `json:"next"`
		}
		_ = json.Unmarshal(f.data, &c)
		if f.id != strconv.FormatInt(c.Next, 10) {
			t.Errorf("id %q, next %d", f.id, c.Next)
		}
		all.WriteString(c.Output)
	}
	return all.String()
}

func (s *rawSSE) untilEnd(t *testing.T) {
	t.Helper()
	for f := s.next(t); f.name != "end"; f = s.next(t) {
	}
	select {
	case _, ok := <-s.frames:
		if ok {
			t.Error("events after the end")
		}
	case <-time.After(10 * time.Second):
		t.Error("the stream did not close after its end")
	}
}

func waitFile(t *testing.T, path string) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if err == nil && len(b) > 0 {
			return string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", path, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// running reports whether pid runs (a zombie waiting to be reaped does
// not).
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && i+2 < len(b) && b[i+2] != 'Z' && b[i+2] != 'X'
}
