package runner_test

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/runner"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

// The watchdog acts on the runs of runners that are gone (silent past four
// leases, or a process of this host that no longer exists) or whose lease
// ran out: a running run is interrupted, one being cancelled is finished,
// one waiting for a person is released as it is (its request stays
// answerable). Live runners' runs are left alone.
func TestWatchdogSweep(t *testing.T) {
	t.Parallel()
	host, _ := os.Hostname()
	const lease = time.Second
	// Heartbeat times in the table are relative to now, as of when each
	// case runs: cases wait for the PostgreSQL server to start.
	built := time.Now()
	tests := []struct {
		name   string
		runner store.RunnerInfo // the registered runner holding the run
		status run.Status
		expiry time.Duration // lease left on the run (negative: expired)
		want   run.Status
		held   bool // the run is still held by its runner
		forgot bool // the runner is no longer registered
		// early: the watchdog exists before the runner registers (a runner
		// in the same process); else it is made after (the runner, with
		// the same pid, was an earlier process)
		early bool
		// leaseOnly: a watchdog that judges by heartbeats and leases only
		// (a database shared by several hosts)
		leaseOnly bool
	}{
		{"live runner", store.RunnerInfo{ID: "rnr_live", Host: host, PID: os.Getppid()}, run.Running, time.Minute, run.Running, true, false, false, false},
		{"silent runner", store.RunnerInfo{ID: "rnr_silent", Host: "elsewhere", PID: 1, HeartbeatAt: built.Add(-10 * lease)}, run.Running, time.Minute, run.Interrupted, false, true, false, false},
		{"dead process on this host", store.RunnerInfo{ID: "rnr_dead", Host: host, PID: 1 << 22}, run.Running, time.Minute, run.Interrupted, false, true, false, false},
		{"lease expired", store.RunnerInfo{ID: "rnr_late", Host: "elsewhere", PID: 1}, run.Running, -time.Second, run.Interrupted, false, false, false, false},
		{"waiting for a person, dead runner", store.RunnerInfo{ID: "rnr_gone", Host: host, PID: 1 << 22}, run.AwaitingApproval, time.Minute, run.AwaitingApproval, false, true, false, false},
		{"cancelling, dead runner", store.RunnerInfo{ID: "rnr_gone", Host: host, PID: 1 << 22}, run.Cancelling, time.Minute, run.Cancelled, false, true, false, false},
		{"this process, an earlier incarnation", store.RunnerInfo{ID: "rnr_before", Host: host, PID: os.Getpid(), HeartbeatAt: built.Add(-time.Second)}, run.Running, time.Minute, run.Interrupted, false, true, false, false},
		{"this process, a runner beside the web tier", store.RunnerInfo{ID: "rnr_beside", Host: host, PID: os.Getpid()}, run.Running, time.Minute, run.Running, true, false, true, false},
		{"lease only: no such pid here, yet heartbeat and lease live", store.RunnerInfo{ID: "rnr_far", Host: host, PID: 1 << 22}, run.Running, time.Minute, run.Running, true, false, false, true},
		{"lease only: an earlier pid of this process", store.RunnerInfo{ID: "rnr_far2", Host: host, PID: os.Getpid(), HeartbeatAt: built.Add(-time.Second)}, run.Running, time.Minute, run.Running, true, false, false, true},
		{"lease only: silent runner", store.RunnerInfo{ID: "rnr_silent", Host: host, PID: 1 << 22, HeartbeatAt: built.Add(-10 * lease)}, run.Running, time.Minute, run.Interrupted, false, true, false, true},
		{"lease only: lease expired", store.RunnerInfo{ID: "rnr_late", Host: host, PID: 1 << 22}, run.AwaitingClarify, -time.Second, run.AwaitingClarify, false, false, false, true},
	}
	storetest.Each(t, pg, func(t *testing.T, open storetest.Open) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, open, script(turn(text("hi"))), control.RetryPolicy{})
				var wd *runner.Watchdog
				if tc.early {
					wd = runner.NewWatchdog(e.st, e.w, "", runner.Config{Lease: lease, LeaseOnly: tc.leaseOnly}, slog.New(slog.DiscardHandler))
					time.Sleep(2 * time.Millisecond) // the store keeps milliseconds
				}
				r := e.send("go")
				ri := tc.runner
				if ri.HeartbeatAt.IsZero() {
					ri.HeartbeatAt = time.Now()
				} else {
					ri.HeartbeatAt = time.Now().Add(ri.HeartbeatAt.Sub(built))
				}
				ri.StartedAt = ri.HeartbeatAt
				err := e.w.Do(e.ctx, func(tx store.Tx) error {
					if err := tx.UpsertRunner(e.ctx, ri); err != nil {
						return err
					}
					ru, err := tx.GetRun(e.ctx, r.ID)
					if err != nil {
						return err
					}
					ru.Status, ru.RunnerID, ru.LeaseExpiresAt, ru.StartedAt, ru.Attempt = tc.status, ri.ID, time.Now().Add(tc.expiry), time.Now(), 1
					return tx.UpdateRun(e.ctx, ru)
				})
				if err != nil {
					t.Fatal(err)
				}
				if wd == nil {
					wd = runner.NewWatchdog(e.st, e.w, "", runner.Config{Lease: lease, LeaseOnly: tc.leaseOnly}, slog.New(slog.DiscardHandler))
				}
				wd.Sweep(e.ctx)
				got := e.run(r.ID)
				if got.Status != tc.want || (got.RunnerID == ri.ID) != tc.held {
					t.Fatalf("after a sweep the run is %s held by %q, want %s (held: %v)", got.Status, got.RunnerID, tc.want, tc.held)
				}
				rs, _ := e.st.ListRunners(e.ctx)
				if forgot := len(rs) == 0; forgot != tc.forgot {
					t.Fatalf("runners after the sweep: %+v, want forgotten: %v", rs, tc.forgot)
				}
			})
		}
	})
}

