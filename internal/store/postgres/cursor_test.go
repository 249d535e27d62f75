package postgres_test

// The journal cursor on PostgreSQL: identity values are handed out in the
// order transactions ask, not the order they commit, so without the append
// lock a tailer reading `events WHERE id > cursor` passes an id whose
// transaction commits late, and never sees it.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/postgres"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

// appenderEnv makes the test binary an appender process (see TestMain):
// "url|run|count|max delay|how", how being "write" (a transaction held
// open after each append, storetest.AppendSlowly) or "each" (AppendEach
// calls, the journal writer's path for streamed appends, one implicit
// transaction each).
const appenderEnv = "CADUCEUS_PGTEST_APPENDER"

// runAppender is an appender process's whole life.
func runAppender(spec string) int {
	parts := strings.Split(spec, "|")
	if len(parts) != 5 {
		fmt.Fprintln(os.Stderr, "bad appender spec:", spec)
		return 2
	}
	n, _ := strconv.Atoi(parts[2])
	delay, _ := time.ParseDuration(parts[3])
	ctx := context.Background()
	db, err := postgres.Open(ctx, parts[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer db.Close()
	if parts[4] == "each" {
		err = appendEachQuickly(ctx, db, parts[1], n, delay)
	} else {
		err = storetest.AppendSlowly(ctx, db, parts[1], n, delay)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// appendEachQuickly appends n events to run runID of session "s" with
// AppendEach, one or two at a time, pausing up to maxDelay between calls.
func appendEachQuickly(ctx context.Context, db *postgres.DB, runID string, n int, maxDelay time.Duration) error {
	for n > 0 {
		k := min(n, 1+rand.IntN(2))
		apps := make([]store.Append, k)
		for i := range apps {
			apps[i].Draft = event.Draft{SessionID: "s", RunID: runID, Type: event.MessageDelta}
		}
		errs, err := db.AppendEach(ctx, apps)
		if err == nil {
			err = errors.Join(errs...)
		}
		if err != nil {
			return fmt.Errorf("append to %s: %w", runID, err)
		}
		n -= k
		time.Sleep(rand.N(maxDelay + 1))
	}
	return nil
}

func seedRuns(t *testing.T, db store.Store, n int) {
	t.Helper()
	ctx := context.Background()
	err := db.Write(ctx, func(tx store.Tx) error {
		if err := tx.InsertSession(ctx, store.Session{ID: "s", Workspace: "/ws"}); err != nil {
			return err
		}
		for i := range n {
			if err := tx.InsertRun(ctx, store.Run{ID: fmt.Sprintf("r%d", i), SessionID: "s", Status: run.Running, Input: "x"}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Several processes append concurrently, half of them holding every
// transaction open for a random while after its insert, the others with
// AppendEach (one implicit transaction per call, the lock taken inside its
// statement), while several subscribers tail the journal by cursor: every
// subscriber sees every event exactly once, in cursor order. Without the
// append lock this fails (checked by hand: with beginWrite reduced to
// "BEGIN", it and the suite's TailersSeeEveryEvent reported skipped seqs
// in 3 runs of 3; with only AppendEach's lock left out, 3 runs of 3 too);
// TestLateCommitWithoutAppendLock shows the failure deterministically.
func TestConcurrentAppenderProcessesTailers(t *testing.T) {
	const procs, perProc, tailers = 4, 60, 3
	const maxDelay = 4 * time.Millisecond
	ctx := context.Background()
	url := pg.Database(t)
	db := openURL(t, url)
	seedRuns(t, db, procs)

	done := make(chan struct{})
	type result struct {
		seen []event.Event
		err  error
	}
	results := make(chan result, tailers)
	for range tailers {
		st := openURL(t, url)
		go func() {
			seen, err := storetest.Tail(ctx, st, done)
			results <- result{seen, err}
		}()
	}
	var cmds []*exec.Cmd
	for i := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		how := "write"
		if i%2 == 1 {
			how = "each"
		}
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|r%d|%d|%s|%s", appenderEnv, url, i, perProc, maxDelay, how))
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("appender %d: %v", i, err)
		}
	}
	close(done)
	for i := range tailers {
		r := <-results
		if r.err != nil {
			t.Fatalf("tailer %d: %v", i, r.err)
		}
		if err := storetest.CheckTail(r.seen, procs, perProc); err != nil {
			t.Fatalf("tailer %d: %v", i, err)
		}
	}
	if t.Failed() {
		return
	}
	if last, err := db.LastEventID(ctx); err != nil || last < procs*perProc {
		t.Fatalf("last event id %d (%v)", last, err)
	}
}

// appendHeld appends one event to run of session "s" on st and keeps the
// transaction open until release is closed; it reports the event once
// the append returned (not yet committed) and again after the commit.
func appendHeld(ctx context.Context, st store.Store, runID string, release <-chan struct{}) (appended <-chan event.Event, committed <-chan error) {
	a, c := make(chan event.Event, 1), make(chan error, 1)
	go func() {
		c <- st.Write(ctx, func(tx store.Tx) error {
			evs, err := tx.AppendEvents(ctx, "", event.Draft{SessionID: "s", RunID: runID, Type: event.MessageDelta})
			if err != nil {
				return err
			}
			a <- evs[0]
			<-release
			return nil
		})
	}()
	return a, c
}

// appendEach appends one event to run of session "s" with AppendEach (the
// journal writer's path for streamed appends: one implicit transaction),
// and reports the event and the outcome once it committed.
func appendEach(ctx context.Context, st *postgres.DB, runID string) (appended <-chan event.Event, committed <-chan error) {
	a, c := make(chan event.Event, 1), make(chan error, 1)
	go func() {
		errs, err := st.AppendEach(ctx, []store.Append{{Draft: event.Draft{SessionID: "s", RunID: runID, Type: event.MessageDelta}}})
		if err == nil {
			err = errs[0]
		}
		if err == nil {
			var evs []event.Event
			evs, err = st.Events(ctx, store.EventQuery{RunID: runID})
			if err == nil && len(evs) != 1 {
				err = fmt.Errorf("run %s has %d events", runID, len(evs))
			}
			if err == nil {
				a <- evs[0]
			}
		}
		c <- err
	}()
	return a, c
}

// A transaction that appended first but commits last: with the append
// lock the second appender waits, so the tailer sees both, in order;
// without it the second commits a higher id first, the tailer moves past
// the first's lower id, and never sees it. The second appends as a Write
// does, or as AppendEach does (the lock taken inside its statement).
func TestLateCommitWithoutAppendLock(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name     string
		open     func(ctx context.Context, url string) (*postgres.DB, error)
		each     bool
		wantSkip bool
	}{
		{"with the append lock", postgres.Open, false, false},
		{"with the append lock, AppendEach", postgres.Open, true, false},
		{"without it", postgres.OpenWithoutAppendLock, false, true},
		{"without it, AppendEach", postgres.OpenWithoutAppendLock, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			url := pg.Database(t)
			var sts [2]*postgres.DB
			for i := range sts {
				st, err := tc.open(ctx, url)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
				sts[i] = st
			}
			seedRuns(t, sts[0], 2)
			reader := openURL(t, url)

			releaseA := make(chan struct{})
			appendedA, committedA := appendHeld(ctx, sts[0], "r0", releaseA)
			a := <-appendedA
			var appendedB <-chan event.Event
			var committedB <-chan error
			if tc.each {
				appendedB, committedB = appendEach(ctx, sts[1], "r1")
			} else {
				released := make(chan struct{})
				close(released)
				appendedB, committedB = appendHeld(ctx, sts[1], "r1", released)
			}

			// With the lock B waits behind A; without it B commits now.
			var cursor int64
			var seen []event.Event
			read := func() {
				evs, err := reader.Events(ctx, store.EventQuery{AfterID: cursor})
				if err != nil {
					t.Fatal(err)
				}
				if len(evs) > 0 {
					cursor = evs[len(evs)-1].ID
				}
				seen = append(seen, evs...)
			}
			wait := 300 * time.Millisecond // B must not commit in this while
			if tc.wantSkip {
				wait = 10 * time.Second // B commits at once
			}
			bDone := false
			select {
			case err := <-committedB:
				if err != nil {
					t.Fatal(err)
				}
				bDone = true
				if b := <-appendedB; b.ID <= a.ID {
					t.Fatalf("B's id %d not above A's %d", b.ID, a.ID)
				}
			case <-time.After(wait):
			}
			if bDone != tc.wantSkip {
				t.Fatalf("B committed while A held its transaction open: %v, want %v", bDone, tc.wantSkip)
			}
			read() // B's event if it committed; nothing if B waits
			close(releaseA)
			if err := <-committedA; err != nil {
				t.Fatal(err)
			}
			if !bDone {
				if err := <-committedB; err != nil {
					t.Fatal(err)
				}
			}
			read()
			skipped := len(seen) != 2
			if skipped != tc.wantSkip {
				t.Fatalf("tailer saw %d of 2 events (%v); skip wanted: %v", len(seen), seen, tc.wantSkip)
			}
			if !skipped && (seen[0].RunID != "r0" || seen[1].RunID != "r1") {
				t.Fatalf("tailer saw %v, want A's event then B's", seen)
			}
		})
	}
}
