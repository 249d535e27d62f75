// Package proctrack keeps a durable record of the background processes a
// runner starts, one file per process under <data-dir>/procs, so that a
// process which outlives its runner (SIGKILL, a crash, a power cut of the
// runner but not of the machine) or its time limit is found and killed by
// the next runner or watchdog on the same host.
//
// A record names its process by pid and by the start time the kernel keeps
// for it (/proc/<pid>/stat field 22): pids are reused, often quickly (the
// default pid_max is 32768), and a record whose pid now belongs to another
// process must never get that process killed. The runner that owns a record
// is named the same way, so "is its runner still alive" is a question about
// this host's process table, not about a heartbeat that a locked database
// can delay.
//
// The records are files, not rows: they describe processes of one host and
// only that host can act on them; they need no transaction with anything in
// the store; and a runner must be able to record a process even while the
// database is locked or the disk momentarily refuses the store's writes
// (docs/ARCHITECTURE.md, "Background processes outlive nothing").
package proctrack

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// EnvVar is set in the environment of every tracked process to
// "<runner id>/<process id>". Children inherit it, so the processes a
// command leaves behind after its shell has gone (or that moved to a
// session of their own) are still recognised as its own.
const EnvVar = "CADUCEUS_PROCESS"

// ErrUnsupported is returned by Open where processes cannot be identified
// by their start time (no /proc): background processes are then tracked
// in memory only, as before.
var ErrUnsupported = errors.New("proctrack: process start times are not available on this system")

// Process is what a runner tells the registry about a process it started.
type Process struct {
	ProcessID string // the id the model uses (proc_...)
	PID       int    // the shell, leader of its own session and process group
	RunID     string
	SessionID string
	Command   string
	StartedAt time.Time
	// Deadline is when the process must be gone: its time limit.
	Deadline time.Time
	// Kind is KindAgent (the default) or KindTerminal, for the console.
	Kind string
}

// The kinds of tracked process.
const (
	KindAgent    = "agent"    // a command of the agent's, foreground or background
	KindTerminal = "terminal" // a person's shell
)

// Record is the content of one record file.
type Record struct {
	ProcessID string `json:"process_id"`
	// PID is 0 between Prepare and Track: the process is being started.
	PID int `json:"pid"`
	// PGID is the process group to kill; the shell runs in a session of its
	// own, so it equals PID.
	PGID int `json:"pgid"`
	// StartTicks is /proc/<pid>/stat field 22 (clock ticks after boot):
	// with PID, what makes the process unique on this host.
	StartTicks uint64    `json:"start_ticks"`
	RunnerID   string    `json:"runner_id"`
	RunID      string    `json:"run_id"`
	SessionID  string    `json:"session_id"`
	Command    string    `json:"command"`
	StartedAt  time.Time `json:"started_at"`
	Deadline   time.Time `json:"deadline"`
	Owner      Owner     `json:"owner"`
	Kind       string    `json:"kind,omitempty"` // "" is KindAgent
}

// Owner identifies the runner process that started a tracked process.
type Owner struct {
	PID        int    `json:"pid"`
	StartTicks uint64 `json:"start_ticks"`
	Host       string `json:"host"`
	Boot       string `json:"boot"`   // kernel boot id
	PIDNS      string `json:"pid_ns"` // pid namespace: pids mean nothing outside it
}

// Registry reads and writes the records of one data dir. Make one with
// Open; it is safe for concurrent use (it holds no state that changes).
type Registry struct {
	dir      string
	runnerID string // "" for a registry that only sweeps (a web tier)
	self     Owner
	log      *slog.Logger
	// keepOrphans: a sweep reports the processes of a dead runner instead
	// of killing them (KeepOrphans).
	keepOrphans bool
}

// Option tunes a Registry.
type Option func(*Registry)

// KeepOrphans makes sweeps leave running the processes whose runner is
// gone, for a person to see and kill from the console (List, KillAny).
// Their time limit still applies: past it they are killed.
func KeepOrphans(keep bool) Option { return func(r *Registry) { r.keepOrphans = keep } }

// Open returns the registry of the directory dir (<data-dir>/procs) for
// the runner runnerID ("" when the process only sweeps).
func Open(dir, runnerID string, log *slog.Logger, opts ...Option) (*Registry, error) {
	if runnerID != "" && !validName(runnerID) {
		return nil, fmt.Errorf("proctrack: invalid runner id %q", runnerID)
	}
	self, err := selfOwner()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("proctrack: %w", err)
	}
	r := &Registry{dir: dir, runnerID: runnerID, self: self, log: log}
	for _, o := range opts {
		o(r)
	}
	return r, nil
}

