package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider"
)

// CommandData is the structured result of run_command (seed 002 "exec").
type CommandData struct {
	OK         bool   `json:"ok"`
	ExitCode   int    `json:"exit_code"` // -1 when killed
	Output     string `json:"output"`    // stdout and stderr interleaved, capped
	Truncated  bool   `json:"truncated"`
	DurationMS int64  `json:"duration_ms"`
	Cwd        string `json:"cwd"` // relative to the workspace
	// MentionedPaths are words of the command naming existing workspace
	// files, relative to the workspace, so viewers can link them.
	MentionedPaths []string `json:"mentioned_paths"`
	Error          string   `json:"error,omitempty"` // timeout, cancel or signal
}

type commandArgs struct {
	Command    string `json:"command"`
	TimeoutS   int    `json:"timeout_s"`
	Cwd        string `json:"cwd"`
	Background bool   `json:"background"`
}

type runCommand struct{ cfg Config }

// NewRunCommand returns the run_command tool.
func NewRunCommand(cfg Config) Tool { return runCommand{cfg: cfg.withDefaults()} }

const commandSchemaTmpl = `{
  "type": "object",
  "properties": {
    "command": {"type": "string", "minLength": 1, "description": "Shell command, run with /bin/sh -c."},
    "timeout_s": {"type": "integer", "minimum": 1, "maximum": %d, "description": "Timeout in seconds. Default %d.%s"},
    "cwd": {"type": "string", "description": "Working directory relative to the workspace root. Default \".\"."}%s
  },
  "required": ["command"],
  "additionalProperties": false
}`

const backgroundProperty = `,
    "background": {"type": "boolean", "description": "Start the command in the background and return at once with a process_id, for servers and watchers; read its output and stop it with the process tool. Default false."}`

func (t runCommand) Spec() provider.ToolSpec {
	desc := "Run a shell command in the workspace and return its combined stdout and stderr. " +
		"Stdin is empty and there is no terminal, so interactive programs fail. Anything the command " +
		"starts in the background is killed when it ends. Long output keeps only its head and tail."
	// Background mode is offered only where it works, so the model is not
	// taught an argument that would always be refused.
	timeoutNote, bgProp := "", ""
	if t.cfg.Processes != nil {
		desc += " For servers and watchers, use background: true instead of `&` or nohup."
		timeoutNote = fmt.Sprintf(" With background, how long the process may run at most (default %s).", t.backgroundTimeout())
		bgProp = backgroundProperty
	}
	return provider.ToolSpec{
		Name:        NameRunCommand,
		Description: desc,
		Parameters: json.RawMessage(fmt.Sprintf(commandSchemaTmpl,
			int(t.cfg.MaxCommandTimeout/time.Second), int(t.cfg.CommandTimeout/time.Second), timeoutNote, bgProp)),
	}
}

func (t runCommand) backgroundTimeout() time.Duration {
	if t.cfg.BackgroundTimeout > 0 {
		return t.cfg.BackgroundTimeout
	}
	return DefaultBackgroundTimeout
}

func (runCommand) Label(args json.RawMessage) string {
	var a commandArgs
	if err := decodeArgs(args, &a); err != nil || strings.TrimSpace(a.Command) == "" {
		return "$ (invalid arguments)"
	}
	line, more := firstLine(a.Command)
	l := "$ " + truncate(line, 120)
	if more {
		l += " …"
	}
	if a.Background {
		l += " (background)"
	}
	return l
}

func (runCommand) Intent(args json.RawMessage) Intent {
	in := Intent{Effect: EffectExec}
	var a commandArgs
	if err := decodeArgs(args, &a); err != nil || strings.TrimSpace(a.Command) == "" {
		in.Action = "run_command " + truncate(string(args), 500)
		in.Invalid = true
		return in
	}
	in.Command = a.Command
	in.Action = "$ " + a.Command
	if c := strings.TrimSpace(a.Cwd); c != "" && filepath.Clean(c) != "." {
		// The same command means something else elsewhere; show where.
		in.Action += "\n(in " + c + ")"
	}
	if a.Background {
		// A person approves a one-off command differently from a server
		// left running.
		in.Action += "\n(in the background)"
	}
	return in
}

