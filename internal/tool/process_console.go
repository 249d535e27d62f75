package tool

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"
)

// ErrNoProcess is the console's answer for a process id the table does
// not know (never started here, or forgotten after maxFinished others
// ended).
var ErrNoProcess = errNoProcess

// reasonConsole is why a process killed from the operator's console was
// stopped.
const reasonConsole = "killed from the console"

// ConsoleProcess is a background process as the operator's console sees
// it: every session's, with the session and run that started it.
type ConsoleProcess struct {
	ProcessInfo
	SessionID string `json:"session_id"`
	RunID     string `json:"run_id"`
}

// ConsoleChunk is output of a background process read by the console.
type ConsoleChunk struct {
	Data []byte
	// From is the offset of Data[0] in the whole output, Next where to
	// read from next time, and Dropped how many bytes after the asked
	// offset the buffer no longer holds.
	From, Next, Dropped int64
	Process             ConsoleProcess
}

// All lists the processes of every session, oldest first: the running ones
// and the last maxFinished that ended.
func (pt *ProcessTable) All() []ConsoleProcess {
	pt.mu.Lock()
	ps := make([]*bgProcess, 0, len(pt.procs))
	for _, p := range pt.procs {
		ps = append(ps, p)
	}
	pt.mu.Unlock()
	slices.SortFunc(ps, func(a, b *bgProcess) int {
		if c := a.started.Compare(b.started); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	out := make([]ConsoleProcess, len(ps))
	for i, p := range ps {
		out[i] = p.console()
	}
	return out
}

func (p *bgProcess) console() ConsoleProcess {
	return ConsoleProcess{ProcessInfo: p.info(), SessionID: p.session, RunID: p.run}
}

// Get describes process id.
func (pt *ProcessTable) Get(id string) (ConsoleProcess, error) {
	p := pt.lookup(id)
	if p == nil {
		return ConsoleProcess{}, ErrNoProcess
	}
	return p.console(), nil
}

// Output returns the kept output of process id from offset since on
// (from the oldest byte kept if since is older). An offset beyond the
// output's end is an error.
func (pt *ProcessTable) Output(id string, since int64) (ConsoleChunk, error) {
	p := pt.lookup(id)
	if p == nil {
		return ConsoleChunk{}, ErrNoProcess
	}
	c, err := p.read(since)
	if err != nil {
		return ConsoleChunk{}, err
	}
	return ConsoleChunk{Data: c.data, From: c.from, Next: c.next, Dropped: c.dropped,
		Process: ConsoleProcess{ProcessInfo: c.info, SessionID: p.session, RunID: p.run}}, nil
}

// WaitOutput blocks until process id has output beyond since or has
// ended, d has passed or ctx is done.
func (pt *ProcessTable) WaitOutput(ctx context.Context, id string, since int64, d time.Duration) {
	if p := pt.lookup(id); p != nil {
		p.wait(ctx, since, d)
	}
}

// Kill stops process id and its whole process group (SIGTERM, SIGKILL
// after a grace period) and returns once it has ended or ctx is done.
// Killing a process that has ended already changes nothing: it is
// described as it is.
func (pt *ProcessTable) Kill(ctx context.Context, id string) (ConsoleProcess, error) {
	p := pt.lookup(id)
	if p == nil {
		return ConsoleProcess{}, ErrNoProcess
	}
	p.terminate(reasonConsole)
	select {
	case <-p.done:
	case <-ctx.Done():
		return p.console(), ctx.Err()
	}
	return p.console(), nil
}

// IsNoProcess reports whether err says a process is unknown.
func IsNoProcess(err error) bool { return errors.Is(err, errNoProcess) }