// Dir is the directory holding the records.
func (r *Registry) Dir() string { return r.dir }

// Env is the environment entry that marks the process processID as this
// runner's.
func (r *Registry) Env(processID string) string {
	return EnvVar + "=" + r.token(processID)
}

func (r *Registry) token(processID string) string { return r.runnerID + "/" + processID }

// Prepare records a process about to start (p.PID is ignored): should the
// runner die between starting it and Track, a sweep still finds it by the
// environment entry (Env) it was started with. Call it before starting the
// process, and do not start it when Prepare fails.
func (r *Registry) Prepare(p Process) error {
	if err := r.check(p); err != nil {
		return err
	}
	return r.write(r.record(p, 0, 0))
}

// Track records p once it has started, replacing what Prepare wrote. Call
// it before the process is reaped (before cmd.Wait returns): until then its
// pid cannot name another process, so the start time read here is its own.
func (r *Registry) Track(p Process) error {
	if err := r.check(p); err != nil {
		return err
	}
	if p.PID <= 1 {
		return fmt.Errorf("proctrack: invalid pid %d", p.PID)
	}
	st, err := readStat(p.PID)
	if err != nil {
		return fmt.Errorf("proctrack: start time of pid %d: %w", p.PID, err)
	}
	return r.write(r.record(p, p.PID, st.startTicks))
}

func (r *Registry) check(p Process) error {
	if r.runnerID == "" {
		return errors.New("proctrack: this registry belongs to no runner")
	}
	if !validName(p.ProcessID) {
		return fmt.Errorf("proctrack: invalid process id %q", p.ProcessID)
	}
	return nil
}

func (r *Registry) record(p Process, pid int, startTicks uint64) Record {
	return Record{
		ProcessID:  p.ProcessID,
		PID:        pid,
		PGID:       pid,
		StartTicks: startTicks,
		RunnerID:   r.runnerID,
		RunID:      p.RunID,
		SessionID:  p.SessionID,
		Command:    p.Command,
		StartedAt:  p.StartedAt.UTC(),
		Deadline:   p.Deadline.UTC(),
		Owner:      r.self,
		Kind:       p.Kind,
	}
}

// Kill SIGKILLs what is left of this registry's process processID (its
// process group and every process carrying its EnvVar entry, as a sweep
// would) and returns how many processes it signalled; the record stays
// until Untrack. For an owner that ends a process on purpose, such as a
// terminal being closed.
func (r *Registry) Kill(processID string) int {
	rec, err := readRecord(filepath.Join(r.dir, r.fileName(r.runnerID, processID)))
	if err != nil {
		return 0
	}
	return r.kill(rec)
}

// Untrack removes the record of processID once the process has ended
// (and everything left in its group has been killed). A record already
// gone, removed by a sweep, is fine.
func (r *Registry) Untrack(processID string) error {
	err := os.Remove(filepath.Join(r.dir, r.fileName(r.runnerID, processID)))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("proctrack: %w", err)
	}
	return nil
}

const (
	recordExt = ".json"
	tmpPrefix = ".tmp-"
)

func (r *Registry) fileName(runnerID, processID string) string {
	// Process ids are random and unique within a runner; a pid alone is
	// not: it can be reused by the next process before the previous
	// record is removed.
	return runnerID + "." + processID + recordExt
}

// write stores rec atomically (a temporary file renamed), so a sweep never
// reads half a record. It is not synced: the processes it describes do not
// survive the machine going down, and neither need their records.
func (r *Registry) write(rec Record) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("proctrack: %w", err)
	}
	f, err := os.CreateTemp(r.dir, tmpPrefix+"*")
	if err != nil {
		return fmt.Errorf("proctrack: %w", err)
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(r.dir, r.fileName(rec.RunnerID, rec.ProcessID)))
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("proctrack: writing the record of %s: %w", rec.ProcessID, err)
	}
	return nil
}

// validName accepts the ids used in file names: no separators, no dots,
// nothing hidden.
func validName(s string) bool {
	if s == "" || len(s) > 100 {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// isRecordName tells record files from temporary ones and strangers.
func isRecordName(name string) bool {
	return strings.HasSuffix(name, recordExt) && !strings.HasPrefix(name, ".")
}
