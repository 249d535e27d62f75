// Package journal is the append-only event log's engine: a Writer that
// group-commits every write of the process through one goroutine, and a Hub
// that tails committed events and fans them out to live subscribers with
// replay from any cursor.
package journal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caduceus-dev/caduceus/internal/store"
)

// ErrClosed is returned for writes submitted after the Writer stopped.
var ErrClosed = errors.New("journal writer closed")

// Op is one atomic body of writes. It may run in the same database
// transaction as other Ops, isolated by a savepoint. An Op must not wait
// for anything but the store: the whole batch it shares waits for it.
type Op func(store.Tx) error

type pending struct {
	op   Op
	app  *appendReq // set by SubmitAppend: an append the Writer may merge
	done chan error // buffered, receives exactly one value
	at   time.Time  // when it was submitted; zero when nobody observes
	// claim decides, once, between the writer taking the Op and its
	// caller giving up on it (Do); nil for an Op nobody can withdraw.
	claim *atomic.Int32
}

// States of pending.claim.
const (
	queued int32 = iota
	taken
	withdrawn
)

// take reports whether p is still wanted, and makes it the writer's: from
// here on its caller waits for its outcome.
func (p pending) take() bool {
	return p.claim == nil || p.claim.CompareAndSwap(queued, taken)
}

// Observer learns how long writes take. It is called on the writer's
// goroutine, after the commit: it must be quick and must not block.
type Observer interface {
	// Committed reports one group commit: how long the transaction took
	// and whether it failed as a whole.
	Committed(took time.Duration, err error)
	// Appended reports how long one Op took from Submit until its outcome
	// was known (queueing, the batch's transaction, the commit).
	Appended(took time.Duration)
}

// WriterOption tunes a Writer.
type WriterOption func(*Writer)

// WithObserver has every commit and every Op reported to o.
func WithObserver(o Observer) WriterOption { return func(w *Writer) { w.obs = o } }

// Writer serialises writes: one goroutine takes every queued Op, runs as many
// as are waiting in one transaction, commits once and only then reports
// each Op's outcome and wakes the Hub. That is group commit: under load one
// fsync covers many appends; idle, an Op commits at once.
type Writer struct {
	st       store.Store
	notify   func()
	log      *slog.Logger
	maxBatch int
	obs      Observer // nil: nobody watches

	queue chan pending
	quit  chan struct{}
	done  chan struct{}
	once  sync.Once

	// mu orders Submit against Close: Submit enqueues under the read lock
	// and Close closes quit under the write lock, so once quit is closed no
	// Op can enter the queue behind the loop's final drain and be lost.
	mu     sync.RWMutex
	closed bool

	// trouble is the storage failure writes meet since it began (nil
	// while they succeed): health reports it while it lasts.
	trouble atomic.Pointer[Trouble]

	// queuedHook, when set (tests), is called once an Op is in the queue.
	queuedHook func()
}

// Trouble is a storage failure that writes have met since Since.
type Trouble struct {
	Since time.Time
	Err   error
}

// Trouble returns the storage failure writes meet now, or nil.
func (w *Writer) Trouble() *Trouble { return w.trouble.Load() }

// note records the outcome of a commit for Trouble.
func (w *Writer) note(err error) {
	if err == nil {
		w.trouble.Store(nil)
		return
	}
	if w.trouble.Load() == nil {
		w.trouble.Store(&Trouble{Since: time.Now(), Err: err})
	}
}

// NewWriter returns a Writer on st that calls notify after every commit.
// A store may bound how many Ops share a transaction (MaxBatch): on
// PostgreSQL each Op's savepoint is a subtransaction, and more than 64 in
// one transaction slow every snapshot of the database down.
func NewWriter(st store.Store, notify func(), log *slog.Logger, opts ...WriterOption) *Writer {
	if notify == nil {
		notify = func() {}
	}
	maxBatch := 256
	if b, ok := st.(interface{ MaxBatch() int }); ok && b.MaxBatch() > 0 {
		maxBatch = b.MaxBatch()
	}
	w := &Writer{
		st: st, notify: notify, log: log, maxBatch: maxBatch,
		queue: make(chan pending, 1024),
		quit:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	for _, o := range opts {
		o(w)
	}
	return w
}

// Start runs the writer goroutine until Close.
func (w *Writer) Start() { go w.loop() }

// Close stops accepting Ops, commits those already queued and waits.
func (w *Writer) Close() {
	w.once.Do(func() {
		w.mu.Lock()
		w.closed = true
		close(w.quit)
		w.mu.Unlock()
	})
	<-w.done
}

// Submit queues op and returns a channel that receives its outcome once it is
// durable (or failed). Ops of one goroutine commit in submission order.
func (w *Writer) Submit(op Op) <-chan error {
	return w.submit(pending{op: op, done: make(chan error, 1)})
}

func (w *Writer) submit(p pending) <-chan error {
	if err := w.enqueue(nil, p); err != nil {
		p.done <- err
	}
	return p.done
}

// enqueue puts p in the queue; a full queue is waited for until ctx ends
// (nil: for good).
func (w *Writer) enqueue(ctx <-chan struct{}, p pending) error {
	if w.obs != nil {
		p.at = time.Now()
	}
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		return ErrClosed
	}
	// The loop keeps draining while we hold the read lock: Close cannot
	// stop it before this send completes.
	select {
	case w.queue <- p:
	case <-ctx:
		return errGaveUp
	}
	if w.queuedHook != nil {
		w.queuedHook()
	}
	return nil
}

