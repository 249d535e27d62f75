package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"syscall"
	"time"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/journal"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// Watchdog finds runs whose runner is gone and hands them to
// control.Interrupt: their lease expired, or their runner was a process on
// this host that no longer exists (a crash is then noticed at the next
// sweep instead of after the lease; not with Config.LeaseOnly). Every runner runs one; so does a web
// tier without a runner, so runs of a dead runner are marked even when no
// other runner is alive. Several watchdogs may sweep at once: the status
// change is conditional, so one of them wins and the rest change nothing.
//
// With a ProcessSweeper, every sweep also kills the background processes
// of this host whose runner is gone or whose time limit has passed; that
// needs no store, so it happens even while the database cannot be read.
type Watchdog struct {
	st    store.Store
	w     *journal.Writer
	procs ProcessSweeper // nil: none
	// ckp takes the end-of-run checkpoint of a run the sweep expires (nil:
	// none, as on a web tier without checkpoints).
	ckp   Checkpointer
	self  string // the runner this watchdog belongs to ("" for a web tier)
	host  string
	lease time.Duration
	// leaseOnly: no pid checks (Config.LeaseOnly).
	leaseOnly bool
	log       *slog.Logger
	// born is when this watchdog was made: a runner with this process's pid
	// registered before then was an earlier process that had the same pid.
	born time.Time
}

// ProcessSweeper kills the background processes left by runners that are
// gone, and those past their time limit (proctrack.Registry).
type ProcessSweeper interface {
	Sweep(ctx context.Context)
}

// NewWatchdog returns a Watchdog; self is the ID of the runner it runs in,
// whose runs it leaves alone, or "". Of cfg it uses Lease, LeaseOnly,
// Processes and Checkpoints (both may be nil).
func NewWatchdog(st store.Store, w *journal.Writer, self string, cfg Config, log *slog.Logger) *Watchdog {
	if cfg.Lease <= 0 {
		cfg.Lease = 15 * time.Second
	}
	host, _ := os.Hostname()
	return &Watchdog{st: st, w: w, self: self, host: host, procs: cfg.Processes, ckp: cfg.Checkpoints, lease: cfg.Lease, leaseOnly: cfg.LeaseOnly, log: log,
		born: time.Now().Truncate(time.Millisecond)} // the store keeps milliseconds
}

