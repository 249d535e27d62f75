package journal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

func TestWriterDoIsDurableOnReturn(t *testing.T) {
	storetest.Each(t, pg, testWriterDoIsDurableOnReturn)
}

func testWriterDoIsDurableOnReturn(t *testing.T, open storetest.Open) {
	e := newEnv(t, envOpts{open: open, noHub: true})
	e.seed(t, "s1", "r1")
	other := e.another() // another process's view of the file
	ctx := context.Background()
	for i := range 20 {
		var got []event.Event
		err := e.w.Do(ctx, func(tx store.Tx) error {
			var err error
			got, err = tx.AppendEvents(ctx, "", d("s1", "r1", event.MessageDelta))
			return err
		})
		if err != nil {
			t.Fatalf("do %d: %v", i, err)
		}
		for _, r := range []store.Reader{e.db, other} {
			evs := storeEvents(t, r, store.EventQuery{AfterID: got[0].ID - 1})
			if len(evs) != 1 || evs[0].ID != got[0].ID || evs[0].Seq != int64(i+1) {
				t.Fatalf("do %d: event %d not readable on return: %v", i, got[0].ID, eventIDs(evs))
			}
		}
	}
}

func TestWriterSubmitKeepsOrder(t *testing.T) { storetest.Each(t, pg, testWriterSubmitKeepsOrder) }

func testWriterSubmitKeepsOrder(t *testing.T, open storetest.Open) {
	e := newEnv(t, envOpts{open: open, noHub: true})
	e.seed(t, "s1", "r1")
	const n = 300
	chans := make([]<-chan error, n)
	for i := range n {
		chans[i] = e.w.Submit(appendOp(event.Draft{SessionID: "s1", RunID: "r1", Type: event.MessageDelta,
			Payload: map[string]int{"i": i}}))
	}
	for i, ch := range chans {
		if err := <-ch; err != nil {
			t.Fatalf("op %d: %v", i, err)
		}
	}
	evs := storeEvents(t, e.db, store.EventQuery{RunID: "r1"})
	if len(evs) != n {
		t.Fatalf("%d events, want %d", len(evs), n)
	}
	for i, ev := range evs {
		var p struct{ I int }
		if err := json.Unmarshal(ev.Payload, &p); err != nil {
			t.Fatal(err)
		}
		if p.I != i || ev.Seq != int64(i+1) {
			t.Fatalf("event %d: payload i=%d seq=%d", i, p.I, ev.Seq)
		}
	}
}

func TestWriterGroupCommit(t *testing.T) { storetest.Each(t, pg, testWriterGroupCommit) }

