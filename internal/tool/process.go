package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider"
)

// NameProcess is the tool that lists, reads and kills background commands.
const NameProcess = "process"

// MaxProcessWait caps process read's wait_s: a longer wait would hold the
// turn with nothing to show; the model can simply read again.
const MaxProcessWait = 30 * time.Second

// BackgroundData is the structured result of run_command with background.
type BackgroundData struct {
	OK         bool   `json:"ok"`
	ProcessID  string `json:"process_id"`
	PID        int    `json:"pid"`
	Command    string `json:"command"`
	Cwd        string `json:"cwd"` // relative to the workspace
	Background bool   `json:"background"`
}

// ProcessListData is the structured result of process list.
type ProcessListData struct {
	OK        bool          `json:"ok"`
	Processes []ProcessInfo `json:"processes"`
}

// ProcessReadData is the structured result of process read.
type ProcessReadData struct {
	OK bool `json:"ok"`
	ProcessInfo
	// Output is what was written from Since on, as valid UTF-8; beyond the
	// output cap only its head and tail are kept (Truncated).
	Output    string `json:"output"`
	Truncated bool   `json:"truncated"`
	Since     int64  `json:"since"`
	// NextOffset is the since of the next incremental read.
	NextOffset int64 `json:"next_offset"`
	// Dropped counts bytes after Since that the buffer no longer held.
	Dropped int64 `json:"dropped"`
}

// ProcessKillData is the structured result of process kill.
type ProcessKillData struct {
	OK bool `json:"ok"`
	ProcessInfo
	Note string `json:"note,omitempty"` // e.g. it had exited already
}

type processArgs struct {
	Action    string `json:"action"`
	ProcessID string `json:"process_id"`
	Since     *int64 `json:"since"`
	WaitS     *int   `json:"wait_s"`
}

type processTool struct{ cfg Config }

// NewProcess returns the process tool, which works on cfg.Processes.
func NewProcess(cfg Config) Tool { return processTool{cfg: cfg.withDefaults()} }

const processSchema = `{
  "type": "object",
  "properties": {
    "action": {"type": "string", "enum": ["list", "read", "kill"], "description": "list: this session's background processes. read: new output and state of one. kill: stop one and everything it started (SIGTERM, then SIGKILL after 2 s)."},
    "process_id": {"type": "string", "description": "The process_id run_command returned. Required for read and kill."},
    "since": {"type": "integer", "minimum": 0, "description": "read: byte offset to read from, normally the next_offset of the previous read. Default 0."},
    "wait_s": {"type": "integer", "minimum": 0, "maximum": 30, "description": "read: wait up to this many seconds for new output or the exit. Default 0."}
  },
  "required": ["action"],
  "additionalProperties": false
}`

func (processTool) Spec() provider.ToolSpec {
	return provider.ToolSpec{
		Name: NameProcess,
		Description: "Manage commands started with run_command background: true. list shows them; read returns " +
			"output written since a byte offset plus whether the process still runs and its exit code; kill stops " +
			"it. Read incrementally by passing the previous next_offset as since, and use wait_s to wait for a " +
			"server to come up or a build to finish.",
		Parameters: json.RawMessage(processSchema),
	}
}

// parse validates the arguments that do not depend on the table.
func (processTool) parse(args json.RawMessage) (processArgs, error) {
	var a processArgs
	if err := decodeArgs(args, &a); err != nil {
		return a, err
	}
	a.ProcessID = strings.TrimSpace(a.ProcessID)
	switch a.Action {
	case "list":
	case "read", "kill":
		if a.ProcessID == "" {
			return a, fmt.Errorf("process_id is required for %s", a.Action)
		}
	case "":
		return a, errors.New(`action is required: "list", "read" or "kill"`)
	default:
		return a, fmt.Errorf(`action must be "list", "read" or "kill", got %q`, a.Action)
	}
	if a.Since != nil && *a.Since < 0 {
		return a, errors.New("since must be at least 0")
	}
	if a.WaitS != nil && *a.WaitS < 0 {
		return a, errors.New("wait_s must be at least 0")
	}
	return a, nil
}

func (t processTool) Label(args json.RawMessage) string {
	a, err := t.parse(args)
	switch {
	case err != nil:
		return "process (invalid arguments)"
	case a.Action == "list":
		return "list background processes"
	case a.Action == "read":
		return "read output of " + truncate(a.ProcessID, 60)
	}
	return "kill " + truncate(a.ProcessID, 60)
}

func (t processTool) Intent(args json.RawMessage) Intent {
	a, err := t.parse(args)
	if err != nil {
		return Intent{Effect: EffectNone, Action: "process " + truncate(string(args), 500), Invalid: true}
	}
	if a.Action != "kill" {
		return Intent{Effect: EffectNone}
	}
	in := Intent{Effect: EffectExec, Action: "kill " + a.ProcessID}
	if t.cfg.Processes != nil {
		if p := t.cfg.Processes.lookup(a.ProcessID); p != nil {
			// The id alone means nothing to the person approving.
			in.Action += " ($ " + p.command + ")"
		}
	}
	return in
}

