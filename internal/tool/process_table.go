package tool

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/proctrack"
)

// Defaults of a ProcessTable.
const (
	// DefaultMaxProcesses bounds the running background processes of a
	// table: each holds a process tree and an output buffer.
	DefaultMaxProcesses = 16
	// DefaultProcessBuffer is how much of a background process's latest
	// output is kept; a dev server's log is mostly interesting at its end.
	DefaultProcessBuffer = 1 << 20
	// DefaultBackgroundTimeout is Config.BackgroundTimeout's default.
	DefaultBackgroundTimeout = time.Hour
)

const (
	// killGrace is how long a process may take over SIGTERM (flushing,
	// removing lock files) before the group gets SIGKILL.
	killGrace = 2 * time.Second
	// maxFinished bounds the exited processes a table remembers so their
	// final output stays readable without the table growing for ever.
	maxFinished = 64
)

// Why a background process was stopped, for people and the model.
const (
	reasonKilled   = "killed with the process tool"
	reasonShutdown = "killed because the runner shut down"
)

var (
	errTableClosed = errors.New("the runner is shutting down")
	errNoProcess   = errors.New("no such process")
)

// tooManyError refuses a start beyond the table's cap.
type tooManyError struct{ limit, session int }

func (e *tooManyError) Error() string {
	return fmt.Sprintf("%d background processes are already running (%d of them started in this session)", e.limit, e.session)
}

// ProcessTable holds the background processes started by run_command, per
// session. Make one with NewProcessTable and share it between the tools of
// a runner; it is safe for concurrent use, and Close kills what is left.
// With a registry, every process is also recorded on disk while it runs,
// so that one outliving this runner is found and killed by the next
// runner or watchdog (internal/proctrack).
type ProcessTable struct {
	maxLive int
	bufCap  int
	reg     *proctrack.Registry // nil: tracked in memory only

	mu     sync.Mutex
	procs  map[string]*bgProcess
	closed bool
}

// NewProcessTable returns a table running at most maxLive processes at a
// time, each keeping the last bufBytes of its output. Zero or negative
// values mean DefaultMaxProcesses and DefaultProcessBuffer. reg, when not
// nil, records each process durably while it runs.
func NewProcessTable(maxLive, bufBytes int, reg *proctrack.Registry) *ProcessTable {
	if maxLive <= 0 {
		maxLive = DefaultMaxProcesses
	}
	if bufBytes <= 0 {
		bufBytes = DefaultProcessBuffer
	}
	return &ProcessTable{maxLive: maxLive, bufCap: bufBytes, reg: reg, procs: map[string]*bgProcess{}}
}

// bgSpec is a background command to start.
type bgSpec struct {
	session string
	run     string
	command string
	dir     string // absolute
	cwd     string // relative to the workspace, for display
	env     []string
	timeout time.Duration
}

// bgProcess is one background command. Its fields below mu change as it
// runs; the others are fixed at start.
type bgProcess struct {
	id      string
	session string
	run     string
	command string
	cwd     string
	pid     int
	started time.Time

	exited chan struct{} // closed once the shell has been reaped
	done   chan struct{} // closed once its output is drained and its end recorded

	mu       sync.Mutex
	ring     outputRing
	changed  chan struct{} // closed and replaced on new output or the end
	reaped   bool          // exited is closed: the pid may be reused, signal nothing
	running  bool          // false once done
	ended    time.Time
	exitCode int
	signal   string
	reason   string
}