func testWriterGroupCommit(t *testing.T, open storetest.Open) {
	t.Run("ops queued behind a commit share the next one", func(t *testing.T) {
		cs := &countingStore{gate: make(chan struct{}), entered: make(chan struct{})}
		e := newEnv(t, envOpts{open: open, noHub: true, wrap: func(s store.Store) store.Store { cs.Store = s; return cs }})
		e.seed(t, "s1", "r1")
		first := e.w.Submit(appendOp(d("s1", "r1", event.MessageDelta)))
		<-cs.entered
		const queued = 99
		chans := make([]<-chan error, queued)
		for i := range chans {
			chans[i] = e.w.Submit(appendOp(d("s1", "r1", event.MessageDelta)))
		}
		close(cs.gate)
		for _, ch := range append(chans, first) {
			if err := <-ch; err != nil {
				t.Fatal(err)
			}
		}
		if got := cs.batchSizes(); !slices.Equal(got, []int{1, queued}) {
			t.Fatalf("batch sizes %v, want [1 %d]", got, queued)
		}
		if evs := storeEvents(t, e.db, store.EventQuery{RunID: "r1"}); len(evs) != queued+1 {
			t.Fatalf("%d events", len(evs))
		}
	})

	t.Run("a store's MaxBatch bounds a batch", func(t *testing.T) {
		cs := &countingStore{gate: make(chan struct{}), entered: make(chan struct{})}
		e := newEnv(t, envOpts{open: open, noHub: true, wrap: func(s store.Store) store.Store {
			cs.Store = s
			return boundedStore{cs, 10}
		}})
		e.seed(t, "s1", "r1")
		first := e.w.Submit(appendOp(d("s1", "r1", event.MessageDelta)))
		<-cs.entered
		chans := make([]<-chan error, 25)
		for i := range chans {
			chans[i] = e.w.Submit(appendOp(d("s1", "r1", event.MessageDelta)))
		}
		close(cs.gate)
		for _, ch := range append(chans, first) {
			if err := <-ch; err != nil {
				t.Fatal(err)
			}
		}
		if got := cs.batchSizes(); !slices.Equal(got, []int{1, 10, 10, 5}) {
			t.Fatalf("batch sizes %v, want [1 10 10 5]", got)
		}
	})

	t.Run("concurrent Do calls batch", func(t *testing.T) {
		// A commit costs at least 2ms here (a slow disk): Do calls that
		// arrive meanwhile must ride along in the next transaction.
		cs := &countingStore{delay: 2 * time.Millisecond}
		e := newEnv(t, envOpts{open: open, noHub: true, wrap: func(s store.Store) store.Store { cs.Store = s; return cs }})
		const workers, each = 8, 25
		for w := range workers {
			e.seed(t, fmt.Sprintf("s%d", w), fmt.Sprintf("r%d", w))
		}
		var wg sync.WaitGroup
		errc := make(chan error, workers)
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sid, rid := fmt.Sprintf("s%d", w), fmt.Sprintf("r%d", w)
				for range each {
					if err := e.w.Do(context.Background(), appendOp(d(sid, rid, event.MessageDelta))); err != nil {
						errc <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errc)
		for err := range errc {
			t.Fatal(err)
		}
		sizes := cs.batchSizes()
		total := 0
		for _, n := range sizes {
			total += n
		}
		if total != workers*each {
			t.Fatalf("%d ops committed, want %d", total, workers*each)
		}
		if len(sizes) >= workers*each || slices.Max(sizes) < 2 {
			t.Fatalf("no group commit: %d commits for %d ops (largest batch %d)", len(sizes), total, slices.Max(sizes))
		}
		t.Logf("%d ops in %d commits (largest batch %d)", total, len(sizes), slices.Max(sizes))
		evs := storeEvents(t, e.db, store.EventQuery{})
		if len(evs) != workers*each {
			t.Fatalf("%d events", len(evs))
		}
		for w := range workers {
			runEvs := storeEvents(t, e.db, store.EventQuery{RunID: fmt.Sprintf("r%d", w)})
			for i, ev := range runEvs {
				if ev.Seq != int64(i+1) {
					t.Fatalf("run r%d: seq %d at %d", w, ev.Seq, i)
				}
			}
		}
	})
}

func TestWriterFailingOpDoesNotFailBatchMates(t *testing.T) {
	storetest.Each(t, pg, testWriterFailingOpDoesNotFailBatchMates)
}

func testWriterFailingOpDoesNotFailBatchMates(t *testing.T, open storetest.Open) {
	cs := &countingStore{gate: make(chan struct{}), entered: make(chan struct{})}
	e := newEnv(t, envOpts{open: open, noHub: true, wrap: func(s store.Store) store.Store { cs.Store = s; return cs }})
	e.seed(t, "s1", "r1", "r2")
	ctx := context.Background()
	appendDirect(t, e.db, d("s1", "r2", event.RunDone))

	errBoom := errors.New("boom")
	block := e.w.Submit(func(store.Tx) error { return nil })
	<-cs.entered // hold the writer so the next ops share one batch
	ops := []struct {
		name string
		op   Op
		want error // nil: success
	}{
		{"ok 1", appendOp(d("s1", "r1", event.MessageDelta)), nil},
		{"writes then fails", func(tx store.Tx) error {
			if _, err := tx.AppendEvents(ctx, "", d("s1", "r1", event.ToolStarted)); err != nil {
				return err
			}
			if err := tx.InsertSession(ctx, store.Session{ID: "ghost", Workspace: "/ws", CreatedAt: t0, UpdatedAt: t0}); err != nil {
				return err
			}
			return errBoom
		}, errBoom},
		{"ok 2", appendOp(d("s1", "r1", event.MessageDelta)), nil},
		{"second terminal", appendOp(d("s1", "r1", event.MessageDelta), d("s1", "r2", event.RunDone)), store.ErrConflict},
		{"missing run", appendOp(d("s1", "nope", event.MessageDelta)), store.ErrNotFound},
		{"fence lost", func(tx store.Tx) error {
			_, err := tx.AppendEvents(ctx, "runner-2", d("s1", "r1", event.MessageDelta))
			return err
		}, store.ErrLeaseLost},
		{"ok 3", appendOp(d("s1", "r1", event.MessageDone)), nil},
	}
	chans := make([]<-chan error, len(ops))
	for i, o := range ops {
		chans[i] = e.w.Submit(o.op)
	}
	close(cs.gate)
	if err := <-block; err != nil {
		t.Fatal(err)
	}
	for i, o := range ops {
		err := <-chans[i]
		if (o.want == nil) != (err == nil) || (o.want != nil && !errors.Is(err, o.want)) {
			t.Fatalf("%s: err %v, want %v", o.name, err, o.want)
		}
	}
	if sizes := cs.batchSizes(); len(sizes) != 2 || sizes[1] != len(ops) {
		t.Fatalf("batch sizes %v: the ops did not share one batch", sizes)
	}
	evs := storeEvents(t, e.db, store.EventQuery{RunID: "r1"})
	var types []event.Type
	for i, ev := range evs {
		types = append(types, ev.Type)
		if ev.Seq != int64(i+1) {
			t.Fatalf("r1 seq %d at %d: a failed op left a gap", ev.Seq, i)
		}
	}
	if want := []event.Type{event.MessageDelta, event.MessageDelta, event.MessageDone}; !slices.Equal(types, want) {
		t.Fatalf("r1 events %v, want %v", types, want)
	}
	if _, err := e.db.GetSession(ctx, "ghost"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("failed op's session was written: %v", err)
	}
}

func TestWriterCommitFailureFailsBatchWithoutNotify(t *testing.T) {
	storetest.Each(t, pg, testWriterCommitFailureFailsBatchWithoutNotify)
}

func testWriterCommitFailureFailsBatchWithoutNotify(t *testing.T, open storetest.Open) {
	var notified atomic.Int32
	errDisk := errors.New("disk full")
	cs := &countingStore{fail: errDisk}
	e := newEnv(t, envOpts{open: open, noHub: true, notify: func() { notified.Add(1) },
		wrap: func(s store.Store) store.Store { cs.Store = s; return cs }})
	err := e.w.Do(context.Background(), func(store.Tx) error { return nil })
	if !errors.Is(err, errDisk) {
		t.Fatalf("err = %v, want %v", err, errDisk)
	}
	if n := notified.Load(); n != 0 {
		t.Fatalf("notify called %d times for a failed commit", n)
	}
}

func TestWriterNotifyAfterCommit(t *testing.T) { storetest.Each(t, pg, testWriterNotifyAfterCommit) }

func testWriterNotifyAfterCommit(t *testing.T, open storetest.Open) {
	var (
		appended   atomic.Int64 // highest event ID written by an op (writer goroutine)
		notifies   atomic.Int32
		violations atomic.Int32
	)
	var e *env
	var other store.Reader
	e = newEnv(t, envOpts{open: open, noHub: true, notify: func() {
		notifies.Add(1)
		// Everything the batch wrote must already be visible to a reader
		// on another connection (another process, even).
		last, err := other.LastEventID(context.Background())
		if err != nil || last < appended.Load() {
			violations.Add(1)
		}
	}})
	other = e.another()
	e.seed(t, "s1", "r1")
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 15 {
				err := e.w.Do(context.Background(), func(tx store.Tx) error {
					evs, err := tx.AppendEvents(context.Background(), "", d("s1", "r1", event.MessageDelta))
					if err == nil {
						appended.Store(evs[0].ID)
					}
					return err
				})
				if err != nil {
					t.Error(err)
					return
				}
				if notifies.Load() == 0 {
					t.Error("Do returned before notify")
				}
			}
		}()
	}
	wg.Wait()
	if v := violations.Load(); v != 0 {
		t.Fatalf("%d notifies ran before their events were visible", v)
	}
	if notifies.Load() == 0 {
		t.Fatal("notify never called")
	}
}

