// Package runner owns execution. A Runner claims runs from the store with a
// lease, keeps the lease alive with heartbeats, executes each run with the
// agent loop, obeys the controls written into the journal (cancel,
// answers) and ends every run with exactly one terminal event. It also
// finds runs whose runner died and marks them interrupted.
package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/journal"
	"github.com/caduceus-dev/caduceus/internal/models"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// Resolver picks the provider and model for a run's model reference (""
// means the default). Peek must not block: it runs inside the claim
// transaction.
type Resolver interface {
	Resolve(ctx context.Context, ref string) (models.Resolved, error)
	Peek(ref string) (models.Resolved, error)
}

// Config tunes a Runner. Zero values mean the defaults.
type Config struct {
	Lease         time.Duration // how long a claim lasts without heartbeat; default 15s
	MaxConcurrent int           // runs executed at once; default 8
	ApprovalTTL   time.Duration // expiry of human requests; 0 = never
	MaxTurns      int
	Version       string
	// Redact removes known secrets from error texts before they are
	// journaled; nil leaves them as they are.
	Redact func(string) string
	// Memory renders the agent's notes and the user profile for the system
	// prompt; nil means none.
	Memory interface {
		Render(ctx context.Context) (string, error)
	}
	// ApprovalMode is the approval policy of runs whose session sets none.
	ApprovalMode string
}

// Runner executes runs. Create it with New and call Run.
type Runner struct {
	id    string
	host  string
	cfg   Config
	st    store.Store
	w     *journal.Writer
	hub   *journal.Hub
	tools *tool.Registry
	pick  Resolver
	log   *slog.Logger

	mu     sync.Mutex
	active map[string]context.CancelCauseFunc
	wg     sync.WaitGroup
}

var (
	errCancelRequested = errors.New("cancel requested")
	errShutdown        = errors.New("runner shutting down")
)

// New returns a Runner with a fresh identity.
func New(cfg Config, st store.Store, w *journal.Writer, hub *journal.Hub, tools *tool.Registry, pick Resolver, log *slog.Logger) *Runner {
	if cfg.Lease <= 0 {
		cfg.Lease = 15 * time.Second
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = 8
	}
	host, _ := os.Hostname()
	rid := id.New("rnr")
	return &Runner{id: rid, host: host, cfg: cfg, st: st, w: w, hub: hub, tools: tools, pick: pick,
		log: log.With("runner", rid), active: map[string]context.CancelCauseFunc{}}
}

// ID returns the runner's identity, the fence of its writes.
func (r *Runner) ID() string { return r.id }

// Run claims and executes runs until ctx ends, then stops its runs
// gracefully: those waiting for a person are released to be picked up
// again, running ones are marked interrupted.
func (r *Runner) Run(ctx context.Context) error {
	if err := r.heartbeat(ctx); err != nil {
		return fmt.Errorf("register runner: %w", err)
	}
	r.sweep(ctx)
	wake := make(chan struct{}, 1)
	// Only news matters here (claimAll looks at the store itself), so start
	// at the journal's end rather than replaying its history.
	last, err := r.st.LastEventID(ctx)
	if err != nil {
		return fmt.Errorf("runner start: %w", err)
	}
	sub := r.hub.Subscribe(journal.Filter{Types: []event.Type{event.RunQueued, event.RunDone, event.RunStatus,
		event.ApprovalResolved, event.ClarifyResolved}}, last)
	defer sub.Close()
	go func() {
		for {
			if _, err := sub.Next(ctx); err != nil {
				return
			}
			select {
			case wake <- struct{}{}:
			default:
			}
		}
	}()
	tick := time.NewTicker(r.cfg.Lease / 3)
	defer tick.Stop()
	for {
		r.claimAll(ctx)
		select {
		case <-ctx.Done():
			r.shutdown()
			return nil
		case <-wake:
		case <-tick.C:
			if err := r.heartbeat(ctx); err != nil && ctx.Err() == nil {
				r.log.Warn("heartbeat failed", "err", err)
			}
			r.sweep(ctx)
		}
	}
}