// staleRuns is a store whose list of runs is the one taken before: what
// the watchdog saw, while the runs moved on before it acted.
type staleRuns struct {
	store.Store
	seen []store.Run
}

func (s staleRuns) RunsWithStatus(context.Context, ...run.Status) ([]store.Run, error) {
	return s.seen, nil
}

// The watchdog acts on what it saw only if it still holds: a run whose
// expired lease was renewed since, or that a live runner claimed anew,
// keeps running under that runner.
func TestWatchdogSweepActsOnlyOnWhatStillHolds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		after string // the runner holding the run when the watchdog acts
	}{
		{"the late runner renewed its lease", "rnr_late"},
		{"another runner claimed the run", "rnr_next"},
	}
	storetest.Each(t, pg, func(t *testing.T, open storetest.Open) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, open, script(turn(text("hi"))), control.RetryPolicy{})
				r := e.send("go")
				hold := func(runnerID string, lease time.Duration) store.Run {
					var ru store.Run
					err := e.w.Do(e.ctx, func(tx store.Tx) error {
						for _, id := range []string{"rnr_late", "rnr_next"} {
							now := time.Now()
							if err := tx.UpsertRunner(e.ctx, store.RunnerInfo{ID: id, Host: "elsewhere", PID: 1, StartedAt: now, HeartbeatAt: now}); err != nil {
								return err
							}
						}
						var err error
						if ru, err = tx.GetRun(e.ctx, r.ID); err != nil {
							return err
						}
						ru.Status, ru.RunnerID, ru.LeaseExpiresAt, ru.StartedAt, ru.Attempt = run.Running, runnerID, time.Now().Add(lease), time.Now(), 1
						return tx.UpdateRun(e.ctx, ru)
					})
					if err != nil {
						t.Fatal(err)
					}
					return ru
				}
				seen := hold("rnr_late", -time.Second)
				hold(tc.after, time.Minute)
				wd := runner.NewWatchdog(staleRuns{Store: e.st, seen: []store.Run{seen}}, e.w, "", runner.Config{Lease: time.Second}, slog.New(slog.DiscardHandler))
				wd.Sweep(e.ctx)
				if got := e.run(r.ID); got.Status != run.Running || got.RunnerID != tc.after {
					t.Fatalf("after a sweep the run is %s held by %q, want running held by %q", got.Status, got.RunnerID, tc.after)
				}
			})
		}
	})
}
