package api

// The operator's console: background processes (h16-ops). A process is
// seen through two sources: the process table of a runner running in this
// process (its output, its exit), and the records every runner and
// terminal of this host writes under the data dir (internal/proctrack),
// which name processes of runners in other processes and those a dead
// runner left behind. See docs/API.md, "Processes".

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/identity"
	"github.com/caduceus-dev/caduceus/internal/netlimit"
	"github.com/caduceus-dev/caduceus/internal/proctrack"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// ProcessTable is the process table of a runner in this process.
type ProcessTable interface {
	All() []tool.ConsoleProcess
	Get(id string) (tool.ConsoleProcess, error)
	Output(id string, since int64) (tool.ConsoleChunk, error)
	WaitOutput(ctx context.Context, id string, since int64, d time.Duration)
	Kill(ctx context.Context, id string) (tool.ConsoleProcess, error)
}

// ProcessRecords are the process records of this host (proctrack).
type ProcessRecords interface {
	List() ([]proctrack.Listed, error)
	KillAny(processID, why string) (proctrack.Listed, error)
}

// Error codes of the process routes.
const (
	// CodeNoOutput: the process's output is kept by the runner that
	// started it, in another process; only its record is visible here.
	CodeNoOutput = "no_output"
)

// The statuses of a process in GET /api/processes besides proctrack's
// (running, starting, orphaned, killed, elsewhere).
const (
	processExited = "exited" // ended by itself, with its exit code
)

// processView is a process as GET /api/processes shows it.
type processView struct {
	ID        string     `json:"id"`
	Kind      string     `json:"kind"` // agent, terminal
	Status    string     `json:"status"`
	Command   string     `json:"command"`
	SessionID string     `json:"session_id"`
	RunID     string     `json:"run_id"`
	PID       int        `json:"pid"`
	StartedAt event.Time `json:"started_at"`
	EndedAt   event.Time `json:"ended_at"` // null while running
	ExitCode  *int       `json:"exit_code"`
	Signal    string     `json:"signal,omitempty"`
	// Reason says why it was stopped (killed, timed out, its runner gone).
	Reason string `json:"reason,omitempty"`
	// Output: GET .../log can show its output (a process of this
	// process's runner).
	Output      bool   `json:"output"`
	OutputBytes int64  `json:"output_bytes"`
	RunnerID    string `json:"runner_id,omitempty"`
}

func tableView(p tool.ConsoleProcess, red func(string) string) processView {
	v := processView{ID: p.ProcessID, Kind: proctrack.KindAgent, Command: red(p.Command), SessionID: p.SessionID, RunID: p.RunID,
		PID: p.PID, StartedAt: p.StartedAt, EndedAt: p.EndedAt, ExitCode: p.ExitCode, Signal: p.Signal, Reason: p.Reason,
		Output: true, OutputBytes: p.OutputBytes}
	switch {
	case p.Running:
		v.Status = proctrack.StatusRunning
	case p.Reason != "":
		v.Status = proctrack.StatusKilled
	default:
		v.Status = processExited
	}
	return v
}

func recordView(l proctrack.Listed, red func(string) string) processView {
	kind := l.Kind
	if kind == "" {
		kind = proctrack.KindAgent
	}
	v := processView{ID: l.ProcessID, Kind: kind, Status: l.Status, Command: red(l.Command), SessionID: l.SessionID, RunID: l.RunID,
		PID: l.PID, StartedAt: event.Time{Time: l.StartedAt.UTC()}, RunnerID: l.RunnerID, Reason: l.Why}
	switch l.Status {
	case proctrack.StatusKilled:
		v.EndedAt = event.Time{Time: l.EndedAt.UTC()}
	case proctrack.StatusOrphaned:
		v.Reason = "its runner is gone"
	}
	return v
}

// processes lists what both sources know, oldest first; the table's view
// of a process wins over its record.
func (a *API) processes() ([]processView, error) {
	red := a.opt.Redactor.String
	var out []processView
	seen := map[string]bool{}
	if a.opt.Processes != nil {
		for _, p := range a.opt.Processes.All() {
			out = append(out, tableView(p, red))
			seen[p.ProcessID] = true
		}
	}
	if a.opt.ProcessRecords != nil {
		ls, err := a.opt.ProcessRecords.List()
		if err != nil {
			return nil, err
		}
		for _, l := range ls {
			if !seen[l.ProcessID] {
				out = append(out, recordView(l, red))
			}
		}
	}
	return out, nil
}

func (a *API) listProcesses(w http.ResponseWriter, r *http.Request) {
	ps, err := a.processes()
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if ps == nil {
		ps = []processView{}
	}
	// Oldest first across both sources.
	sortProcesses(ps)
	writeJSON(w, http.StatusOK, map[string]any{"processes": ps, "visibility": a.processVisibility()})
}

