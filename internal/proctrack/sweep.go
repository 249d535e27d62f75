package proctrack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

const (
	// OverdueGrace is how long past its deadline a process of a live
	// runner may still run before a sweep kills it. The runner itself
	// stops it at the deadline (SIGTERM, SIGKILL 2 s later); the sweep is
	// the backstop for a runner that is alive but wedged.
	OverdueGrace = 10 * time.Second
	// staleTmp is the age of a temporary file that no writer is still
	// renaming: one left by a process that died mid-write.
	staleTmp = time.Minute
)

// Sweep kills the tracked processes of this host whose runner is gone and
// those past their deadline (plus OverdueGrace when their runner lives),
// and removes their records. Records of other hosts or pid namespaces are
// left alone: their pids name other processes here. Records of this host
// from before its last boot are removed: their processes are gone.
//
// A process is killed only when it is provably the one recorded: the
// leader if its pid still has the recorded start time (its whole process
// group goes with it: the group cannot have been reused while its leader
// lives), and any other process that carries the record's EnvVar entry
// and started after it, which finds what the command left behind after
// its shell exited or what moved to a session of its own, and a process
// whose runner died after starting it but before recording its pid. Sweep never
// blocks on a process: it sends SIGKILL and moves on.
func (r *Registry) Sweep(ctx context.Context) {
	ents, err := os.ReadDir(r.dir)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) && ctx.Err() == nil {
			r.log.Warn("reading the background process records", "dir", r.dir, "err", err)
		}
		return
	}
	now := time.Now()
	for _, e := range ents {
		if ctx.Err() != nil {
			return
		}
		name := e.Name()
		path := filepath.Join(r.dir, name)
		if strings.HasSuffix(name, endedExt) {
			if fi, err := e.Info(); err == nil && now.Sub(fi.ModTime()) > EndedTTL {
				_ = os.Remove(path)
			}
			continue
		}
		if strings.HasPrefix(name, tmpPrefix) {
			if fi, err := e.Info(); err == nil && now.Sub(fi.ModTime()) > staleTmp {
				_ = os.Remove(path)
			}
			continue
		}
		if !isRecordName(name) {
			continue
		}
		rec, err := readRecord(path)
		if errors.Is(err, os.ErrNotExist) {
			continue // its process ended meanwhile
		}
		if err != nil {
			// It identifies nothing that could be killed safely.
			r.log.Warn("removing an unreadable background process record", "file", path, "err", err)
			_ = os.Remove(path)
			continue
		}
		r.settle(path, rec, now)
	}
}

// settle decides about one record.
func (r *Registry) settle(path string, rec Record, now time.Time) {
	switch r.where(rec.Owner) {
	case elsewhere:
		return
	case earlierBoot:
		_ = os.Remove(path)
		return
	}
	ownerAlive := alive(rec.Owner.PID, rec.Owner.StartTicks)
	overdue := !rec.Deadline.IsZero() && now.After(rec.Deadline.Add(OverdueGrace))
	var why string
	switch {
	case overdue:
		why = "it ran past its time limit"
	case !ownerAlive && r.keepOrphans:
		// Left for a person to kill; once nothing of it is left, its
		// record goes.
		if !r.anyAlive(rec) {
			_ = os.Remove(path)
		}
		return
	case !ownerAlive:
		why = "its runner is gone"
	default:
		return
	}
	n := r.kill(rec)
	if n > 0 {
		r.noteEnded(rec, "killed by the sweep: "+why)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		r.log.Warn("removing a background process record", "file", path, "err", err)
	}
	if n > 0 {
		r.log.Info("killed a background process", "why", why, "process_id", rec.ProcessID, "pid", rec.PID,
			"processes", n, "runner", rec.RunnerID, "run", rec.RunID, "session", rec.SessionID,
			"command", shorten(rec.Command), "deadline", rec.Deadline)
	}
}

type place int

const (
	local       place = iota
	elsewhere         // another host or pid namespace: not ours to judge
	earlierBoot       // this host before its last boot: long gone
)

func (r *Registry) where(o Owner) place {
	switch {
	case o.Host != r.self.Host:
		return elsewhere
	case o.Boot != r.self.Boot:
		return earlierBoot
	case o.PIDNS != r.self.PIDNS:
		return elsewhere
	}
	return local
}

// alive reports whether pid is the process that had startTicks.
func alive(pid int, startTicks uint64) bool {
	st, err := readStat(pid)
	return err == nil && !st.gone() && st.startTicks == startTicks
}

// kill SIGKILLs what is left of rec and returns how many processes it
// signalled.
func (r *Registry) kill(rec Record) int {
	return r.visit(rec, func(pid int, group bool) bool {
		if group {
			return syscall.Kill(-pid, syscall.SIGKILL) == nil
		}
		return syscall.Kill(pid, syscall.SIGKILL) == nil
	})
}

// anyAlive reports whether anything of rec still runs.
func (r *Registry) anyAlive(rec Record) bool {
	return r.visit(rec, func(int, bool) bool { return true }) > 0
}

// visit calls f on what is left of rec, provably its own: its leader's
// group (group true, pid the group id), then every other process that
// carries its EnvVar entry. It returns how many calls answered true.
func (r *Registry) visit(rec Record, f func(pid int, group bool) bool) int {
	if rec.PID < 0 || rec.PID == 1 || rec.PGID != rec.PID {
		// kill(-1) would signal every process we may signal; a record
		// saying so is not one we wrote.
		return 0
	}
	n := 0
	group := false
	// A record without a pid (Prepare, not yet Track) has only the
	// environment entry to go by.
	if rec.PID > 1 && alive(rec.PID, rec.StartTicks) {
		if f(rec.PGID, true) {
			group = true
			n++
		}
	}
	ps, err := pids()
	if err != nil {
		return n
	}
	entry := EnvVar + "=" + rec.RunnerID + "/" + rec.ProcessID
	self := os.Getpid()
	for _, pid := range ps {
		if pid == self {
			continue
		}
		st, err := readStat(pid)
		// A process older than the leader cannot descend from it.
		if err != nil || st.gone() || st.startTicks < rec.StartTicks || (group && st.pgrp == rec.PGID) {
			continue
		}
		if hasEnv(pid, entry) && f(pid, false) {
			n++
		}
	}
	return n
}

func readRecord(path string) (Record, error) {
	var rec Record
	b, err := os.ReadFile(path)
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, fmt.Errorf("proctrack: %s: %w", filepath.Base(path), err)
	}
	return rec, nil
}

// Records returns the records in the directory, for people and tests.
func (r *Registry) Records() ([]Record, error) {
	ents, err := os.ReadDir(r.dir)
	if err != nil {
		return nil, fmt.Errorf("proctrack: %w", err)
	}
	var out []Record
	for _, e := range ents {
		if !isRecordName(e.Name()) {
			continue
		}
		rec, err := readRecord(filepath.Join(r.dir, e.Name()))
		if err == nil {
			out = append(out, rec)
		}
	}
	return out, nil
}

// shorten keeps a log line readable, never splitting a character.
func shorten(s string) string {
	if len(s) <= 200 {
		return s
	}
	cut := 200
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
