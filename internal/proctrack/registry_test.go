//go:build linux

package proctrack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	tail := " 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 987654 20 21\n"
	tests := []struct {
		name    string
		in      string
		want    stat
		wantErr bool
	}{
		{name: "plain", in: "42 (sleep) S 1 42 42 0 -1 4194560 101 0 0 0 0 0 0 0 20 0 1 0 123456 5 6\n",
			want: stat{state: 'S', pgrp: 42, startTicks: 123456}},
		{name: "zombie", in: "42 (sh) Z 1 40 40 0 -1 4194560 101 0 0 0 0 0 0 0 20 0 1 0 99 5 6\n",
			want: stat{state: 'Z', pgrp: 40, startTicks: 99}},
		// A command name may hold spaces and parentheses: fields count
		// from the last ')'.
		{name: "odd name", in: "7 (a) b (c)) R" + tail, want: stat{state: 'R', pgrp: 2, startTicks: 987654}},
		{name: "no parenthesis", in: "7 sleep S 1 2 3", wantErr: true},
		{name: "too short", in: "7 (sleep) S 1 2 3\n", wantErr: true},
		{name: "bad start time", in: "7 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 nope 20\n", wantErr: true},
		{name: "empty", in: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStat([]byte(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if err == nil && got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestReadStatOfSelf(t *testing.T) {
	st, err := readStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st.startTicks == 0 || st.gone() {
		t.Fatalf("own stat = %+v", st)
	}
	if _, err := readStat(1 << 30); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stat of a pid beyond pid_max: %v, want not exist", err)
	}
}

func TestTrackUntrack(t *testing.T) {
	r := open(t, "rnr_a")
	proc := startProc(t, "", nil, "sleep", "30")
	pid := proc.Process.Pid
	st, err := readStat(pid)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Hour)
	p := Process{ProcessID: "proc_1", RunID: "run_1", SessionID: "ses_1", Command: "sleep 30", StartedAt: time.Now(), Deadline: deadline}
	if err := r.Prepare(p); err != nil {
		t.Fatal(err)
	}
	if recs, _ := r.Records(); len(recs) != 1 || recs[0].PID != 0 || recs[0].PGID != 0 || recs[0].ProcessID != "proc_1" {
		t.Fatalf("records after Prepare = %+v, want one without a pid", recs)
	}
	p.PID = pid
	if err := r.Track(p); err != nil {
		t.Fatal(err)
	}
	recs, err := r.Records()
	if err != nil || len(recs) != 1 {
		t.Fatalf("records = %+v, %v", recs, err)
	}
	got := recs[0]
	if got.PID != pid || got.PGID != pid || got.StartTicks != st.startTicks || got.RunnerID != "rnr_a" ||
		got.RunID != "run_1" || got.SessionID != "ses_1" || got.Command != "sleep 30" || !got.Deadline.Equal(deadline.UTC()) {
		t.Fatalf("record = %+v", got)
	}
	if got.Owner != r.self || got.Owner.PID != os.Getpid() || got.Owner.Boot == "" || got.Owner.PIDNS == "" {
		t.Fatalf("owner = %+v, want this process %+v", got.Owner, r.self)
	}
	if _, err := os.Stat(filepath.Join(r.Dir(), "rnr_a.proc_1.json")); err != nil {
		t.Fatal(err)
	}
	if err := r.Untrack("proc_1"); err != nil {
		t.Fatal(err)
	}
	if err := r.Untrack("proc_1"); err != nil {
		t.Fatalf("second Untrack: %v", err)
	}
	if recs, _ := r.Records(); len(recs) != 0 {
		t.Fatalf("records after Untrack: %+v", recs)
	}
	if ents, _ := os.ReadDir(r.Dir()); len(ents) != 0 {
		t.Fatalf("files left: %v", ents)
	}
}

func TestTrackRefuses(t *testing.T) {
	r := open(t, "rnr_a")
	sweeper := open(t, "")
	tests := []struct {
		name string
		r    *Registry
		p    Process
	}{
		{"no runner", sweeper, Process{ProcessID: "proc_1", PID: os.Getpid()}},
		{"pid 1", r, Process{ProcessID: "proc_1", PID: 1}},
		{"pid 0", r, Process{ProcessID: "proc_1", PID: 0}},
		{"no such pid", r, Process{ProcessID: "proc_1", PID: 1 << 30}},
		{"id with a slash", r, Process{ProcessID: "../x", PID: os.Getpid()}},
		{"id with a dot", r, Process{ProcessID: "a.b", PID: os.Getpid()}},
		{"empty id", r, Process{PID: os.Getpid()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.r.Track(tt.p); err == nil {
				t.Fatal("Track succeeded")
			}
			if ents, _ := os.ReadDir(tt.r.Dir()); len(ents) != 0 {
				t.Fatalf("a refused Track left files: %v", ents)
			}
		})
	}
	if _, err := Open(t.TempDir(), "rnr/../x", slog.New(slog.DiscardHandler)); err == nil {
		t.Fatal("Open accepted a runner id with a slash")
	}
}

// The sweep acts on real processes: each case starts a victim, writes a
// record about it as the case says, sweeps, and checks whether the victim
// was killed and the record removed.
func TestSweep(t *testing.T) {
	gone := func(o Owner) Owner { o.StartTicks++; return o } // this pid, another process: a dead runner
	tests := []struct {
		name string
		// edit turns the record of a live victim (owner: this process,
		// no deadline) into the case's.
		edit func(rec *Record)
		// marked victims carry the record's environment entry.
		marked     bool
		wantKilled bool
		wantKept   bool
	}{
		{name: "runner alive", edit: func(*Record) {}, wantKept: true},
		{name: "runner gone", edit: func(rec *Record) { rec.Owner = gone(rec.Owner) }, wantKilled: true},
		{name: "runner gone, pid 1 reused as its pid", edit: func(rec *Record) { rec.Owner.PID, rec.Owner.StartTicks = 1, 1<<40 }, wantKilled: true},
		// The pid-recycling guard: the recorded process started earlier
		// than the one that has its pid now, which is not touched.
		{name: "pid reused by another process", edit: func(rec *Record) { rec.Owner = gone(rec.Owner); rec.StartTicks-- }},
		{name: "pid reused, runner alive, deadline passed", edit: func(rec *Record) {
			rec.StartTicks--
			rec.Deadline = time.Now().Add(-time.Minute)
		}},
		{name: "past its deadline", edit: func(rec *Record) { rec.Deadline = time.Now().Add(-OverdueGrace - time.Second) }, wantKilled: true},
		{name: "deadline just passed: its runner stops it", edit: func(rec *Record) { rec.Deadline = time.Now().Add(-time.Second) }, wantKept: true},
		{name: "deadline ahead", edit: func(rec *Record) { rec.Deadline = time.Now().Add(time.Hour) }, wantKept: true},
		{name: "another host", edit: func(rec *Record) { rec.Owner = gone(rec.Owner); rec.Owner.Host += "-other" }, wantKept: true},
		{name: "another pid namespace", edit: func(rec *Record) { rec.Owner = gone(rec.Owner); rec.Owner.PIDNS = "pid:[1]" }, wantKept: true},
		{name: "an earlier boot", edit: func(rec *Record) { rec.Owner = gone(rec.Owner); rec.Owner.Boot = "earlier" }},
		{name: "pgid not the pid", edit: func(rec *Record) { rec.Owner = gone(rec.Owner); rec.PGID = 1 }},
		// The runner died between starting the process and recording its
		// pid (Prepare, no Track): the environment entry finds it.
		{name: "pid not recorded yet, runner gone", marked: true, edit: func(rec *Record) { rec.Owner = gone(rec.Owner); unstarted(rec) }, wantKilled: true},
		{name: "pid not recorded yet, runner alive", marked: true, edit: unstarted, wantKept: true},
		{name: "pid not recorded yet, not this process", edit: func(rec *Record) { rec.Owner = gone(rec.Owner); unstarted(rec) }},
		{name: "runner gone, a process left with the entry", marked: true, edit: func(rec *Record) { rec.Owner = gone(rec.Owner); rec.StartTicks-- }, wantKilled: true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := open(t, "rnr_a")
			// Unique per case: the cases run side by side, and a sweep
			// kills whatever carries its record's entry.
			procID := fmt.Sprintf("proc_%d", i)
			var env []string
			if tt.marked {
				env = append(os.Environ(), r.Env(procID))
			}
			victim := startProc(t, "", env, "sleep", "30")
			rec := recordOf(t, r, victim.Process.Pid, procID)
			tt.edit(&rec)
			if err := r.write(rec); err != nil {
				t.Fatal(err)
			}
			r.Sweep(context.Background())
			// Sweep has sent its signal when it returns: a killed victim
			// ends at once, a spared one never does.
			if killed := waitKilled(victim, 500*time.Millisecond); killed != tt.wantKilled {
				t.Errorf("killed = %v, want %v", killed, tt.wantKilled)
			}
			recs, _ := r.Records()
			if kept := len(recs) == 1; kept != tt.wantKept {
				t.Errorf("record kept = %v, want %v", kept, tt.wantKept)
			}
		})
	}
}

// A command whose shell has exited (after its runner died) leaves a job
// running in its group, and another one that moved to a session of its
// own: both carry the record's environment entry and are killed; a
// process with another entry is not.
func TestSweepKillsWhatTheShellLeft(t *testing.T) {
	r := open(t, "rnr_a")
	dir := t.TempDir()
	env := append(os.Environ(), r.Env("proc_v"))
	shell := startProc(t, dir, env, "/bin/sh", "-c", `sleep 30 & echo $! > job; setsid sleep 30 & echo $! > escaped`)
	rec := recordOf(t, r, shell.Process.Pid, "proc_v")
	rec.Owner.StartTicks++ // its runner is gone
	err := shell.Wait()
	shell.reaped = true
	if err != nil {
		t.Fatal(err)
	}
	stranger := startProc(t, "", append(os.Environ(), EnvVar+"=rnr_a/proc_other"), "sleep", "30")
	job, escaped := readPID(t, filepath.Join(dir, "job")), readPID(t, filepath.Join(dir, "escaped"))
	t.Cleanup(func() {
		_ = syscall.Kill(job, syscall.SIGKILL)
		_ = syscall.Kill(escaped, syscall.SIGKILL)
	})
	if err := r.write(rec); err != nil {
		t.Fatal(err)
	}
	r.Sweep(context.Background())
	for name, pid := range map[string]int{"job": job, "escaped": escaped} {
		if !waitGone(pid, 5*time.Second) {
			t.Errorf("the %s (pid %d) still runs", name, pid)
		}
	}
	if waitKilled(stranger, 200*time.Millisecond) {
		t.Error("a process of another record was killed")
	}
	if recs, _ := r.Records(); len(recs) != 0 {
		t.Errorf("records left: %+v", recs)
	}
}

func TestSweepHousekeeping(t *testing.T) {
	r := open(t, "rnr_a")
	write := func(name, content string, age time.Duration) string {
		p := filepath.Join(r.Dir(), name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		mt := time.Now().Add(-age)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
		return p
	}
	garbage := write("rnr_x.proc_x.json", "{not json", 0)
	oldTmp := write(tmpPrefix+"123", "{}", 2*staleTmp)
	newTmp := write(tmpPrefix+"456", "{}", 0)
	stranger := write("README", "not a record", time.Hour)
	r.Sweep(context.Background())
	for p, want := range map[string]bool{garbage: false, oldTmp: false, newTmp: true, stranger: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s exists = %v, want %v", filepath.Base(p), err == nil, want)
		}
	}
	// A registry whose directory vanished sweeps nothing and says so
	// only in its log.
	if err := os.RemoveAll(r.Dir()); err != nil {
		t.Fatal(err)
	}
	r.Sweep(context.Background())
}

func open(t *testing.T, runnerID string) *Registry {
	t.Helper()
	r, err := Open(filepath.Join(t.TempDir(), "procs"), runnerID, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// proc is a process started by a test.
type proc struct {
	*exec.Cmd
	reaped bool
}

// startProc starts a process in dir in a session of its own, as the
// process table does; what is left of it is killed when the test ends.
func startProc(t *testing.T, dir string, env []string, name string, args ...string) *proc {
	t.Helper()
	c := exec.Command(name, args...)
	c.Env = env
	c.Dir = dir
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{Cmd: c}
	t.Cleanup(func() {
		if !p.reaped {
			// Unreaped, its pid (and so its group id) cannot be reused.
			_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
			_, _ = c.Process.Wait()
		}
	})
	return p
}

// unstarted makes rec what Prepare writes: no pid yet.
func unstarted(rec *Record) { rec.PID, rec.PGID, rec.StartTicks = 0, 0, 0 }

func recordOf(t *testing.T, r *Registry, pid int, processID string) Record {
	t.Helper()
	st, err := readStat(pid)
	if err != nil {
		t.Fatal(err)
	}
	return Record{ProcessID: processID, PID: pid, PGID: pid, StartTicks: st.startTicks, RunnerID: r.runnerID,
		Command: "test", StartedAt: time.Now(), Owner: r.self}
}

// waitKilled reports whether c ended by SIGKILL within d. A process that
// does not end within d is left running (the test's cleanup kills it).
func waitKilled(c *proc, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		st, err := readStat(c.Process.Pid)
		if err != nil || st.gone() {
			ps, err := c.Process.Wait()
			c.reaped = true
			if err != nil {
				return false
			}
			ws, ok := ps.Sys().(syscall.WaitStatus)
			return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// waitGone waits for a process that is not our child to end (a zombie
// counts: its parent may be slow to reap it).
func waitGone(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if st, err := readStat(pid); err != nil || st.gone() {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil && pid > 1 {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s: %q %v", path, b, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