// processVisibility says what the list can and cannot show, for people.
func (a *API) processVisibility() string {
	var parts []string
	if a.opt.Processes != nil {
		parts = append(parts, "the agent's background processes of the runner in this server, with their output")
	} else {
		parts = append(parts, "no runner runs in this server: the agent's processes are seen through their records only, without output")
	}
	if a.opt.ProcessRecords != nil {
		parts = append(parts, "every process recorded under this data dir on this host (other runner processes, terminals, processes left by a runner that died)")
	}
	parts = append(parts, "runners on other hosts keep their processes to themselves: they are not listed")
	return strings.Join(parts, "; ")
}

// whoName names the caller for the log: a person's name, or the kind of
// credential (the server token, the open local server).
func whoName(r *http.Request) string {
	p, ok := principal(r)
	if !ok {
		return ""
	}
	if p.Name != "" {
		return p.Name
	}
	return string(p.Kind)
}

// processID reads a process id from the path: proc_…, cmd_…, term_…
// (letters, digits, _ and -).
func processID(w http.ResponseWriter, r *http.Request) (string, bool) {
	v := r.PathValue("id")
	ok := v != "" && len(v) <= 100
	for _, c := range v {
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			ok = false
		}
	}
	if !ok {
		writeError(w, http.StatusNotFound, control.CodeNotFound, "process not found", nil)
	}
	return v, ok
}

// record finds id among the records, if any.
func (a *API) record(id string) (proctrack.Listed, bool, error) {
	if a.opt.ProcessRecords == nil {
		return proctrack.Listed{}, false, nil
	}
	ls, err := a.opt.ProcessRecords.List()
	if err != nil {
		return proctrack.Listed{}, false, err
	}
	for _, l := range ls {
		if l.ProcessID == id {
			return l, true, nil
		}
	}
	return proctrack.Listed{}, false, nil
}

func (a *API) killProcess(w http.ResponseWriter, r *http.Request) {
	id, ok := processID(w, r)
	if !ok {
		return
	}
	red := a.opt.Redactor.String
	if a.opt.Processes != nil {
		if _, err := a.opt.Processes.Get(id); err == nil {
			// SIGTERM, then SIGKILL after the table's grace period: the
			// answer comes once the process has ended.
			ctx, cancel := context.WithTimeout(r.Context(), 15*time.Second)
			defer cancel()
			p, err := a.opt.Processes.Kill(ctx, id)
			if err != nil && r.Context().Err() == nil {
				a.fail(w, r, fmt.Errorf("killing process %s: %w", id, err))
				return
			}
			a.log.Info("process killed from the console", "process_id", id, "pid", p.PID, "session", p.SessionID, "run", p.RunID,
				"by", whoName(r))
			writeJSON(w, http.StatusOK, map[string]any{"process": tableView(p, red)})
			return
		}
	}
	if a.opt.ProcessRecords != nil {
		l, err := a.opt.ProcessRecords.KillAny(id, "killed from the console")
		switch {
		case err == nil:
			a.log.Info("process killed from the console", "process_id", id, "pid", l.PID, "session", l.SessionID, "run", l.RunID,
				"runner", l.RunnerID, "by", whoName(r))
			writeJSON(w, http.StatusOK, map[string]any{"process": recordView(l, red)})
			return
		case !errors.Is(err, proctrack.ErrNotFound):
			a.fail(w, r, err)
			return
		}
	}
	writeError(w, http.StatusNotFound, control.CodeNotFound, "process not found", nil)
}

// Bounds of GET /api/processes/{id}/log.
const (
	defaultLogTail = 64 << 10
	maxLogTail     = 1 << 20
)

func (a *API) processLog(w http.ResponseWriter, r *http.Request) {
	id, ok := processID(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	var p tool.ConsoleProcess
	err := tool.ErrNoProcess
	if a.opt.Processes != nil {
		p, err = a.opt.Processes.Get(id)
	}
	if err != nil {
		if _, found, lerr := a.record(id); lerr == nil && found {
			writeError(w, http.StatusConflict, CodeNoOutput,
				"this process's output is kept by the runner that started it, in another server process; only its record is visible here", nil)
			return
		}
		writeError(w, http.StatusNotFound, control.CodeNotFound, "process not found", nil)
		return
	}
	tail := int64(defaultLogTail)
	if v := q.Get("tail"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || n > maxLogTail {
			writeError(w, http.StatusBadRequest, control.CodeInvalidInput, fmt.Sprintf("tail must be a byte count from 0 to %d", maxLogTail), nil)
			return
		}
		tail = n
	}
	since := max(0, p.OutputBytes-tail)
	v := r.Header.Get("Last-Event-ID")
	if v == "" {
		v = q.Get("since")
	}
	if v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, control.CodeInvalidCursor, "since must be a non-negative byte offset", nil)
			return
		}
		since = n
	}
	follow, ok := boolParam(w, q.Get("follow"), "follow")
	if !ok {
		return
	}
	c, err := a.opt.Processes.Output(id, since)
	if err != nil {
		writeError(w, http.StatusBadRequest, control.CodeInvalidCursor, err.Error(), nil)
		return
	}
	red := a.opt.Redactor.Stream()
	if !follow {
		writeJSON(w, http.StatusOK, logChunk(c, red.Write(string(c.Data))+red.Flush(), a.opt.Redactor.String))
		return
	}
	a.followProcess(w, r, id, c, red)
}