func (t processTool) Run(ctx context.Context, env Env, args json.RawMessage) (Result, error) {
	a, err := t.parse(args)
	if err != nil {
		return invalidArgs(err), nil
	}
	pt := t.cfg.Processes
	if pt == nil {
		return errorResult("background processes are not available here, so there are none to %s", a.Action), nil
	}
	if a.Action == "list" {
		return t.list(pt, env.SessionID), nil
	}
	p, err := pt.get(env.SessionID, a.ProcessID)
	if err != nil {
		return errorResult("no background process %q in this session; action \"list\" shows the ones there are", a.ProcessID), nil
	}
	if a.Action == "read" {
		return t.read(ctx, p, a), nil
	}
	return t.kill(ctx, p), nil
}

func (processTool) list(pt *ProcessTable, session string) Result {
	data := ProcessListData{OK: true, Processes: []ProcessInfo{}}
	var b strings.Builder
	for _, p := range pt.list(session) {
		in := p.info()
		data.Processes = append(data.Processes, in)
		fmt.Fprintf(&b, "%s  pid %d  %s  %d bytes of output\n  $ %s\n", in.ProcessID, in.PID, describeProcState(in), in.OutputBytes, commandLine(in.Command))
	}
	out := b.String()
	if out == "" {
		out = "(no background processes in this session)"
	}
	return Result{Status: event.ToolOK, Output: out, Data: data}
}

func (t processTool) read(ctx context.Context, p *bgProcess, a processArgs) Result {
	var since int64
	if a.Since != nil {
		since = *a.Since
	}
	var wait time.Duration
	if a.WaitS != nil {
		wait = min(time.Duration(*a.WaitS)*time.Second, MaxProcessWait)
	}
	if end := p.outputEnd(); since > end {
		return errorResult("since %d is beyond the end of the output (%d bytes so far); use the next_offset of the last read", since, end)
	}
	p.wait(ctx, since, wait)
	c, err := p.read(since)
	if err != nil {
		return errorResult("%v", err)
	}
	buf := newCapBuffer(t.cfg.OutputCap)
	buf.Write(c.data)
	text, truncated := buf.String()
	data := ProcessReadData{
		OK:          true,
		ProcessInfo: c.info,
		Output:      text,
		Truncated:   truncated,
		Since:       since,
		NextOffset:  c.next,
		Dropped:     c.dropped,
	}

	var b strings.Builder
	if c.dropped > 0 {
		fmt.Fprintf(&b, "[%d bytes after offset %d were dropped: only the latest output is kept]\n", c.dropped, since)
	}
	if text == "" {
		b.WriteString("(no new output)\n")
	} else {
		b.WriteString(text)
		if !strings.HasSuffix(text, "\n") {
			b.WriteByte('\n')
		}
	}
	fmt.Fprintf(&b, "[%s %s; next_offset=%d]", c.info.ProcessID, describeProcState(c.info), c.next)
	status := event.ToolOK
	if ctx.Err() != nil {
		status = event.ToolCancelled
	}
	return Result{Status: status, Output: b.String(), Data: data}
}

func (processTool) kill(ctx context.Context, p *bgProcess) Result {
	if in := p.info(); !in.Running {
		note := "it had already ended; nothing to kill"
		return Result{
			Status: event.ToolOK,
			Output: fmt.Sprintf("%s had already ended (%s); nothing to kill.", in.ProcessID, describeProcState(in)),
			Data:   ProcessKillData{OK: true, ProcessInfo: in, Note: note},
		}
	}
	p.terminate(reasonKilled)
	t := time.NewTimer(reapGrace + pipeGrace)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
	case <-ctx.Done():
	}
	in := p.info()
	if in.Running {
		// Signals were sent; only a process stuck in the kernel, or a
		// cancelled wait, leaves it here.
		return Result{
			Status: event.ToolError,
			Output: fmt.Sprintf("sent SIGKILL to %s but it has not ended yet; read it again later", in.ProcessID),
			Data:   ProcessKillData{OK: false, ProcessInfo: in, Note: "not ended yet"},
		}
	}
	return Result{
		Status: event.ToolOK,
		Output: fmt.Sprintf("%s ($ %s) %s.", in.ProcessID, truncate(commandLine(in.Command), 200), describeProcState(in)),
		Data:   ProcessKillData{OK: true, ProcessInfo: in},
	}
}

func (p *bgProcess) outputEnd() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ring.total
}

// describeProcState says in a few words whether a process runs or how it ended.
func describeProcState(in ProcessInfo) string {
	d := (time.Duration(in.DurationMS) * time.Millisecond).Round(100 * time.Millisecond)
	if in.Running {
		return "running for " + d.String()
	}
	var s string
	switch {
	case in.Signal != "":
		s = "killed by signal " + in.Signal
	case in.ExitCode != nil:
		s = fmt.Sprintf("exited with code %d", *in.ExitCode)
	default:
		s = "ended"
	}
	if in.Reason != "" {
		s += " (" + in.Reason + ")"
	}
	return s + " after " + d.String()
}

// commandLine shows a multi-line command on one line.
func commandLine(s string) string {
	l, more := firstLine(s)
	if more {
		l += " …"
	}
	return l
}