// Run sweeps every third of a lease until ctx ends: a dead runner's runs
// are marked within lease + lease/3 at most.
func (d *Watchdog) Run(ctx context.Context) {
	t := time.NewTicker(d.lease / 3)
	defer t.Stop()
	for {
		d.Sweep(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Sweep kills the processes the ProcessSweeper finds abandoned, marks the
// runs of runners that are gone and forgets those runners.
func (d *Watchdog) Sweep(ctx context.Context) {
	if d.procs != nil {
		d.procs.Sweep(ctx)
	}
	runs, err := d.st.RunsWithStatus(ctx, run.Running, run.Cancelling, run.AwaitingApproval, run.AwaitingClarify)
	if err != nil {
		return
	}
	runners, err := d.st.ListRunners(ctx)
	if err != nil {
		return
	}
	dead := map[string]bool{}
	for _, ri := range runners {
		if ri.ID == d.self {
			continue
		}
		if !d.leaseOnly && ri.Host == d.host && !d.processAlive(ri) || time.Since(ri.HeartbeatAt) > 4*d.lease {
			dead[ri.ID] = true
		}
	}
	now := time.Now()
	for _, ru := range runs {
		if ru.RunnerID == d.self && d.self != "" {
			continue
		}
		why := ""
		switch {
		case ru.RunnerID != "" && dead[ru.RunnerID]:
			why = "the runner's process exited"
		case ru.LeaseExpiresAt.Before(now):
			why = "the runner stopped answering"
		default:
			continue
		}
		if ru.RunnerID == "" && (ru.Status == run.AwaitingApproval || ru.Status == run.AwaitingClarify) {
			continue // released already; claimable as it is
		}
		err := d.w.Do(ctx, func(tx store.Tx) error {
			// What was seen may be stale: a runner that renewed the lease
			// since is alive, and a run claimed anew belongs to its new
			// runner (InterruptHeldBy).
			if !dead[ru.RunnerID] {
				cur, err := tx.GetRun(ctx, ru.ID)
				if err != nil {
					return err
				}
				if cur.LeaseExpiresAt.After(time.Now()) {
					return fmt.Errorf("run %s: its lease was renewed: %w", ru.ID, store.ErrConflict)
				}
			}
			return control.InterruptHeldBy(ctx, tx, ru.ID, ru.RunnerID, why)
		})
		switch {
		case errors.Is(err, store.ErrConflict):
			// Another watchdog got there first, or the runner woke up.
		case err != nil && ctx.Err() == nil:
			d.log.Warn("interrupt failed", "run", ru.ID, "err", err)
		case err == nil:
			d.log.Info("run's runner is gone", "run", ru.ID, "status", ru.Status, "why", why, "runner", ru.RunnerID, "lease_expired_at", ru.LeaseExpiresAt)
		}
	}
	for id := range dead {
		_ = d.w.Do(ctx, func(tx store.Tx) error { return tx.DeleteRunner(ctx, id) })
	}
	d.expireParked(ctx, runs)
	d.expireRuns(ctx)
}

// expireRuns ends the runs past their deadline that no runner holds
// (h17-expiry): queued, parked, paused, recovering or interrupted, and so
// those whose runner died, once the sweep above has taken them back. A
// runner ends the runs it holds itself. Several watchdogs may sweep at
// once: control.ExpireRun refuses a run already ended, so one wins.
func (d *Watchdog) expireRuns(ctx context.Context) {
	runs, err := d.st.RunsWithStatus(ctx, control.Unheld()...)
	if err != nil {
		return
	}
	now := time.Now()
	for _, ru := range runs {
		if ru.ExpiresAt.IsZero() || now.Before(ru.ExpiresAt) || ru.RunnerID != "" {
			continue
		}
		before := d.endCheckpoint(ctx, ru)
		err := d.w.Do(ctx, func(tx store.Tx) error { return control.ExpireRun(ctx, tx, ru.ID, "", now, before...) })
		switch {
		case errors.Is(err, store.ErrConflict):
			// Ended or claimed meanwhile.
		case err != nil && ctx.Err() == nil:
			d.log.Warn("expire run failed", "run", ru.ID, "err", err)
		case err == nil:
			d.log.Info("run expired", "run", ru.ID, "status", ru.Status, "expires_at", ru.ExpiresAt)
		}
	}
}

// expireParked resolves the overdue requests of parked runs as expired, so
// the page says so and the run becomes claimable even while no runner is
// alive to notice the time (a runner claims a parked run whose request is
// overdue and expires it itself).
func (d *Watchdog) expireParked(ctx context.Context, runs []store.Run) {
	parked := map[string]bool{}
	for _, ru := range runs {
		if ru.RunnerID == "" && (ru.Status == run.AwaitingApproval || ru.Status == run.AwaitingClarify) {
			parked[ru.ID] = true
		}
	}
	if len(parked) == 0 {
		return
	}
	reqs, err := d.st.ListRequests(ctx, store.RequestQuery{Status: store.RequestPending})
	if err != nil {
		return
	}
	now := time.Now()
	for _, q := range reqs {
		if !parked[q.RunID] || q.ExpiresAt.IsZero() || now.Before(q.ExpiresAt) {
			continue
		}
		err := d.w.Do(ctx, func(tx store.Tx) error { return control.Expire(ctx, tx, q.ID) })
		if err != nil && !errors.Is(err, store.ErrConflict) && ctx.Err() == nil {
			d.log.Warn("expire request failed", "request", q.ID, "err", err)
		}
	}
}

// processAlive reports whether the runner's process on this host lives.
// A runner with this process's pid is alive if it registered since this
// watchdog was made (a runner in the same process as a web tier, as tests
// and embedders assemble them), and an earlier process's if before.
func (d *Watchdog) processAlive(ri store.RunnerInfo) bool {
	if ri.PID <= 0 {
		return false
	}
	if ri.PID == os.Getpid() {
		return !ri.StartedAt.Before(d.born)
	}
	err := syscall.Kill(ri.PID, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// endCheckpoint takes the checkpoint that closes the span of a run the
// sweep is about to expire, as its runner does at the end of any run, and
// returns its event; none when the run took no checkpoint (it changed
// nothing) or there is no Checkpointer. Two sweepers racing may both take
// one; only the winner journals it, and the other's is a checkpoint with no
// change.
func (d *Watchdog) endCheckpoint(ctx context.Context, ru store.Run) []event.Draft {
	if d.ckp == nil || ru.StartedAt.IsZero() {
		return nil
	}
	sess, err := d.st.GetSession(ctx, ru.SessionID)
	if err != nil || sess.Workspace == "" {
		return nil
	}
	p, ok, err := d.ckp.RunEnd(ctx, sess.Workspace, ru.SessionID, ru.ID)
	if err != nil {
		d.log.Warn("end-of-run checkpoint of an expired run failed", "run", ru.ID, "err", err)
		return nil
	}
	if !ok {
		return nil
	}
	return []event.Draft{{RunID: ru.ID, SessionID: ru.SessionID, Type: event.CheckpointCreated, Payload: p}}
}