func TestWriterClose(t *testing.T) { storetest.Each(t, pg, testWriterClose) }

func testWriterClose(t *testing.T, open storetest.Open) {
	cs := &countingStore{gate: make(chan struct{}), entered: make(chan struct{})}
	e := newEnv(t, envOpts{open: open, noHub: true, wrap: func(s store.Store) store.Store { cs.Store = s; return cs }})
	e.seed(t, "s1", "r1")
	first := e.w.Submit(appendOp(d("s1", "r1", event.MessageDelta)))
	<-cs.entered
	const queued = 10
	chans := make([]<-chan error, queued)
	for i := range chans {
		chans[i] = e.w.Submit(appendOp(d("s1", "r1", event.MessageDelta)))
	}
	closed := make(chan struct{})
	go func() {
		e.w.Close()
		close(closed)
	}()
	// Wait until Close has taken effect: Submit then fails at once.
	for {
		if err, ok := tryRecv(e.w.Submit(func(store.Tx) error { return nil })); ok && errors.Is(err, ErrClosed) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case <-closed:
		t.Fatal("Close returned while a commit was in flight")
	default:
	}
	close(cs.gate)
	<-closed
	for i, ch := range append(chans, first) {
		if err := <-ch; err != nil {
			t.Fatalf("queued op %d: %v", i, err)
		}
	}
	if evs := storeEvents(t, e.db, store.EventQuery{RunID: "r1"}); len(evs) != queued+1 {
		t.Fatalf("%d events committed, want %d", len(evs), queued+1)
	}
	if err := <-e.w.Submit(appendOp(d("s1", "r1", event.MessageDelta))); !errors.Is(err, ErrClosed) {
		t.Fatalf("Submit after Close: %v", err)
	}
	if err := e.w.Do(context.Background(), appendOp(d("s1", "r1", event.MessageDelta))); !errors.Is(err, ErrClosed) {
		t.Fatalf("Do after Close: %v", err)
	}
	e.w.Close() // idempotent
}

