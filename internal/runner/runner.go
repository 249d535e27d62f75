// Package runner owns execution. A Runner claims runs from the store with a
// lease, keeps the lease alive with heartbeats, executes each run with the
// agent loop, obeys the controls written into the journal (cancel,
// answers) and ends every run with exactly one terminal event, or hands it
// back when it stops. A Watchdog (run by every runner, and by a web tier
// without a runner) finds runs whose runner died and marks them recovering
// or interrupted.
package runner

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caduceus-dev/caduceus/internal/agent"
	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/journal"
	"github.com/caduceus-dev/caduceus/internal/memory"
	"github.com/caduceus-dev/caduceus/internal/models"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/secret"
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
	// ID is the runner's identity; "" makes a fresh one. Set it when
	// something made before the runner must know it (the registry of
	// background processes records it).
	ID            string
	Lease         time.Duration // how long a claim lasts without heartbeat; default 15s
	MaxConcurrent int           // runs executed at once; default 8
	// Grace is how long a stopping runner waits for its runs to reach a
	// step boundary before it cancels the step in flight; 0 cancels at once.
	Grace       time.Duration
	ApprovalTTL time.Duration // expiry of human requests; 0 = never
	MaxTurns    int
	Version     string
	// Redactor removes known secrets from error texts, tool results and
	// streamed tool output before they are journaled or sent to a model;
	// nil leaves them as they are.
	Redactor *secret.Redactor
	// Memory is the memory of an agent profile (scope: the profile's id;
	// "" for runs with no profile): its notes and the user profile, put
	// into the system prompt and kept by the memory tool. nil means none.
	Memory func(scope string) *memory.Store
	// ApprovalMode is the approval policy of runs whose session sets none.
	ApprovalMode string
	// Processes, when set, is swept with every watchdog sweep (see
	// Watchdog).
	Processes ProcessSweeper
	// LeaseOnly makes the watchdog judge runners by their heartbeats and
	// leases alone, never by whether a pid of this host lives: for a
	// database shared by several hosts (PostgreSQL), where a runner of
	// another host may share this host's name and pid numbers mean nothing.
	LeaseOnly bool
	// Telemetry watches executions, model and tool calls; nil: nobody.
	Telemetry Telemetry
	// Checkpoints records the workspace before every tool call that may
	// change it and at the end of every run that took a checkpoint; nil
	// takes none. It works on this host's workspaces.
	Checkpoints Checkpointer
	// StuckRepeats is how many identical tool calls in a row pause a run
	// as looking stuck (h16-budgets); 0 means budget.DefaultRepeats, a
	// negative value turns detection off.
	StuckRepeats int
	// HealthEvery is how many model calls apart a run journals a
	// run_health diagnostic; 0 means DefaultHealthEvery, negative never.
	HealthEvery int
	// MCP gives a run the tools of the configured MCP servers (issue 18,
	// h18-mcpwire); nil: none.
	MCP MCPTools
}

// MCPTools is what a runner needs of internal/mcpconf: the tools of the
// enabled MCP servers. A server that cannot start contributes none and
// is reported in the error; the run goes on with the others.
type MCPTools interface {
	Tools(ctx context.Context) ([]tool.Tool, error)
}

// Checkpointer is what a runner needs of internal/changes.
type Checkpointer interface {
	agent.Checkpointer
	// RunEnd closes the span of a run that took checkpoints (ok false when
	// it took none) and prunes the workspace's checkpoints.
	RunEnd(ctx context.Context, workspace, sessionID, runID string) (p event.CheckpointCreatedPayload, ok bool, err error)
	// Prune keeps the workspace's checkpoints under their size cap; it is
	// called after a run's end is journaled, so it never delays it.
	Prune(ctx context.Context, workspace string)
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

	watch *Watchdog
	// wake makes the claim loop look at the store again: a slot freed or
	// a run parked (its answer may already be in).
	wake chan struct{}

	mu     sync.Mutex
	active map[string]*active
	wg     sync.WaitGroup

	// policy is the console's approval mode and timeout (issue 16,
	// h16-providers; SetPolicy), nil until set: cfg's then.
	policy atomic.Pointer[Policy]
}

// Policy is the approval mode of runs whose session sets none, and how
// long a person's answer is awaited (0: for ever).
type Policy struct {
	ApprovalMode string
	ApprovalTTL  time.Duration
}

// SetPolicy changes the approval defaults for the runs' next steps, as
// the console's settings change.
func (r *Runner) SetPolicy(p Policy) { r.policy.Store(&p) }

// defaultApprovalMode is the mode of a run whose profile names none.
func (r *Runner) defaultApprovalMode() string {
	if p := r.policy.Load(); p != nil && p.ApprovalMode != "" {
		return p.ApprovalMode
	}
	return r.cfg.ApprovalMode
}

func (r *Runner) approvalTTL() time.Duration {
	if p := r.policy.Load(); p != nil {
		return p.ApprovalTTL
	}
	return r.cfg.ApprovalTTL
}

