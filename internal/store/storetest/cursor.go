package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// testTailersSeeEveryEvent is the journal cursor's promise: a reader that
// tails `events WHERE id > cursor` sees every event exactly once, in id
// order, while writers on other handles (other processes) append
// concurrently and hold their transactions open for a random while after
// the insert. A store whose ids are not in commit order fails it: a lower
// id that commits late is already behind a tailer's cursor.
func testTailersSeeEveryEvent(t *testing.T, open Open) {
	const writers, perWriter, tailers = 4, 30, 3
	ctx := context.Background()
	db, another := open(t)
	addSession(t, db, "s", t0)
	for w := range writers {
		addRun(t, db, store.Run{ID: fmt.Sprintf("r%d", w), SessionID: "s", Status: "running"})
	}
	total := writers * perWriter
	res := TailWhileAppending(ctx, t, another, writers, perWriter, tailers, 2*time.Millisecond)
	for i, seen := range res {
		if err := CheckTail(seen, writers, perWriter); err != nil {
			t.Fatalf("tailer %d: %v", i, err)
		}
	}
	if evs := allEvents(t, db, store.EventQuery{}); len(evs) != total {
		t.Fatalf("%d events stored, want %d", len(evs), total)
	}
}

// TailWhileAppending appends perWriter events to each of runs r0..r<n-1>
// (they must exist in session "s"), one transaction per event, from n
// writers on stores of their own, each transaction held open for up to
// maxDelay after its insert; meanwhile tailers readers, each on a store of
// its own, poll `events WHERE id > cursor` until the writers are done and
// a read after that finds nothing more. It returns what each tailer saw,
// in the order it saw it.
func TailWhileAppending(ctx context.Context, t testing.TB, another func() store.Store, n, perWriter, tailers int, maxDelay time.Duration) [][]event.Event {
	t.Helper()
	var writing, tailing sync.WaitGroup
	errc := make(chan error, n+tailers)
	done := make(chan struct{})
	for w := range n {
		st := another()
		writing.Go(func() {
			if err := AppendSlowly(ctx, st, fmt.Sprintf("r%d", w), perWriter, maxDelay); err != nil {
				errc <- err
			}
		})
	}
	seen := make([][]event.Event, tailers)
	for i := range tailers {
		st := another()
		tailing.Go(func() {
			var err error
			if seen[i], err = Tail(ctx, st, done); err != nil {
				errc <- fmt.Errorf("tailer %d: %w", i, err)
			}
		})
	}
	writing.Wait()
	close(done)
	tailing.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	return seen
}

// AppendSlowly appends n events to run runID of session "s", one
// transaction each, sleeping up to maxDelay (at random) inside each
// transaction after the insert, so commits come late and out of id order
// unless the store prevents it.
func AppendSlowly(ctx context.Context, st store.Store, runID string, n int, maxDelay time.Duration) error {
	for range n {
		err := st.Write(ctx, func(tx store.Tx) error {
			if _, err := tx.AppendEvents(ctx, "", event.Draft{SessionID: "s", RunID: runID, Type: event.MessageDelta}); err != nil {
				return err
			}
			time.Sleep(rand.N(maxDelay + 1))
			return nil
		})
		if err != nil {
			return fmt.Errorf("append to %s: %w", runID, err)
		}
	}
	return nil
}

// Tail reads `events WHERE id > cursor` in a loop, moving the cursor to the
// last event read, until done is closed and a read begun after that finds
// nothing: everything committed before done was closed has been read then.
func Tail(ctx context.Context, st store.Reader, done <-chan struct{}) ([]event.Event, error) {
	var out []event.Event
	var cursor int64
	for {
		finished := false
		select {
		case <-done:
			finished = true
		default:
		}
		evs, err := st.Events(ctx, store.EventQuery{AfterID: cursor, Limit: 100})
		if err != nil {
			return out, err
		}
		if len(evs) == 0 {
			if finished {
				return out, nil
			}
			time.Sleep(time.Millisecond)
			continue
		}
		out = append(out, evs...)
		cursor = evs[len(evs)-1].ID
	}
}

// CheckTail checks what a tailer saw of n runs r0..r<n-1> with perRun
// events each: ids strictly ascending, and every run's seqs 1..perRun
// exactly once and in order. A skipped event shows as a gap in a run's
// seqs.
func CheckTail(seen []event.Event, n, perRun int) error {
	var errs []error
	next := map[string]int64{}
	for i, e := range seen {
		if i > 0 && e.ID <= seen[i-1].ID {
			errs = append(errs, fmt.Errorf("id %d after %d", e.ID, seen[i-1].ID))
		}
		if e.Seq != next[e.RunID]+1 {
			errs = append(errs, fmt.Errorf("run %s: seq %d (id %d) after seq %d: an event was skipped or repeated", e.RunID, e.Seq, e.ID, next[e.RunID]))
		}
		next[e.RunID] = e.Seq
		if len(errs) > 5 {
			break
		}
	}
	for w := range n {
		if r := fmt.Sprintf("r%d", w); next[r] != int64(perRun) {
			errs = append(errs, fmt.Errorf("run %s: last seq seen %d, want %d", r, next[r], perRun))
		}
	}
	return errors.Join(errs...)
}