// processChunk is one piece of a process's output.
type processChunk struct {
	Output  string      `json:"output"`
	From    int64       `json:"from"`
	Next    int64       `json:"next"`
	Dropped int64       `json:"dropped"` // bytes after the asked offset no longer kept
	Process processView `json:"process"`
}

func logChunk(c tool.ConsoleChunk, text string, red func(string) string) processChunk {
	return processChunk{Output: text, From: c.From, Next: c.Next, Dropped: c.Dropped, Process: tableView(c.Process, red)}
}

// followProcess streams a process's output as Server-Sent Events: an
// "output" event per piece (its id the offset to resume from, which
// EventSource sends back as Last-Event-ID) and an "end" event once the
// process has ended and everything is sent.
func (a *API) followProcess(w http.ResponseWriter, r *http.Request, id string, c tool.ConsoleChunk, red interface {
	Write(string) string
	Flush() string
}) {
	out, release, ok := a.openSSE(w, r)
	if !ok {
		return
	}
	defer release()
	ctx := r.Context()
	signedIn := a.signedInCheck(r)
	for {
		if !signedIn() {
			out.buf.WriteString(": signed out\n\n")
			out.flush()
			return
		}
		text := red.Write(string(c.Data))
		ended := !c.Process.Running
		if ended {
			text += red.Flush()
		}
		if len(c.Data) > 0 || c.Dropped > 0 || text != "" {
			writeSSE(&out.buf, "output", strconv.FormatInt(c.Next, 10), logChunk(c, text, a.opt.Redactor.String))
		}
		if ended {
			writeSSE(&out.buf, "end", "", tableView(c.Process, a.opt.Redactor.String))
			out.flush()
			return
		}
		if !out.flush() {
			return
		}
		since := c.Next
		a.opt.Processes.WaitOutput(ctx, id, since, a.opt.Heartbeat)
		if ctx.Err() != nil {
			return
		}
		var err error
		if c, err = a.opt.Processes.Output(id, since); err != nil {
			return // forgotten by the table meanwhile
		}
		if len(c.Data) == 0 && c.Process.Running {
			out.buf.WriteString(": ping\n\n")
		}
	}
}

// openSSE starts an event stream of the console's (a process's output,
// the server's log), counted against the client's stream limit; release
// when it ends.
func (a *API) openSSE(w http.ResponseWriter, r *http.Request) (*sse, func(), bool) {
	key := netlimit.Key(r.RemoteAddr)
	if !a.streams.Acquire(key) {
		n := a.streams.Limit()
		writeError(w, http.StatusTooManyRequests, CodeTooManyStreams,
			fmt.Sprintf("this client has %d event streams open, the most one address may hold; close one (a browser tab holds one)", n),
			map[string]any{"limit": n})
		return nil, nil, false
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	out := &sse{w: w, rc: http.NewResponseController(w), timeout: a.opt.StreamWriteTimeout}
	out.buf.WriteString("retry: 1000\n: connected\n\n")
	return out, func() { a.streams.Release(key) }, true
}

// signedInCheck returns a check of whoever opened a stream, asked again
// once per heartbeat as the journal's streams do: a disabled account, a
// revoked token or an ended session closes the stream.
func (a *API) signedInCheck(r *http.Request) func() bool {
	who, signed := principal(r)
	checked := time.Now()
	return func() bool {
		if !signed || time.Since(checked) < a.opt.Heartbeat {
			return true
		}
		checked = time.Now()
		_, err := a.opt.Identity.Recheck(r.Context(), who)
		return !errors.Is(err, identity.ErrEnded)
	}
}

// writeSSE adds a named event; id "" sets none.
func writeSSE(buf interface {
	WriteString(string) (int, error)
	Write([]byte) (int, error)
}, name, id string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	if id != "" {
		buf.WriteString("id: " + id + "\n")
	}
	buf.WriteString("event: " + name + "\ndata: ")
	buf.Write(b)
	buf.WriteString("\n\n")
}

// boolParam reads an optional boolean query parameter.
func boolParam(w http.ResponseWriter, v, name string) (bool, bool) {
	switch v {
	case "", "0", "false":
		return false, true
	case "1", "true":
		return true, true
	}
	writeError(w, http.StatusBadRequest, control.CodeInvalidInput, name+" must be true or false", nil)
	return false, false
}

func sortProcesses(ps []processView) {
	slices.SortStableFunc(ps, func(a, b processView) int { return a.StartedAt.Compare(b.StartedAt.Time) })
}