// start launches spec in a new session (so its whole tree is one process
// group we can kill) with stdout and stderr on one pipe, interleaved as
// written. The process does not depend on any call's context: it outlives
// the call that started it.
func (pt *ProcessTable) start(spec bgSpec) (*bgProcess, error) {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if pt.closed {
		return nil, errTableClosed
	}
	live, mine := 0, 0
	for _, p := range pt.procs {
		if p.isRunning() {
			live++
			if p.session == spec.session {
				mine++
			}
		}
	}
	if live >= pt.maxLive {
		return nil, &tooManyError{limit: pt.maxLive, session: mine}
	}
	pt.pruneLocked()

	procID := pt.newIDLocked()
	env := spec.env
	tracked := proctrack.Process{ProcessID: procID, RunID: spec.run, SessionID: spec.session, Command: spec.command,
		StartedAt: time.Now(), Deadline: time.Now().Add(spec.timeout)}
	if pt.reg != nil {
		// Inherited by everything the command starts, this is how a sweep
		// recognises what the shell left behind, or a shell whose pid this
		// runner did not live to record. A process that could not be
		// recorded could outlive this runner unseen: it does not run.
		env = append(slices.Clip(env), pt.reg.Env(procID))
		if err := pt.reg.Prepare(tracked); err != nil {
			return nil, &trackError{err: err}
		}
	}
	r, w, err := os.Pipe()
	if err != nil {
		pt.untrack(procID)
		return nil, err
	}
	cmd := exec.Command("/bin/sh", "-c", spec.command)
	cmd.Dir = spec.dir
	cmd.Env = env
	// Passing the *os.File makes exec start no copying goroutine, so Wait
	// returns when the shell exits and we decide how long to keep reading.
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	w.Close()
	if err != nil {
		r.Close()
		pt.untrack(procID)
		return nil, err
	}
	started := time.Now()
	if pt.reg != nil {
		// Before anything reaps the shell, so its pid is still its own.
		tracked.PID = cmd.Process.Pid
		if err := pt.reg.Track(tracked); err != nil {
			killGroup(cmd.Process.Pid)
			_ = cmd.Wait()
			r.Close()
			pt.untrack(procID)
			return nil, &trackError{err: err}
		}
	}

	p := &bgProcess{
		id:      procID,
		session: spec.session,
		run:     spec.run,
		command: spec.command,
		cwd:     spec.cwd,
		pid:     cmd.Process.Pid,
		started: started,
		exited:  make(chan struct{}),
		done:    make(chan struct{}),
		ring:    newOutputRing(pt.bufCap),
		changed: make(chan struct{}),
		running: true,
	}
	pt.procs[p.id] = p

	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		b := make([]byte, 32<<10)
		for {
			n, err := r.Read(b)
			if n > 0 {
				p.mu.Lock()
				p.ring.Write(b[:n])
				p.notifyLocked()
				p.mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	timer := time.AfterFunc(spec.timeout, func() {
		p.terminate("timed out after " + describeDuration(spec.timeout))
	})
	go pt.supervise(p, cmd, r, readerDone, timer)
	return p, nil
}

// untrack removes the record of a process that has ended (nothing of its
// group survives SIGKILL) or never started. Should the removal fail, the
// record outlives the process harmlessly: its pid's start time no longer
// matches, and a sweep removes it once this runner is gone.
func (pt *ProcessTable) untrack(procID string) {
	if pt.reg != nil {
		_ = pt.reg.Untrack(procID)
	}
}

// trackError is a process that could not be recorded, and so was not
// started or was killed at once.
type trackError struct{ err error }

func (e *trackError) Error() string { return e.err.Error() }
func (e *trackError) Unwrap() error { return e.err }

// supervise reaps the shell, kills what it left behind, drains the output
// and records the end.
func (pt *ProcessTable) supervise(p *bgProcess, cmd *exec.Cmd, r *os.File, readerDone <-chan struct{}, timer *time.Timer) {
	_ = cmd.Wait() // the exit status is read from ProcessState
	ended := time.Now()
	timer.Stop()
	// Jobs the shell left would run unsupervised and hold the pipe; they go
	// with it. The group id cannot have been reused while they live.
	killGroup(p.pid)
	pt.untrack(p.id)
	p.mu.Lock()
	p.reaped = true
	p.mu.Unlock()
	close(p.exited)

	select {
	case <-readerDone:
	case <-time.After(pipeGrace):
		// Only a process that left the group can still hold the pipe;
		// closing our end unblocks the reader (the file is polled).
		r.Close()
		<-readerDone
	}
	r.Close()

	p.mu.Lock()
	p.running = false
	p.ended = ended
	p.exitCode = -1
	if ps := cmd.ProcessState; ps != nil {
		p.exitCode = ps.ExitCode()
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			p.signal = ws.Signal().String()
		}
	}
	p.notifyLocked()
	p.mu.Unlock()
	close(p.done)
}

// notifyLocked wakes every reader waiting for news. Callers hold p.mu.
func (p *bgProcess) notifyLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

func (p *bgProcess) isRunning() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.running
}

