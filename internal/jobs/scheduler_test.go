package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/jobs"
	"github.com/caduceus-dev/caduceus/internal/journal"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlite"
)

// clock is an injected clock tests move by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time)     { c.mu.Lock(); defer c.mu.Unlock(); c.t = t }
func (c *clock) Add(d time.Duration) { c.Set(c.Now().Add(d)) }

type env struct {
	t     *testing.T
	ctx   context.Context
	st    store.Store
	w     *journal.Writer
	svc   *control.Service
	clock *clock
	sched *jobs.Scheduler
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "caduceus.db"))
	if err != nil {
		t.Fatal(err)
	}
	w := journal.NewWriter(st, nil, slog.New(slog.DiscardHandler))
	w.Start()
	t.Cleanup(func() {
		w.Close()
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	svc := control.NewService(st, w, t.TempDir(), control.RetryPolicy{})
	c := &clock{t: t0}
	return &env{t: t, ctx: ctx, st: st, w: w, svc: svc, clock: c,
		sched: jobs.NewScheduler(st, w, svc, jobs.Config{Now: c.Now}, slog.New(slog.DiscardHandler))}
}

func ptr[T any](v T) *T { return &v }

func (e *env) job(in jobs.Input) store.Job {
	e.t.Helper()
	if in.Name == nil {
		in.Name = ptr("tick")
	}
	if in.Prompt == nil {
		in.Prompt = ptr("say hi")
	}
	j, err := jobs.New(in, e.clock.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.w.Do(e.ctx, func(tx store.Tx) error { return tx.InsertJob(e.ctx, j) }); err != nil {
		e.t.Fatal(err)
	}
	return j
}

func (e *env) tick() {
	e.t.Helper()
	if err := e.sched.Tick(e.ctx); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) history(jobID string) []store.JobRun {
	e.t.Helper()
	runs, err := e.st.JobRuns(e.ctx, jobID, 1000)
	if err != nil {
		e.t.Fatal(err)
	}
	return runs
}

// finish ends every busy run, as a runner would, so overlap does not
// interfere.
func (e *env) finish(jobID string) {
	e.t.Helper()
	for _, jr := range e.history(jobID) {
		r, err := e.st.GetRun(e.ctx, jr.RunID)
		if err != nil {
			e.t.Fatal(err)
		}
		if r.Status.Busy() {
			if _, err := e.svc.Cancel(e.ctx, r.ID, nil); err != nil {
				e.t.Fatal(err)
			}
		}
	}
}

func TestIntervalFiresEachDueTimeOnce(t *testing.T) {
	e := newEnv(t)
	j := e.job(jobs.Input{ScheduleKind: ptr("interval"), ScheduleExpr: ptr("every 2s"), Overlap: ptr("queue")})
	if !j.NextFireAt.Equal(t0.Add(2 * time.Second)) {
		t.Fatalf("first fire %v, want %v", j.NextFireAt, t0.Add(2*time.Second))
	}
	e.tick()
	if n := len(e.history(j.ID)); n != 0 {
		t.Fatalf("%d runs before the first due time", n)
	}
	// Ticks every half second for 10 s: due at 2, 4, 6, 8, 10.
	for range 20 {
		e.clock.Add(500 * time.Millisecond)
		e.tick()
		e.tick() // a second tick at the same instant claims nothing more
	}
	h := e.history(j.ID)
	if len(h) != 5 {
		t.Fatalf("%d runs in 10 s, want 5: %+v", len(h), h)
	}
	for i, jr := range h {
		want := t0.Add(time.Duration(10-2*i) * time.Second)
		if !jr.FireAt.Equal(want) || jr.Manual {
			t.Errorf("run %d fire %v manual %v, want %v", i, jr.FireAt, jr.Manual, want)
		}
		evs, err := e.st.Events(e.ctx, store.EventQuery{RunID: jr.RunID, Types: []event.Type{event.RunQueued}})
		if err != nil || len(evs) != 1 {
			t.Fatalf("run %s run.queued events %v, %v", jr.RunID, evs, err)
		}
		var p event.RunQueuedPayload
		if err := json.Unmarshal(evs[0].Payload, &p); err != nil || p.JobID != j.ID || p.Input != "say hi" {
			t.Errorf("run.queued payload %+v, %v; want job %s", p, err, j.ID)
		}
	}
	// A new session per run.
	if h[0].SessionID == h[1].SessionID {
		t.Errorf("two runs share session %s, want a new session each", h[0].SessionID)
	}
}

func TestMissedPolicy(t *testing.T) {
	for _, tc := range []struct {
		missed string
		want   int
	}{{jobs.MissedOnce, 1}, {jobs.MissedSkip, 0}} {
		t.Run(tc.missed, func(t *testing.T) {
			e := newEnv(t)
			j := e.job(jobs.Input{ScheduleKind: ptr("interval"), ScheduleExpr: ptr("every 2s"), Missed: ptr(tc.missed)})
			// Nothing ran for 20 s: nine due times passed unclaimed.
			e.clock.Add(20*time.Second + 500*time.Millisecond)
			e.tick()
			if n := len(e.history(j.ID)); n != tc.want {
				t.Fatalf("%d runs after the gap, want %d", n, tc.want)
			}
			got, _ := e.st.GetJob(e.ctx, j.ID)
			if want := t0.Add(22 * time.Second); !got.NextFireAt.Equal(want) {
				t.Fatalf("next fire after the gap %v, want %v (the schedule resumes after now)", got.NextFireAt, want)
			}
			e.finish(j.ID)
			e.clock.Add(2 * time.Second)
			e.tick()
			if n := len(e.history(j.ID)); n != tc.want+1 {
				t.Fatalf("%d runs after the next due time, want %d", n, tc.want+1)
			}
		})
	}
}

func TestOverlapAndSessionPolicies(t *testing.T) {
	e := newEnv(t)
	skip := e.job(jobs.Input{Name: ptr("skip"), ScheduleKind: ptr("interval"), ScheduleExpr: ptr("every 1s"), Overlap: ptr("skip"),
		SessionPolicy: ptr("accumulate")})
	replace := e.job(jobs.Input{Name: ptr("replace"), ScheduleKind: ptr("interval"), ScheduleExpr: ptr("every 1s"), Overlap: ptr("replace")})
	for range 3 {
		e.clock.Add(time.Second)
		e.tick()
	}
	// skip: the first run is still queued (no runner), so the later fires
	// did nothing.
	if h := e.history(skip.ID); len(h) != 1 {
		t.Fatalf("skip: %d runs, want 1", len(h))
	}
	// replace: each fire cancelled the run before it.
	h := e.history(replace.ID)
	if len(h) != 3 {
		t.Fatalf("replace: %d runs, want 3", len(h))
	}
	for _, jr := range h[1:] {
		if r, _ := e.st.GetRun(e.ctx, jr.RunID); r.Status != run.Cancelled {
			t.Errorf("replaced run %s is %s, want cancelled", r.ID, r.Status)
		}
	}
	// accumulate: once the run is done the next fire joins its session.
	e.finish(skip.ID)
	e.clock.Add(time.Second)
	e.tick()
	hs := e.history(skip.ID)
	if len(hs) != 2 || hs[0].SessionID != hs[1].SessionID {
		t.Fatalf("accumulate: %+v, want two runs in one session", hs)
	}
	// Run now queues behind a busy run even with overlap skip.
	j, _ := e.st.GetJob(e.ctx, skip.ID)
	if _, err := e.sched.RunNow(e.ctx, j); err != nil {
		t.Fatal(err)
	}
	if hs := e.history(skip.ID); len(hs) != 3 || !hs[0].Manual {
		t.Fatalf("after run now: %+v, want a manual third run", hs)
	}
}

func TestRepeatLimitAndPause(t *testing.T) {
	e := newEnv(t)
	j := e.job(jobs.Input{ScheduleKind: ptr("interval"), ScheduleExpr: ptr("every 1s"), RepeatLimit: ptr(2), Overlap: ptr("queue")})
	for range 5 {
		e.clock.Add(time.Second)
		e.tick()
	}
	if n := len(e.history(j.ID)); n != 2 {
		t.Fatalf("%d runs with repeat limit 2", n)
	}
	got, _ := e.st.GetJob(e.ctx, j.ID)
	if !got.NextFireAt.IsZero() || got.FireCount != 2 {
		t.Fatalf("after the limit next %v count %d", got.NextFireAt, got.FireCount)
	}

	p := e.job(jobs.Input{ScheduleKind: ptr("interval"), ScheduleExpr: ptr("every 1s"), Overlap: ptr("queue")})
	paused, err := jobs.Apply(p, jobs.Input{Enabled: ptr(false)}, e.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := e.w.Do(e.ctx, func(tx store.Tx) error { return tx.UpdateJob(e.ctx, paused, p.NextFireAt) }); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		e.clock.Add(time.Second)
		e.tick()
	}
	if n := len(e.history(p.ID)); n != 0 {
		t.Fatalf("%d runs while paused", n)
	}
}

func TestApplyRejects(t *testing.T) {
	now := t0
	tests := []struct {
		name string
		in   jobs.Input
		code string
	}{
		{"no schedule", jobs.Input{Name: ptr("a"), Prompt: ptr("p")}, jobs.CodeInvalidSchedule},
		{"bad cron", jobs.Input{Name: ptr("a"), Prompt: ptr("p"), ScheduleExpr: ptr("99 * * * *")}, jobs.CodeInvalidSchedule},
		{"bad zone", jobs.Input{Name: ptr("a"), Prompt: ptr("p"), ScheduleExpr: ptr("0 9 * * *"), TZ: ptr("Nowhere/City")}, jobs.CodeInvalidSchedule},
		{"once in the past", jobs.Input{Name: ptr("a"), Prompt: ptr("p"), ScheduleKind: ptr("once"), ScheduleExpr: ptr("2020-01-01T00:00:00Z")}, jobs.CodeInvalidSchedule},
		{"no name", jobs.Input{Prompt: ptr("p"), ScheduleExpr: ptr("0 9 * * *")}, jobs.CodeInvalidJob},
		{"blank prompt", jobs.Input{Name: ptr("a"), Prompt: ptr("  "), ScheduleExpr: ptr("0 9 * * *")}, jobs.CodeInvalidJob},
		{"bad overlap", jobs.Input{Name: ptr("a"), Prompt: ptr("p"), ScheduleExpr: ptr("0 9 * * *"), Overlap: ptr("merge")}, jobs.CodeInvalidJob},
		{"bad missed", jobs.Input{Name: ptr("a"), Prompt: ptr("p"), ScheduleExpr: ptr("0 9 * * *"), Missed: ptr("all")}, jobs.CodeInvalidJob},
		{"bad session", jobs.Input{Name: ptr("a"), Prompt: ptr("p"), ScheduleExpr: ptr("0 9 * * *"), SessionPolicy: ptr("x")}, jobs.CodeInvalidJob},
		{"negative repeat", jobs.Input{Name: ptr("a"), Prompt: ptr("p"), ScheduleExpr: ptr("0 9 * * *"), RepeatLimit: ptr(-1)}, jobs.CodeInvalidJob},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := jobs.New(tc.in, now)
			var ce *control.Error
			if !errors.As(err, &ce) || ce.Code != tc.code {
				t.Fatalf("New = %v, want code %s", err, tc.code)
			}
		})
	}
}