// active is a run being executed.
type active struct {
	cancel context.CancelCauseFunc
	drain  chan struct{} // closed when the runner stops: yield at the next boundary
	// idle counts the run's tool calls that only wait for other runs
	// (delegate); while it is above zero the run does not count against
	// MaxConcurrent, so the child runs it waits for can be claimed here.
	idle atomic.Int32
}

var (
	errCancelRequested = errors.New("cancel requested")
	errShutdown        = errors.New("runner shutting down")
	// errExpired: the run's deadline passed while this runner held it
	// (h17-expiry); the step in flight is cancelled and the run ends expired.
	errExpired = errors.New("run expired")
)

// New returns a Runner with a fresh identity.
func New(cfg Config, st store.Store, w *journal.Writer, hub *journal.Hub, tools *tool.Registry, pick Resolver, log *slog.Logger) *Runner {
	if cfg.Lease <= 0 {
		cfg.Lease = 15 * time.Second
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = 8
	}
	if cfg.Telemetry == nil {
		cfg.Telemetry = unwatched{}
	}
	host, _ := os.Hostname()
	rid := cfg.ID
	if rid == "" {
		rid = id.New("rnr")
	}
	log = log.With("runner", rid)
	return &Runner{id: rid, host: host, cfg: cfg, st: st, w: w, hub: hub, tools: tools, pick: pick,
		log: log, active: map[string]*active{}, wake: make(chan struct{}, 1), watch: NewWatchdog(st, w, rid, cfg, log)}
}

// ID returns the runner's identity, the fence of its writes.
func (r *Runner) ID() string { return r.id }

// Run claims and executes runs until ctx ends, then stops gracefully: no
// new claims, runs yield at their next step boundary within the grace
// period (or are cancelled mid-step after it) and are handed over to
// another runner; runs waiting for a person are released as they are.
func (r *Runner) Run(ctx context.Context) error {
	last, err := r.register(ctx)
	if err != nil {
		return nil // stopped before it could start: it holds nothing
	}
	r.watch.Sweep(ctx)
	r.warmModelLists(ctx)
	wake := r.wake
	// Diagnostics are included because a handover of a run waiting for a
	// person changes no status.
	sub := r.hub.Subscribe(journal.Filter{Types: []event.Type{event.RunQueued, event.RunDone, event.RunStatus,
		event.ApprovalResolved, event.ClarifyResolved, event.Diagnostic}}, last)
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
	retry := time.NewTimer(time.Hour)
	defer retry.Stop()
	for {
		r.claimAll(ctx)
		// A recovering run becomes claimable at its retry time, and a
		// parked one when its request expires, which no event announces:
		// wake up for them.
		retry.Reset(r.untilNextRetry(ctx, r.cfg.Lease/3))
		select {
		case <-ctx.Done():
			r.shutdown()
			return nil
		case <-wake:
		case <-retry.C:
		case <-tick.C:
			if err := r.heartbeat(ctx); err != nil && ctx.Err() == nil {
				r.log.Warn("heartbeat failed", "err", err)
			}
			r.watch.Sweep(ctx)
		}
	}
}

// register registers the runner and returns where the journal ends: only news
// matters to the claim loop (claimAll looks at the store itself), so it
// does not replay the journal's history. The store failing here (the
// database restarting; on PostgreSQL, the session of a process frozen
// inside this heartbeat, ended by the server) passes as it does later in
// the loop, so register retries every third of a lease until ctx ends, the
// only error it returns: giving up left a runner process alive that
// claimed nothing.
func (r *Runner) register(ctx context.Context) (int64, error) {
	for {
		err := r.heartbeat(ctx)
		if err == nil {
			var last int64
			if last, err = r.st.LastEventID(ctx); err == nil {
				return last, nil
			}
		}
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		r.log.Warn("runner start: the store failed; trying again", "err", err, "in", r.cfg.Lease/3)
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(r.cfg.Lease / 3):
		}
	}
}

// untilNextRetry is how long until the earliest recovering run may be
// claimed, or the earliest pending request expires, at most limit.
func (r *Runner) untilNextRetry(ctx context.Context, limit time.Duration) time.Duration {
	runs, err := r.st.RunsWithStatus(ctx, run.Recovering)
	if err != nil {
		return limit
	}
	d := limit
	for _, ru := range runs {
		d = min(d, time.Until(ru.RetryAt))
	}
	reqs, err := r.st.ListRequests(ctx, store.RequestQuery{Status: store.RequestPending})
	if err != nil {
		return limit
	}
	for _, q := range reqs {
		if !q.ExpiresAt.IsZero() {
			d = min(d, time.Until(q.ExpiresAt))
		}
	}
	return max(d, time.Millisecond)
}

// poke makes the claim loop run again soon.
func (r *Runner) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Register records the runner and its first heartbeat, so it shows in
// health before it claims anything. Run registers too.
func (r *Runner) Register(ctx context.Context) error { return r.heartbeat(ctx) }