// terminate asks the process group to stop with SIGTERM and sends SIGKILL
// if the shell is still there after killGrace. It returns once the shell is
// reaped or SIGKILL is sent; wait on done for the end. The first reason
// given is the one recorded.
func (p *bgProcess) terminate(reason string) {
	p.mu.Lock()
	if p.reaped {
		p.mu.Unlock()
		return
	}
	if p.reason == "" {
		p.reason = reason
	}
	_ = syscall.Kill(-p.pid, syscall.SIGTERM)
	p.mu.Unlock()
	t := time.NewTimer(killGrace)
	defer t.Stop()
	select {
	case <-p.exited:
	case <-t.C:
		p.kill()
	}
}

// kill SIGKILLs the group unless the shell has been reaped already, when
// the group is gone (supervise killed it) and its id may be reused.
func (p *bgProcess) kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.reaped {
		killGroup(p.pid)
	}
}

// ProcessInfo describes a background process.
type ProcessInfo struct {
	ProcessID string `json:"process_id"`
	PID       int    `json:"pid"`
	Command   string `json:"command"`
	Cwd       string `json:"cwd"` // relative to the workspace
	Running   bool   `json:"running"`
	// ExitCode is null while running and -1 when killed by a signal.
	ExitCode *int   `json:"exit_code"`
	Signal   string `json:"signal,omitempty"`
	// Reason says why it was stopped (killed, timed out, shutdown); empty
	// when it ended by itself.
	Reason      string     `json:"reason,omitempty"`
	StartedAt   event.Time `json:"started_at"`
	EndedAt     event.Time `json:"ended_at"` // null while running
	DurationMS  int64      `json:"duration_ms"`
	OutputBytes int64      `json:"output_bytes"` // written so far, kept or not
}

func (p *bgProcess) info() ProcessInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.infoLocked()
}

func (p *bgProcess) infoLocked() ProcessInfo {
	in := ProcessInfo{
		ProcessID:   p.id,
		PID:         p.pid,
		Command:     p.command,
		Cwd:         p.cwd,
		Running:     p.running,
		Reason:      p.reason,
		StartedAt:   event.Time{Time: p.started.UTC()},
		OutputBytes: p.ring.total,
	}
	if p.running {
		in.DurationMS = time.Since(p.started).Milliseconds()
		return in
	}
	code := p.exitCode
	in.ExitCode = &code
	in.Signal = p.signal
	in.EndedAt = event.Time{Time: p.ended.UTC()}
	in.DurationMS = p.ended.Sub(p.started).Milliseconds()
	return in
}

// procChunk is output read from a process.
type procChunk struct {
	data    []byte
	from    int64 // offset of data[0]
	next    int64 // offset to read from next time
	dropped int64 // bytes after since that the ring no longer holds
	info    ProcessInfo
}

// read returns the output from offset since on. While the process runs, a
// trailing incomplete UTF-8 sequence is left for the next read so no read
// shows a broken character.
func (p *bgProcess) read(since int64) (procChunk, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if since > p.ring.total {
		return procChunk{}, fmt.Errorf("since %d is beyond the end of the output (%d bytes so far)", since, p.ring.total)
	}
	data, from := p.ring.Since(since)
	if from > since {
		// The cut may fall inside a character; skip its continuation bytes.
		for i := 0; i < 3 && len(data) > 0 && data[0]&0xC0 == 0x80; i++ {
			data, from = data[1:], from+1
		}
	}
	if p.running {
		data = trimPartialRune(data)
	}
	return procChunk{
		data:    data,
		from:    from,
		next:    from + int64(len(data)),
		dropped: max(0, from-since),
		info:    p.infoLocked(),
	}, nil
}