// A job whose settings no longer work (its workspace was removed) drops
// its due time without a run; the claim stands and other jobs still fire
// in the same tick.
func TestBrokenJobDropsItsFireOnly(t *testing.T) {
	e := newEnv(t)
	ws := t.TempDir()
	if err := e.svc.AllowWorkspaces([]string{filepath.Dir(ws)}); err != nil {
		t.Fatal(err)
	}
	broken := e.job(jobs.Input{Name: ptr("broken"), Workspace: ptr(ws), ScheduleKind: ptr("interval"), ScheduleExpr: ptr("every 1s")})
	fine := e.job(jobs.Input{Name: ptr("fine"), ScheduleKind: ptr("interval"), ScheduleExpr: ptr("every 1s")})
	if err := os.Remove(ws); err != nil {
		t.Fatal(err)
	}
	e.clock.Add(time.Second)
	e.tick()
	if n := len(e.history(broken.ID)); n != 0 {
		t.Fatalf("broken job: %d runs", n)
	}
	if n := len(e.history(fine.ID)); n != 1 {
		t.Fatalf("fine job: %d runs, want 1", n)
	}
	if j, _ := e.st.GetJob(e.ctx, broken.ID); !j.NextFireAt.Equal(t0.Add(2*time.Second)) || j.FireCount != 1 {
		t.Fatalf("broken job after the tick: next %v count %d; want its claim to stand", j.NextFireAt, j.FireCount)
	}
}