// errGaveUp is enqueue's report that ctx ended first.
var errGaveUp = errors.New("gave up before queueing")

// Do runs op and waits until it is durable or failed, and returns its
// outcome.
//
// ctx withdraws only an Op the writer has not taken yet: then Do returns
// ctx.Err() and op never runs. Once the writer has taken op into a batch,
// op runs to its end and Do waits for the batch's outcome whatever ctx
// does, so a caller is never told "canceled" about a write that commits,
// and nothing op writes is still being written when Do returns. That wait
// is bounded by one batch: op is taken only as its own batch starts (a
// cancelled caller does not wait for the batches ahead of it), and a batch
// is at most MaxBatch Ops, each of which may only wait for the store. The
// store runs an Op's statements detached from the cancellation of the
// context the Op passes (see store.Tx): a caller's cancellation can
// neither fail its own Op half way nor, through the shared transaction,
// its batch mates.
func (w *Writer) Do(ctx context.Context, op Op) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p := pending{op: op, done: make(chan error, 1), claim: new(atomic.Int32)}
	if err := w.enqueue(ctx.Done(), p); err != nil {
		if errors.Is(err, errGaveUp) {
			return ctx.Err()
		}
		return err
	}
	select {
	case err := <-p.done:
		return err
	case <-ctx.Done():
		if p.claim.CompareAndSwap(queued, withdrawn) {
			return ctx.Err()
		}
		return <-p.done
	}
}

func (w *Writer) loop() {
	defer close(w.done)
	batch := make([]pending, 0, w.maxBatch)
	for {
		select {
		case p := <-w.queue:
			batch = append(batch[:0], p)
		case <-w.quit:
			// Commit what was queued before Close; later Submits see ErrClosed.
			for {
				select {
				case p := <-w.queue:
					w.commit([]pending{p})
				default:
					return
				}
			}
		}
	fill:
		for len(batch) < w.maxBatch {
			select {
			case p := <-w.queue:
				batch = append(batch, p)
			default:
				break fill
			}
		}
		w.commit(batch)
	}
}

// changeReporter is a store that can tell whether a batch changed
// anything (sqlite.DB).
type changeReporter interface {
	WriteBatchChanges(ctx context.Context, fns []func(store.Tx) error) ([]error, bool, error)
}

func (w *Writer) commit(batch []pending) {
	batch = wanted(batch)
	if len(batch) == 0 {
		return
	}
	fns, outcome := bodies(batch)
	// The batch runs on the writer's own context, not a caller's: a
	// caller that gives up once its Op was taken waits for the outcome
	// (Do).
	start := time.Now()
	var errs []error
	var err error
	changed := true
	troubled := w.trouble.Load() != nil
	ae, each := w.st.(appendEacher)
	var apps []store.Append
	if each && !troubled {
		apps, each = onlyAppends(batch)
	}
	cr, counts := w.st.(changeReporter)
	switch {
	case each && !troubled:
		// The runners' streamed appends, and nothing else: no body to run.
		errs, err = ae.AppendEach(context.Background(), apps)
		outcome = func(errs []error) []error { return errs }
	case counts && troubled:
		// While writes fail, a batch that changed nothing (a claim that
		// found no run, a conditional update another process won) commits
		// even on a full disk: only one that changed something shows
		// writes work again.
		errs, changed, err = cr.WriteBatchChanges(context.Background(), fns)
	default:
		errs, err = w.st.WriteBatch(context.Background(), fns)
	}
	var results []error
	if err == nil {
		results = outcome(errs)
	}
	if fail := storageFailure(err, results); fail != nil || changed {
		w.note(fail)
	}
	if w.obs != nil {
		// Reported after the callers were told: they need not wait for it.
		defer w.observe(batch, start, time.Now(), err)
	}
	if err != nil {
		w.log.Error("journal commit failed", "ops", len(batch), "err", err)
		for _, p := range batch {
			p.done <- fmt.Errorf("journal commit: %w", err)
		}
		return
	}
	w.notify()
	for i, p := range batch {
		p.done <- results[i]
	}
}

// wanted takes the Ops of batch whose callers still wait, in place, and
// drops the withdrawn ones: those never run.
func wanted(batch []pending) []pending {
	out := batch[:0]
	for _, p := range batch {
		if p.take() {
			out = append(out, p)
		}
	}
	return out
}

// observe reports a commit that ran from start to end, and its Ops.
func (w *Writer) observe(batch []pending, start, end time.Time, err error) {
	w.obs.Committed(end.Sub(start), err)
	for _, p := range batch {
		w.obs.Appended(end.Sub(p.at))
	}
}

// storageFailure is the transient storage error of a commit, if any: the
// transaction's own, or one a body met (a full disk can fail a statement
// while the commit of the rest goes through).
func storageFailure(err error, errs []error) error {
	if err != nil {
		return err
	}
	for _, e := range errs {
		if store.Transient(e) {
			return e
		}
	}
	return nil
}
