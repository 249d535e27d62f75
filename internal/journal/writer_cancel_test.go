package journal

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

// stageStore lets a test stop the writer at two points of its first
// batch: before the transaction starts (before) and after its last body
// ran, with the commit still to come (afterOps).
type stageStore struct {
	store.Store
	before, afterOps func()

	once sync.Once
}

func (s *stageStore) WriteBatch(ctx context.Context, fns []func(store.Tx) error) ([]error, error) {
	first := false
	s.once.Do(func() { first = true })
	if !first {
		return s.Store.WriteBatch(ctx, fns)
	}
	if s.before != nil {
		s.before()
	}
	if s.afterOps != nil {
		last := fns[len(fns)-1]
		fns = append(fns[:len(fns)-1:len(fns)-1], func(tx store.Tx) error {
			defer s.afterOps()
			return last(tx)
		})
	}
	return s.Store.WriteBatch(ctx, fns)
}

// TestWriterDoCancel pins Do's contract: a caller that gives up on an Op
// the writer has not taken gets ctx's error and the Op never runs; once
// the Op is taken, Do waits for it and returns its real outcome, so what
// the Op writes into the caller's variables is settled when Do returns.
func TestWriterDoCancel(t *testing.T) { storetest.Each(t, pg, testWriterDoCancel) }

func testWriterDoCancel(t *testing.T, open storetest.Open) {
	cases := []struct {
		name string
		at   string // where the caller gives up
		want error  // nil: the op committed
	}{
		{"cancelled before Do", "before", context.Canceled},
		{"cancelled while queued behind a batch", "queued", context.Canceled},
		{"cancelled while the queue is full", "full", context.Canceled},
		{"cancelled while the op runs", "running", nil},
		{"cancelled while its batch commits", "committing", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var (
				hold     = make(chan struct{}) // closed by the writer, held in "queued"
				gate     = make(chan struct{}) // lets the held writer go on
				inCommit = make(chan struct{}) // the op ran, the commit waits
				release  = make(chan struct{}) // lets the op or the commit go on
				opRan    = make(chan struct{})
				queued   = make(chan struct{}, 1)
			)
			ss := &stageStore{}
			switch c.at {
			case "queued", "full":
				ss.before = func() { close(hold); <-gate }
			case "committing":
				ss.afterOps = func() { close(inCommit); <-release }
			}
			e := newEnv(t, envOpts{open: open, noHub: true, wrap: func(s store.Store) store.Store { ss.Store = s; return ss }})
			e.seed(t, "s1", "r1")

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var blockers []<-chan error
			switch c.at {
			case "before":
				cancel()
			case "queued", "full":
				blockers = append(blockers, e.w.Submit(func(store.Tx) error { return nil }))
				<-hold
			}
			if c.at == "full" {
				for range cap(e.w.queue) {
					blockers = append(blockers, e.w.Submit(func(store.Tx) error { return nil }))
				}
			}
			e.w.queuedHook = func() {
				select {
				case queued <- struct{}{}:
				default:
				}
			}

			var got []event.Event // written by the op, read once Do returned
			op := func(tx store.Tx) error {
				close(opRan)
				if c.at == "running" {
					<-release
				}
				// The caller's context, cancelled by now in "running": the
				// store must not let that fail the op half way.
				var err error
				got, err = tx.AppendEvents(ctx, "", d("s1", "r1", event.MessageDelta))
				return err
			}
			res := make(chan error, 1)
			go func() { res <- e.w.Do(ctx, op) }()

			switch c.at {
			case "queued", "full":
				if c.at == "queued" {
					<-queued
				} // "full": Do cannot queue; it gives up there
				cancel()
				// Back before the batch ahead ends: a withdrawn op does
				// not wait for the writer.
				select {
				case err := <-res:
					res <- err
				case <-time.After(10 * time.Second):
					t.Fatal("Do still waits for the batch ahead after its ctx ended")
				}
				close(gate)
				for _, b := range blockers {
					if err := <-b; err != nil {
						t.Fatal(err)
					}
				}
			case "running":
				<-opRan
				cancel()
				close(release)
			case "committing":
				<-inCommit
				cancel()
				close(release)
			}
			err := <-res
			if (c.want == nil) != (err == nil) || !errors.Is(err, c.want) {
				t.Fatalf("Do = %v, want %v", err, c.want)
			}
			// Anything still queued runs before this one.
			if err := e.w.Do(context.Background(), func(store.Tx) error { return nil }); err != nil {
				t.Fatal(err)
			}
			ran := false
			select {
			case <-opRan:
				ran = true
			default:
			}
			evs := storeEvents(t, e.db, store.EventQuery{RunID: "r1"})
			if c.want != nil {
				if ran || len(evs) != 0 {
					t.Fatalf("withdrawn op ran (%v) or wrote %v", ran, eventIDs(evs))
				}
				return
			}
			if len(got) != 1 || len(evs) != 1 || evs[0].ID != got[0].ID {
				t.Fatalf("op returned %v, store has %v", eventIDs(got), eventIDs(evs))
			}
		})
	}
}