func tryRecv(ch <-chan error) (error, bool) {
	select {
	case err := <-ch:
		return err, true
	default:
		return nil, false
	}
}

// nopStore commits instantly without a database, so the Close race below can
// be hammered many times.
type nopStore struct{ store.Store }

func (nopStore) WriteBatch(_ context.Context, fns []func(store.Tx) error) ([]error, error) {
	errs := make([]error, len(fns))
	for i, fn := range fns {
		errs[i] = fn(nil)
	}
	return errs, nil
}

// TestWriterCloseRacingSubmits: every Submit gets an answer, even one racing
// Close (before the fix such an Op could be enqueued after the loop's final
// drain and its caller waited forever).
func TestWriterCloseRacingSubmits(t *testing.T) {
	iters := 3000
	if testing.Short() {
		iters = 50
	}
	for range iters {
		w := NewWriter(nopStore{}, nil, discard)
		w.Start()
		var wg sync.WaitGroup
		lost := make(chan struct{}, 4)
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case err := <-w.Submit(func(store.Tx) error { return nil }):
						if errors.Is(err, ErrClosed) {
							return
						}
						if err != nil {
							t.Error(err)
							return
						}
					case <-time.After(5 * time.Second):
						lost <- struct{}{}
						return
					}
				}
			}()
		}
		time.Sleep(20 * time.Microsecond)
		w.Close()
		wg.Wait()
		if len(lost) > 0 {
			t.Fatal("a Submit racing Close never got its outcome")
		}
	}
}

// Appends queued together with the same fence share one body (one
// AppendEvents call); one that cannot be written (its run leased to
// another runner) fails alone, and the rest commit in submission order.
func TestWriterMergesAppends(t *testing.T) { storetest.Each(t, pg, testWriterMergesAppends) }

func testWriterMergesAppends(t *testing.T, open storetest.Open) {
	ctx := context.Background()
	cs := &countingStore{gate: make(chan struct{}), entered: make(chan struct{})}
	e := newEnv(t, envOpts{open: open, noHub: true, wrap: func(s store.Store) store.Store { cs.Store = s; return cs }})
	e.seed(t, "s1", "r1", "r2", "theirs")
	if err := e.db.Write(ctx, func(tx store.Tx) error {
		r, err := tx.GetRun(ctx, "theirs")
		if err != nil {
			return err
		}
		r.RunnerID = "runner-2"
		return tx.UpdateRun(ctx, r)
	}); err != nil {
		t.Fatal(err)
	}
	first := e.w.Submit(appendOp(d("s1", "r1", event.RunStarted)))
	<-cs.entered
	runs := []string{"r1", "r2", "theirs", "r1", "r2", "r1"}
	chans := make([]<-chan error, len(runs))
	for i, rid := range runs {
		dr := event.Draft{SessionID: "s1", RunID: rid, Type: event.MessageDelta, Payload: map[string]int{"i": i}}
		chans[i] = e.w.SubmitAppend("runner-1", func() event.Draft { return dr })
	}
	other := e.w.Submit(appendOp(d("s1", "r2", event.Usage))) // not an append: a body of its own
	close(cs.gate)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	for i, ch := range chans {
		err := <-ch
		if (runs[i] == "theirs") != errors.Is(err, store.ErrLeaseLost) || runs[i] != "theirs" && err != nil {
			t.Fatalf("append %d to %s: %v", i, runs[i], err)
		}
	}
	if err := <-other; err != nil {
		t.Fatal(err)
	}
	if got := cs.batchSizes(); !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("bodies per commit %v, want [1 2]: the appends merged into one body", got)
	}
	evs := storeEvents(t, e.db, store.EventQuery{SessionID: "s1"})
	var order []string
	for _, ev := range evs {
		if ev.Type == event.MessageDelta {
			var p struct{ I int }
			_ = json.Unmarshal(ev.Payload, &p)
			order = append(order, fmt.Sprintf("%s#%d", ev.RunID, p.I))
		}
		if ev.RunID == "theirs" {
			t.Fatalf("an event of a run leased to another runner was written: %+v", ev)
		}
	}
	if want := []string{"r1#0", "r2#1", "r1#3", "r2#4", "r1#5"}; !slices.Equal(order, want) {
		t.Fatalf("deltas %v, want %v", order, want)
	}
	last := map[string]int64{}
	for _, ev := range evs {
		if ev.Seq != last[ev.RunID]+1 {
			t.Fatalf("run %s: seq %d after %d", ev.RunID, ev.Seq, last[ev.RunID])
		}
		last[ev.RunID] = ev.Seq
	}
}