func (r *Runner) heartbeat(ctx context.Context) error {
	now := time.Now().UTC()
	return r.w.Do(ctx, func(tx store.Tx) error {
		if _, err := tx.RenewLeases(ctx, r.id, now.Add(r.cfg.Lease)); err != nil {
			return err
		}
		return tx.UpsertRunner(ctx, store.RunnerInfo{ID: r.id, Host: r.host, PID: os.Getpid(), Version: r.cfg.Version, StartedAt: now, HeartbeatAt: now})
	})
}

func (r *Runner) claimAll(ctx context.Context) {
	for ctx.Err() == nil {
		r.mu.Lock()
		full := len(r.active) >= r.cfg.MaxConcurrent
		r.mu.Unlock()
		if full {
			return
		}
		var claimed store.Run
		var ok bool
		err := r.w.Do(ctx, func(tx store.Tx) error {
			var err error
			claimed, ok, err = control.Claim(ctx, tx, r.id, r.cfg.Lease, r.describe)
			return err
		})
		if err != nil {
			if ctx.Err() == nil {
				r.log.Error("claim failed", "err", err)
			}
			return
		}
		if !ok {
			return
		}
		r.start(claimed)
	}
}

// describe names the provider and model that will answer a run.
func (r *Runner) describe(ru store.Run) event.RunStartedPayload {
	res, err := r.pick.Peek(ru.Model)
	if err != nil {
		return event.RunStartedPayload{Model: ru.Model}
	}
	return event.RunStartedPayload{Provider: res.ProviderName, Model: res.Model, Demo: res.Demo(), ContextWindow: res.Info.ContextWindow}
}

func (r *Runner) start(claimed store.Run) {
	ctx, cancel := context.WithCancelCause(context.Background())
	r.mu.Lock()
	r.active[claimed.ID] = cancel
	r.mu.Unlock()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer func() {
			r.mu.Lock()
			delete(r.active, claimed.ID)
			r.mu.Unlock()
			cancel(nil)
		}()
		r.execute(ctx, cancel, claimed)
	}()
}

// shutdown stops every active run and waits for them to settle.
func (r *Runner) shutdown() {
	r.mu.Lock()
	for _, cancel := range r.active {
		cancel(errShutdown)
	}
	r.mu.Unlock()
	r.wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = r.w.Do(ctx, func(tx store.Tx) error { return tx.DeleteRunner(ctx, r.id) })
}

// sweep marks runs whose runner is gone: their lease expired, or their
// runner was a process on this host that no longer exists (a crash and
// restart is then noticed at once instead of after the lease).
func (r *Runner) sweep(ctx context.Context) {
	runs, err := r.st.RunsWithStatus(ctx, run.Running, run.Cancelling, run.AwaitingApproval, run.AwaitingClarify)
	if err != nil {
		return
	}
	runners, err := r.st.ListRunners(ctx)
	if err != nil {
		return
	}
	dead := map[string]bool{}
	for _, ri := range runners {
		if ri.ID == r.id {
			continue
		}
		if ri.Host == r.host && !processAlive(ri.PID) || time.Since(ri.HeartbeatAt) > 4*r.cfg.Lease {
			dead[ri.ID] = true
		}
	}
	now := time.Now()
	for _, ru := range runs {
		if ru.RunnerID == r.id {
			continue
		}
		why := ""
		switch {
		case ru.RunnerID != "" && dead[ru.RunnerID]:
			why = "its runner process exited"
		case ru.LeaseExpiresAt.Before(now):
			why = fmt.Sprintf("its lease expired at %s without a heartbeat", ru.LeaseExpiresAt.Format(time.RFC3339))
		default:
			continue
		}
		if ru.RunnerID == "" && (ru.Status == run.AwaitingApproval || ru.Status == run.AwaitingClarify) {
			continue // released already; claimable as it is
		}
		err := r.w.Do(ctx, func(tx store.Tx) error { return control.Interrupt(ctx, tx, ru.ID, why) })
		if err != nil && ctx.Err() == nil {
			r.log.Warn("interrupt failed", "run", ru.ID, "err", err)
		} else {
			r.log.Info("run's runner is gone", "run", ru.ID, "status", ru.Status, "why", why)
		}
	}
	for id := range dead {
		_ = r.w.Do(ctx, func(tx store.Tx) error { return tx.DeleteRunner(ctx, id) })
	}
}

// processAlive reports whether pid names a live process on this host.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if pid == os.Getpid() {
		return false // a previous incarnation that had our pid is gone
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