// wait blocks until there is output beyond offset since, the process has
// ended, d has passed or ctx is done.
func (p *bgProcess) wait(ctx context.Context, since int64, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		p.mu.Lock()
		news := p.hasNewsLocked(since)
		ch := p.changed
		p.mu.Unlock()
		if news {
			return
		}
		select {
		case <-ch:
		case <-t.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// hasNewsLocked reports whether a read from since would show something
// new: the end, or output other than the start of a character still being
// written. Callers hold p.mu.
func (p *bgProcess) hasNewsLocked(since int64) bool {
	if !p.running {
		return true
	}
	if p.ring.total <= since {
		return false
	}
	tail, _ := p.ring.Since(max(since, p.ring.total-utf8.UTFMax))
	return len(trimPartialRune(tail)) > 0
}

// get returns session's process id. Another session's process is reported
// as missing: sessions cannot see each other's processes.
func (pt *ProcessTable) get(session, id string) (*bgProcess, error) {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	p, ok := pt.procs[id]
	if !ok || p.session != session {
		return nil, errNoProcess
	}
	return p, nil
}

// lookup returns process id whatever its session, for describing an
// approval; nil when unknown.
func (pt *ProcessTable) lookup(id string) *bgProcess {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	return pt.procs[id]
}

// list returns session's processes, oldest first.
func (pt *ProcessTable) list(session string) []*bgProcess {
	pt.mu.Lock()
	var ps []*bgProcess
	for _, p := range pt.procs {
		if p.session == session {
			ps = append(ps, p)
		}
	}
	pt.mu.Unlock()
	slices.SortFunc(ps, func(a, b *bgProcess) int {
		if c := a.started.Compare(b.started); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	return ps
}

// pruneLocked forgets the longest-finished processes beyond maxFinished.
// Callers hold pt.mu.
func (pt *ProcessTable) pruneLocked() {
	type fin struct {
		id    string
		ended time.Time
	}
	var finished []fin
	for id, p := range pt.procs {
		p.mu.Lock()
		if !p.running {
			finished = append(finished, fin{id, p.ended})
		}
		p.mu.Unlock()
	}
	if len(finished) <= maxFinished {
		return
	}
	slices.SortFunc(finished, func(a, b fin) int { return a.ended.Compare(b.ended) })
	for _, f := range finished[:len(finished)-maxFinished] {
		delete(pt.procs, f.id)
	}
}

// newIDLocked returns an unused id. Ids are short so the model copies them
// reliably, and random so that one left over in a transcript from before a
// restart does not name a new process. Callers hold pt.mu.
func (pt *ProcessTable) newIDLocked() string {
	for {
		id := "proc_" + strings.ToLower(rand.Text()[:8])
		if _, dup := pt.procs[id]; !dup {
			return id
		}
	}
}

// Close refuses new processes, stops every running one (SIGTERM, then
// SIGKILL after a grace period) and waits for them to end. When ctx ends
// first, everything left is SIGKILLed at once and ctx's error returned.
func (pt *ProcessTable) Close(ctx context.Context) error {
	pt.mu.Lock()
	pt.closed = true
	var running []*bgProcess
	for _, p := range pt.procs {
		if p.isRunning() {
			running = append(running, p)
		}
	}
	pt.mu.Unlock()

	all := make(chan struct{})
	go func() {
		var wg sync.WaitGroup
		for _, p := range running {
			wg.Go(func() {
				p.terminate(reasonShutdown)
				<-p.done
			})
		}
		wg.Wait()
		close(all)
	}()
	select {
	case <-all:
		return nil
	case <-ctx.Done():
		for _, p := range running {
			p.kill()
		}
		return ctx.Err()
	}
}

// outputRing keeps the last len(buf) bytes written, addressed by their
// offset in the whole stream, so readers can ask for "everything after
// byte n".
type outputRing struct {
	buf   []byte
	total int64 // bytes ever written
}

func newOutputRing(size int) outputRing { return outputRing{buf: make([]byte, size)} }

func (r *outputRing) Write(p []byte) {
	size := int64(len(r.buf))
	r.total += int64(len(p))
	if int64(len(p)) > size {
		p = p[int64(len(p))-size:]
	}
	// p is the tail of what was written: it ends at r.total.
	start := (r.total - int64(len(p))) % size
	n := copy(r.buf[start:], p)
	copy(r.buf, p[n:])
}

// Since returns a copy of the kept bytes from offset off on (from the oldest
// kept byte if off is older) and the offset of the first byte returned.
func (r *outputRing) Since(off int64) ([]byte, int64) {
	size := int64(len(r.buf))
	oldest := max(0, r.total-size)
	off = min(max(off, oldest), r.total)
	out := make([]byte, r.total-off)
	start := off % size
	n := copy(out, r.buf[start:])
	copy(out[n:], r.buf)
	return out, off
}
