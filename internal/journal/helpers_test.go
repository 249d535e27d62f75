package journal

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/postgres/pgtest"
	"github.com/caduceus-dev/caduceus/internal/store/sqlite"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

var discard = slog.New(slog.DiscardHandler)

var t0 = time.UnixMilli(1_700_000_000_000).UTC()

// pg is the PostgreSQL server of this test binary: the tests run on both
// stores (storetest.Each).
var pg = pgtest.New()

// env is a fresh store with a running Writer and Hub.
type env struct {
	db      store.Store
	another func() store.Store // another process's store on the same database
	w       *Writer
	hub     *Hub
	stopHub context.CancelFunc
	hubDone chan error
}

type envOpts struct {
	open   storetest.Open // nil: SQLite
	poll   time.Duration
	wrap   func(store.Store) store.Store // e.g. a countingStore
	notify func()                        // called after Poke
	noHub  bool                          // do not start Hub.Run
}

func openDB(t testing.TB, path string) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func newEnv(t testing.TB, o envOpts) *env {
	t.Helper()
	if o.open == nil {
		o.open = storetest.SQLite
	}
	e := &env{}
	e.db, e.another = o.open(t)
	if o.poll == 0 {
		o.poll = time.Hour // only Pokes wake the hub unless a test asks
	}
	e.hub = NewHub(e.db, o.poll, discard)
	var st store.Store = e.db
	if o.wrap != nil {
		st = o.wrap(e.db)
	}
	notify := e.hub.Poke
	if o.notify != nil {
		notify = func() { e.hub.Poke(); o.notify() }
	}
	e.w = NewWriter(st, notify, discard)
	e.w.Start()
	t.Cleanup(e.w.Close)
	if !o.noHub {
		e.startHub(t)
	}
	return e
}

func (e *env) startHub(t testing.TB) {
	ctx, cancel := context.WithCancel(context.Background())
	e.stopHub, e.hubDone = cancel, make(chan error, 1)
	go func() { e.hubDone <- e.hub.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-e.hubDone
	})
}

// seed creates a session with one running run per id, directly in the store.
func (e *env) seed(t testing.TB, sessionID string, runIDs ...string) {
	t.Helper()
	err := e.db.Write(context.Background(), func(tx store.Tx) error {
		if err := tx.InsertSession(context.Background(), store.Session{ID: sessionID, Workspace: "/ws", CreatedAt: t0, UpdatedAt: t0}); err != nil {
			return err
		}
		for _, id := range runIDs {
			if err := tx.InsertRun(context.Background(), store.Run{ID: id, SessionID: sessionID, Status: run.Running,
				Input: "x", RunnerID: "runner-1", CreatedAt: t0}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("seed: %v", err)
	}
}

func appendOp(drafts ...event.Draft) Op {
	return func(tx store.Tx) error {
		_, err := tx.AppendEvents(context.Background(), "", drafts...)
		return err
	}
}

func d(sessionID, runID string, typ event.Type) event.Draft {
	return event.Draft{SessionID: sessionID, RunID: runID, Type: typ}
}

// appendDirect appends through the store, bypassing the Writer (and its
// Poke), n events per transaction.
func appendDirect(t testing.TB, st store.Store, drafts ...event.Draft) []event.Event {
	t.Helper()
	var out []event.Event
	err := st.Write(context.Background(), func(tx store.Tx) error {
		var err error
		out, err = tx.AppendEvents(context.Background(), "", drafts...)
		return err
	})
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	return out
}

func repeat(n int, dr event.Draft) []event.Draft {
	out := make([]event.Draft, n)
	for i := range out {
		out[i] = dr
	}
	return out
}

func storeEvents(t testing.TB, r store.Reader, q store.EventQuery) []event.Event {
	t.Helper()
	evs, err := r.Events(context.Background(), q)
	if err != nil {
		t.Fatalf("events: %v", err)
	}
	return evs
}

func eventIDs(evs []event.Event) []int64 {
	out := make([]int64, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}

// collect calls Next until it has n events (or fails the test after
// timeout), checking that IDs only go up.
func collect(t testing.TB, s *Sub, n int, timeout time.Duration) []event.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var out []event.Event
	var last int64
	for len(out) < n {
		evs, err := s.Next(ctx)
		if err != nil {
			t.Fatalf("Next after %d/%d events: %v", len(out), n, err)
		}
		if len(evs) == 0 {
			t.Fatalf("Next returned no events and no error")
		}
		for _, e := range evs {
			if e.ID <= last {
				t.Fatalf("event id %d after %d: duplicate or out of order", e.ID, last)
			}
			last = e.ID
		}
		if s.Cursor() != last {
			t.Fatalf("cursor %d, last event %d", s.Cursor(), last)
		}
		out = append(out, evs...)
	}
	if len(out) > n {
		t.Fatalf("got %d events, want %d", len(out), n)
	}
	return out
}

// expectQuiet asserts that Next has nothing more within d.
func expectQuiet(t testing.TB, s *Sub, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	evs, err := s.Next(ctx)
	// The deadline may strike inside a store read, which the driver may
	// report as its own "interrupted" error: any error once ctx is done is
	// the quiet we expect.
	if len(evs) > 0 || err == nil || ctx.Err() == nil {
		t.Fatalf("unexpected extra events %v (err %v)", eventIDs(evs), err)
	}
}

// countingStore counts WriteBatch calls and their sizes. When gate is set,
// the first WriteBatch signals entered and then waits for gate to close, so a
// test can queue work behind it deterministically. delay slows every commit
// down (a slow disk).
type countingStore struct {
	store.Store
	delay   time.Duration
	gate    chan struct{}
	entered chan struct{}
	fail    error // returned for the whole batch when set

	mu    sync.Mutex
	sizes []int
}

func (c *countingStore) WriteBatch(ctx context.Context, fns []func(store.Tx) error) ([]error, error) {
	c.mu.Lock()
	c.sizes = append(c.sizes, len(fns))
	first := len(c.sizes) == 1
	c.mu.Unlock()
	if first && c.gate != nil {
		close(c.entered)
		<-c.gate
	}
	if c.delay > 0 {
		time.Sleep(c.delay)
	}
	if c.fail != nil {
		return nil, c.fail
	}
	return c.Store.WriteBatch(ctx, fns)
}

func (c *countingStore) batchSizes() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int(nil), c.sizes...)
}

// boundedStore is a store that bounds its batches, as PostgreSQL's does.
type boundedStore struct {
	store.Store
	max int
}

func (b boundedStore) MaxBatch() int { return b.max }