func (t runCommand) Run(ctx context.Context, env Env, args json.RawMessage) (Result, error) {
	if err := checkWorkspace(env); err != nil {
		return Result{}, err
	}
	var a commandArgs
	if err := decodeArgs(args, &a); err != nil {
		return invalidArgs(err), nil
	}
	if strings.TrimSpace(a.Command) == "" {
		return invalidArgs(errors.New("command is required")), nil
	}
	if strings.ContainsRune(a.Command, 0) {
		return invalidArgs(errors.New("command contains a NUL byte")), nil
	}
	timeout := t.cfg.CommandTimeout
	switch {
	case a.TimeoutS < 0:
		return invalidArgs(errors.New("timeout_s must be at least 1")), nil
	case a.Background && a.TimeoutS > 0:
		timeout = min(time.Duration(a.TimeoutS)*time.Second, t.backgroundTimeout())
	case a.Background:
		timeout = t.backgroundTimeout()
	case a.TimeoutS > 0:
		timeout = min(time.Duration(a.TimeoutS)*time.Second, t.cfg.MaxCommandTimeout)
	}
	if a.Background && t.cfg.Processes == nil {
		return errorResult("background commands are not available here; run the command in the foreground with a timeout_s instead"), nil
	}
	if a.Cwd == "" {
		a.Cwd = "."
	}
	// The command runs in a directory given by path: a shell can go
	// anywhere, so this check is for clear answers, not confinement.
	ws, err := openWorkspace(env.Workspace)
	if err != nil {
		return Result{}, fmt.Errorf("tool: %w", err)
	}
	defer ws.Close()
	cwd, real, err := ws.resolve(a.Cwd)
	if err != nil {
		return pathFailure(err), nil
	}
	dir := ws.abs(cwd)
	fi, err := ws.root.Stat(real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errorResult("cwd %s does not exist", cwd), nil
	case err != nil:
		return rootFailure(fmt.Errorf("cwd %s: %w", cwd, bareErr(err)), a.Cwd), nil
	case !fi.IsDir():
		return errorResult("cwd %s is not a directory", cwd), nil
	}
	if ctx.Err() != nil {
		return Result{Status: event.ToolCancelled, Output: "cancelled before the command started"}, nil
	}
	if a.Background {
		return t.startBackground(env, a.Command, dir, cwd, timeout), nil
	}

	sr := shellRun{
		command:  a.Command,
		dir:      dir,
		env:      commandEnv(t.cfg.runnerEnviron(), t.cfg.ExtraEnv),
		timeout:  timeout,
		outCap:   t.cfg.OutputCap,
		progress: env.Progress,
	}
	if t.cfg.Processes != nil && t.cfg.Processes.reg != nil {
		sr.track = &tracking{reg: t.cfg.Processes.reg, session: env.SessionID, runID: env.RunID}
	}
	o, err := sr.run(ctx)
	if errors.As(err, new(*trackError)) {
		return errorResult("the command was not started: it could not be recorded (%v), and an unrecorded process could outlive the runner unseen", bareErr(err)), nil
	}
	if err != nil {
		return errorResult("could not start the command: %v", bareErr(err)), nil
	}

	data := CommandData{
		ExitCode:       o.exitCode,
		Output:         o.output,
		Truncated:      o.truncated,
		DurationMS:     o.duration.Milliseconds(),
		Cwd:            cwd,
		MentionedPaths: mentionedPaths(ws, cwd, a.Command),
	}
	status := event.ToolOK
	switch {
	case o.timedOut:
		status = event.ToolTimeout
		data.Error = fmt.Sprintf("timed out after %s; the command and everything it started were killed", describeDuration(timeout))
	case o.cancelled:
		status = event.ToolCancelled
		data.Error = "cancelled; the command and everything it started were killed"
	case o.signal != "":
		status = event.ToolError
		data.Error = "killed by signal: " + o.signal
	case o.exitCode != 0:
		status = event.ToolError
		data.Error = fmt.Sprintf("exit code %d", o.exitCode)
	}
	data.OK = status == event.ToolOK

	out := o.output
	if out == "" {
		out = "(no output)"
	}
	if data.Error != "" {
		out = strings.TrimRight(out, "\n") + "\n[" + data.Error + "]"
	}
	return Result{Status: status, Output: out, Data: data}, nil
}

const maxMentionedPaths = 20

// mentionedPaths finds words of the command that name existing files in the
// workspace; cwd is the command's directory, relative to the workspace. It
// is a hint for viewers, not a parse of shell syntax.
func mentionedPaths(ws *workspaceFS, cwd, command string) []string {
	words := strings.FieldsFunc(command, func(r rune) bool {
		return strings.ContainsRune(" \t\r\n;|&<>()`'\"=,", r)
	})
	seen := map[string]bool{}
	found := []string{}
	for i, w := range words {
		if len(found) >= maxMentionedPaths || i >= 200 {
			break
		}
		w = strings.TrimRight(w, ":")
		if w == "" || w == "." || w == ".." || strings.HasPrefix(w, "-") || strings.ContainsAny(w, "*?[]{}$~\\") {
			continue
		}
		p := w
		if !filepath.IsAbs(p) {
			p = path.Join(cwd, filepath.ToSlash(p))
		}
		rel, real, err := ws.resolve(p)
		if err != nil || rel == "." || seen[rel] {
			continue
		}
		if _, err := ws.root.Lstat(real); err != nil {
			continue
		}
		seen[rel] = true
		found = append(found, rel)
	}
	return found
}

// startBackground starts command in the table and returns at once; the
// process tool follows it from there.
func (t runCommand) startBackground(env Env, command, dir, cwd string, timeout time.Duration) Result {
	p, err := t.cfg.Processes.start(bgSpec{
		session: env.SessionID,
		run:     env.RunID,
		command: command,
		dir:     dir,
		cwd:     cwd,
		env:     commandEnv(t.cfg.runnerEnviron(), t.cfg.ExtraEnv),
		timeout: timeout,
	})
	var tooMany *tooManyError
	switch {
	case errors.As(err, &tooMany):
		return errorResult("cannot start a background command: %v; kill one you no longer need with the process tool first", err)
	case errors.Is(err, errTableClosed):
		return errorResult("cannot start a background command: %v", err)
	case errors.As(err, new(*trackError)):
		return errorResult("the background command was not started: it could not be recorded (%v), and an unrecorded process could outlive the runner unseen", bareErr(err))
	case err != nil:
		return errorResult("could not start the command: %v", bareErr(err))
	}
	out := fmt.Sprintf("Started in the background as %s (pid %d); it is killed after %s at the latest.\n"+
		"Read its output with process {\"action\": \"read\", \"process_id\": %q} (add \"wait_s\" to wait for output, "+
		"\"since\": next_offset to read only what is new); stop it with {\"action\": \"kill\", \"process_id\": %q}.",
		p.id, p.pid, describeDuration(timeout), p.id, p.id)
	return Result{
		Status: event.ToolOK,
		Output: out,
		Data:   BackgroundData{OK: true, ProcessID: p.id, PID: p.pid, Command: command, Cwd: cwd, Background: true},
	}
}