func (r *Runner) heartbeat(ctx context.Context) error {
	now := time.Now().UTC()
	var held []string
	err := r.w.Do(ctx, func(tx store.Tx) error {
		var err error
		if held, err = tx.RenewLeases(ctx, r.id, now.Add(r.cfg.Lease)); err != nil {
			return err
		}
		return tx.UpsertRunner(ctx, store.RunnerInfo{ID: r.id, Host: r.host, PID: os.Getpid(), Version: r.cfg.Version, StartedAt: now, HeartbeatAt: now})
	})
	if err == nil {
		r.settleOrphans(ctx, held)
	}
	return err
}

// settleOrphans hands on the runs this runner holds but no longer
// executes: their execution ended while the store could not take the
// ending (the disk full, the database locked). Kept alive by the heartbeat
// they would stay running for ever; now the store answers again, they go
// the way of a run whose runner stopped (recovering, or interrupted).
func (r *Runner) settleOrphans(ctx context.Context, held []string) {
	r.mu.Lock()
	var orphans []string
	for _, id := range held {
		if _, ok := r.active[id]; !ok {
			orphans = append(orphans, id)
		}
	}
	r.mu.Unlock()
	for _, id := range orphans {
		err := r.w.Do(ctx, func(tx store.Tx) error {
			return control.InterruptHeldBy(ctx, tx, id, r.id, "its runner could not write to the database for a while")
		})
		// A conflict: the run ended or parked after the heartbeat saw it.
		if err != nil && !errors.Is(err, store.ErrConflict) && ctx.Err() == nil {
			r.log.Warn("settling a run whose ending was not written", "run", id, "err", err)
		}
	}
}

func (r *Runner) claimAll(ctx context.Context) {
	for ctx.Err() == nil {
		full := r.executing() >= r.cfg.MaxConcurrent
		// Checked before each claim: a runner told to stop claims nothing
		// more, even in the middle of a burst.
		if full {
			return
		}
		// A claim committed after its caller gave up would leave a run
		// held by this runner and executed by nobody, neither handed over
		// at shutdown nor settled until its lease ran out. Do rules that
		// out: a runner told to stop withdraws a claim the writer has not
		// taken, and waits for one it has, which is then started and
		// handed over like any other. The claim's body does not see the
		// stop (wctx), so a taken claim describes its run in full.
		wctx := context.WithoutCancel(ctx)
		var claimed store.Run
		var ok bool
		err := r.w.Do(ctx, func(tx store.Tx) error {
			var err error
			claimed, ok, err = control.Claim(wctx, tx, r.id, r.cfg.Lease, func(ru store.Run) event.RunStartedPayload {
				return r.describe(wctx, tx, ru)
			})
			return err
		})
		if err != nil {
			if ctx.Err() == nil || !errors.Is(err, ctx.Err()) {
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

func (r *Runner) start(claimed store.Run) {
	if firstStart(claimed) {
		r.cfg.Telemetry.QueueWaited(time.Since(claimed.CreatedAt))
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	ctx, observed := r.cfg.Telemetry.Executing(ctx, claimed.ID, claimed.Attempt)
	a := &active{cancel: cancel, drain: make(chan struct{})}
	r.mu.Lock()
	r.active[claimed.ID] = a
	r.mu.Unlock()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer func() {
			// A parked run may be answered and claimed again before this
			// execution has wound down: the entry may be the new one's,
			// and removing it would make the heartbeat take the run for
			// an orphan and interrupt it under its new execution.
			r.mu.Lock()
			if r.active[claimed.ID] == a {
				delete(r.active, claimed.ID)
			}
			r.mu.Unlock()
			cancel(nil)
			r.poke()
		}()
		observed(r.execute(ctx, a, claimed))
	}()
}

// executing counts the runs held that are not idle (active.idle).
func (r *Runner) executing() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, a := range r.active {
		if a.idle.Load() == 0 {
			n++
		}
	}
	return n
}

// shutdown asks every active run to yield, waits up to the grace period
// while keeping their leases alive, cancels what is still mid-step, waits
// for all of them to be handed over and deregisters the runner.
func (r *Runner) shutdown() {
	r.mu.Lock()
	n := len(r.active)
	for _, a := range r.active {
		close(a.drain)
	}
	r.mu.Unlock()
	r.log.Info("runner stopping", "runs", n, "grace", r.cfg.Grace)
	settled := make(chan struct{})
	go func() { r.wg.Wait(); close(settled) }()
	grace := time.NewTimer(r.cfg.Grace)
	defer grace.Stop()
	beat := time.NewTicker(r.cfg.Lease / 3)
	defer beat.Stop()
	bg, cancel := context.WithTimeout(context.Background(), r.cfg.Grace+30*time.Second)
	defer cancel()
wait:
	for {
		select {
		case <-settled:
			break wait
		case <-beat.C:
			_ = r.heartbeat(bg)
		case <-grace.C:
			r.mu.Lock()
			for _, a := range r.active {
				a.cancel(errShutdown)
			}
			r.mu.Unlock()
		}
	}
	_ = r.w.Do(bg, func(tx store.Tx) error { return tx.DeleteRunner(bg, r.id) })
}

// draining reports whether the run was asked to yield.
func (a *active) draining() bool {
	select {
	case <-a.drain:
		return true
	default:
		return false
	}
}
