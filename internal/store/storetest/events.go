package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

func testAppendEventsSeqAndIDs(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	addSessionRun(t, db, "s1", "r1")
	addRun(t, db, store.Run{ID: "r2", SessionID: "s1", Status: run.Queued})
	addSessionRun(t, db, "s2", "r3")

	calls := [][]event.Draft{
		{draft("s1", "r1", event.RunQueued, event.RunQueuedPayload{Input: "hi"})},
		{draft("s1", "r1", event.MessageUser, nil), draft("s1", "r1", event.MessageDelta, nil)},
		// Several runs, interleaved, in one call.
		{
			draft("s1", "r2", event.RunQueued, nil),
			draft("s1", "r1", event.MessageDelta, json.RawMessage(`{"delta":"a"}`)),
			draft("s2", "r3", event.RunStarted, nil),
			draft("s1", "r2", event.MessageUser, nil),
			draft("s1", "r1", event.MessageDone, nil),
		},
		{draft("s2", "r3", event.RunDone, event.RunDonePayload{Status: "completed"})},
		{draft("s1", "r1", event.RunDone, nil), draft("s1", "r2", event.MessageDelta, nil)},
	}
	wantSeq := map[string]int64{}
	var prevID int64
	var returned []event.Event
	for i, drafts := range calls {
		out := appendEvents(t, db, "", drafts...)
		if len(out) != len(drafts) {
			t.Fatalf("call %d: %d events for %d drafts", i, len(out), len(drafts))
		}
		for j, e := range out {
			d := drafts[j]
			wantSeq[d.RunID]++
			if e.ID <= prevID {
				t.Fatalf("call %d draft %d: id %d not above %d", i, j, e.ID, prevID)
			}
			prevID = e.ID
			if e.RunID != d.RunID || e.SessionID != d.SessionID || e.Type != d.Type {
				t.Fatalf("call %d draft %d: got %+v for draft %+v", i, j, e, d)
			}
			if e.Seq != wantSeq[d.RunID] {
				t.Fatalf("call %d draft %d: seq %d, want %d", i, j, e.Seq, wantSeq[d.RunID])
			}
			if e.Terminal != (d.Type == event.RunDone) {
				t.Fatalf("call %d draft %d: terminal = %v", i, j, e.Terminal)
			}
		}
		returned = append(returned, out...)
	}

	stored := allEvents(t, db, store.EventQuery{})
	if len(stored) != len(returned) {
		t.Fatalf("stored %d events, returned %d", len(stored), len(returned))
	}
	for i := range stored {
		s, r := stored[i], returned[i]
		if s.ID != r.ID || s.Seq != r.Seq || s.RunID != r.RunID || s.SessionID != r.SessionID ||
			s.Type != r.Type || s.Terminal != r.Terminal || string(s.Payload) != string(r.Payload) ||
			s.TS.UnixMilli() != r.TS.UnixMilli() {
			t.Fatalf("event %d: stored %+v, returned %+v", i, s, r)
		}
	}
	last := checkSeqs(t, stored)
	for runID, n := range wantSeq {
		if last[runID] != n {
			t.Fatalf("run %s: last seq %d, want %d", runID, last[runID], n)
		}
		if r := getRun(t, db, runID); r.LastSeq != n {
			t.Fatalf("run %s: runs.last_seq = %d, want %d", runID, r.LastSeq, n)
		}
		cur, err := db.RunCursor(ctx, runID)
		if err != nil || cur != lastIDOf(stored, runID) {
			t.Fatalf("run %s: cursor %d (%v), want %d", runID, cur, err, lastIDOf(stored, runID))
		}
	}
	if got := string(stored[1].Payload); got != "{}" {
		t.Fatalf("nil payload stored as %q, want {}", got)
	}
	if got := string(stored[4].Payload); got != `{"delta":"a"}` {
		t.Fatalf("raw payload stored as %q", got)
	}
	if last, err := db.LastEventID(ctx); err != nil || last != prevID {
		t.Fatalf("LastEventID = %d, %v; want %d", last, err, prevID)
	}
	if out := appendEvents(t, db, ""); out != nil {
		t.Fatalf("empty append returned %v", out)
	}
}

func lastIDOf(evs []event.Event, runID string) int64 {
	var id int64
	for _, e := range evs {
		if e.RunID == runID {
			id = e.ID
		}
	}
	return id
}

// TestAppendEventsAllOrNothing checks each failure of AppendEvents both when
// the body fails (the transaction rolls back) and when the body swallows the
// error and commits: nothing of the failed call may be written, including the
// seq reservation, or the run's seqs get a gap.
func testAppendEventsAllOrNothing(t *testing.T, open Open) {
	ctx := context.Background()
	tests := []struct {
		name    string
		fence   string
		drafts  func() []event.Draft
		wantErr error // nil: any error
	}{
		{"second terminal in a later call", "", func() []event.Draft {
			return []event.Draft{draft("s1", "r1", event.MessageDelta, nil), draft("s1", "r1", event.RunDone, nil)}
		}, store.ErrConflict},
		{"two terminals in one call", "", func() []event.Draft {
			return []event.Draft{draft("s1", "r2", event.RunDone, nil), draft("s1", "r2", event.RunDone, nil)}
		}, store.ErrConflict},
		{"terminal conflict on the second run of a call", "", func() []event.Draft {
			return []event.Draft{draft("s1", "r2", event.MessageDelta, nil), draft("s1", "r1", event.RunDone, nil)}
		}, store.ErrConflict},
		{"fence mismatch", "runner-2", func() []event.Draft {
			return []event.Draft{draft("s1", "r1", event.MessageDelta, nil)}
		}, store.ErrLeaseLost},
		{"fence holds on first run only", "runner-1", func() []event.Draft {
			return []event.Draft{draft("s1", "r2", event.MessageDelta, nil), draft("s1", "r3", event.MessageDelta, nil)}
		}, store.ErrLeaseLost},
		{"missing run", "", func() []event.Draft {
			return []event.Draft{draft("s1", "r2", event.MessageDelta, nil), draft("s1", "nope", event.MessageDelta, nil)}
		}, store.ErrNotFound},
		{"missing run with fence", "runner-1", func() []event.Draft {
			return []event.Draft{draft("s1", "nope", event.MessageDelta, nil)}
		}, store.ErrNotFound},
		{"empty run id", "", func() []event.Draft {
			return []event.Draft{draft("s1", "r2", event.MessageDelta, nil), draft("s1", "", event.MessageDelta, nil)}
		}, store.ErrConflict},
		{"invalid raw payload", "", func() []event.Draft {
			return []event.Draft{draft("s1", "r2", event.MessageDelta, nil), draft("s1", "r2", event.MessageDelta, json.RawMessage(`{bad`))}
		}, nil},
		{"unmarshalable payload", "", func() []event.Draft {
			return []event.Draft{draft("s1", "r2", event.MessageDelta, nil), draft("s1", "r2", event.MessageDelta, func() {})}
		}, nil},
	}
	for _, tc := range tests {
		for _, swallow := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/swallow=%v", tc.name, swallow), func(t *testing.T) {
				db := fresh(t, open)
				addSessionRun(t, db, "s1", "r1") // leased to runner-1
				addRun(t, db, store.Run{ID: "r2", SessionID: "s1", Status: run.Running, RunnerID: "runner-1"})
				addRun(t, db, store.Run{ID: "r3", SessionID: "s1", Status: run.Running, RunnerID: "runner-9"})
				appendEvents(t, db, "", draft("s1", "r1", event.MessageUser, nil), draft("s1", "r1", event.RunDone, nil),
					draft("s1", "r2", event.MessageUser, nil), draft("s1", "r3", event.MessageUser, nil))
				before := allEvents(t, db, store.EventQuery{})
				seqBefore := map[string]int64{}
				for _, id := range []string{"r1", "r2", "r3"} {
					seqBefore[id] = getRun(t, db, id).LastSeq
				}

				var appendErr error
				err := db.Write(ctx, func(tx store.Tx) error {
					out, err := tx.AppendEvents(ctx, tc.fence, tc.drafts()...)
					appendErr = err
					if err == nil {
						return fmt.Errorf("append succeeded: %+v", out)
					}
					if !swallow {
						return err
					}
					// The caller carries on in the same transaction: its
					// view must show nothing of the failed call.
					for id, want := range seqBefore {
						if r, gerr := tx.GetRun(ctx, id); gerr != nil || r.LastSeq != want {
							return fmt.Errorf("in tx: run %s last_seq %d (%v), want %d", id, r.LastSeq, gerr, want)
						}
					}
					return nil
				})
				if tc.wantErr != nil && !errors.Is(appendErr, tc.wantErr) {
					t.Fatalf("append err = %v, want %v", appendErr, tc.wantErr)
				}
				if appendErr == nil {
					t.Fatalf("append did not fail: %v", err)
				}
				if swallow && err != nil {
					t.Fatal(err)
				}
				if !swallow && !errors.Is(err, appendErr) {
					t.Fatalf("write err = %v, want the append error", err)
				}
				after := allEvents(t, db, store.EventQuery{})
				if !slices.Equal(ids(after), ids(before)) {
					t.Fatalf("events changed: %v -> %v", ids(before), ids(after))
				}
				for id, want := range seqBefore {
					if got := getRun(t, db, id).LastSeq; got != want {
						t.Fatalf("run %s: last_seq %d, want %d", id, got, want)
					}
				}
				// The next successful append continues without a gap.
				appendEvents(t, db, "", draft("s1", "r1", event.Diagnostic, nil), draft("s1", "r2", event.MessageDelta, nil),
					draft("s1", "r3", event.MessageDelta, nil))
				checkSeqs(t, allEvents(t, db, store.EventQuery{}))
			})
		}
	}
}

func testAppendEventsFence(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	addSessionRun(t, db, "s1", "r1") // runner-1
	if out := appendEvents(t, db, "runner-1", draft("s1", "r1", event.MessageDelta, nil)); out[0].Seq != 1 {
		t.Fatalf("seq %d", out[0].Seq)
	}
	// The run is re-leased to runner-2: runner-1's fence no longer holds.
	r := getRun(t, db, "r1")
	r.RunnerID = "runner-2"
	write(t, db, func(tx store.Tx) error { return tx.UpdateRun(ctx, r) })
	err := db.Write(ctx, func(tx store.Tx) error {
		_, err := tx.AppendEvents(ctx, "runner-1", draft("s1", "r1", event.MessageDelta, nil))
		return err
	})
	if !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("err = %v, want ErrLeaseLost", err)
	}
	if out := appendEvents(t, db, "runner-2", draft("s1", "r1", event.MessageDelta, nil)); out[0].Seq != 2 {
		t.Fatalf("seq %d, want 2", out[0].Seq)
	}
	// No fence: always allowed.
	if out := appendEvents(t, db, "", draft("s1", "r1", event.MessageDelta, nil)); out[0].Seq != 3 {
		t.Fatalf("seq %d, want 3", out[0].Seq)
	}
}

func testEventsQuery(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	addSessionRun(t, db, "s1", "r1")
	addRun(t, db, store.Run{ID: "r2", SessionID: "s1"})
	addSessionRun(t, db, "s2", "r3")
	types := []event.Type{event.MessageDelta, event.ToolStarted, event.Usage}
	var all []event.Event
	for i := range 30 {
		var d event.Draft
		switch i % 3 {
		case 0:
			d = draft("s1", "r1", types[i%len(types)], nil)
		case 1:
			d = draft("s1", "r2", types[(i/3)%len(types)], nil)
		default:
			d = draft("s2", "r3", types[(i/2)%len(types)], nil)
		}
		all = append(all, appendEvents(t, db, "", d)...)
	}
	mid := all[14].ID

	filter := func(keep func(e event.Event) bool, limit int) []int64 {
		var out []int64
		for _, e := range all {
			if keep(e) && (limit == 0 || len(out) < limit) {
				out = append(out, e.ID)
			}
		}
		return out
	}
	tests := []struct {
		name string
		q    store.EventQuery
		want []int64
	}{
		{"all", store.EventQuery{}, ids(all)},
		{"session", store.EventQuery{SessionID: "s1"}, filter(func(e event.Event) bool { return e.SessionID == "s1" }, 0)},
		{"run", store.EventQuery{RunID: "r2"}, filter(func(e event.Event) bool { return e.RunID == "r2" }, 0)},
		{"session and run", store.EventQuery{SessionID: "s1", RunID: "r3"}, nil},
		{"types", store.EventQuery{Types: []event.Type{event.ToolStarted, event.Usage}},
			filter(func(e event.Event) bool { return e.Type == event.ToolStarted || e.Type == event.Usage }, 0)},
		{"not types", store.EventQuery{NotTypes: []event.Type{event.MessageDelta}},
			filter(func(e event.Event) bool { return e.Type != event.MessageDelta }, 0)},
		{"types and not types", store.EventQuery{Types: []event.Type{event.ToolStarted, event.Usage}, NotTypes: []event.Type{event.Usage}},
			filter(func(e event.Event) bool { return e.Type == event.ToolStarted }, 0)},
		{"after", store.EventQuery{AfterID: mid}, filter(func(e event.Event) bool { return e.ID > mid }, 0)},
		{"limit", store.EventQuery{Limit: 4}, ids(all[:4])},
		{"after and limit", store.EventQuery{AfterID: mid, Limit: 3}, ids(all[15:18])},
		{"session after types limit", store.EventQuery{SessionID: "s1", AfterID: mid, Types: []event.Type{event.MessageDelta, event.Usage}, Limit: 2},
			filter(func(e event.Event) bool {
				return e.SessionID == "s1" && e.ID > mid && (e.Type == event.MessageDelta || e.Type == event.Usage)
			}, 2)},
		{"after last", store.EventQuery{AfterID: all[len(all)-1].ID}, nil},
		{"unknown run", store.EventQuery{RunID: "nope"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := db.Events(ctx, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids(got), tc.want) {
				t.Fatalf("got %v, want %v", ids(got), tc.want)
			}
			// The same query inside a transaction gives the same answer.
			write(t, db, func(tx store.Tx) error {
				got, err := tx.Events(ctx, tc.q)
				if err != nil {
					return err
				}
				if !slices.Equal(ids(got), tc.want) {
					return fmt.Errorf("in tx: got %v, want %v", ids(got), tc.want)
				}
				return nil
			})
		})
	}
}

func testDeleteSessionRemovesItsData(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	for _, s := range []string{"s1", "s2"} {
		addSessionRun(t, db, s, "r-"+s)
		addRun(t, db, store.Run{ID: "q-" + s, SessionID: s})
		appendEvents(t, db, "", draft(s, "r-"+s, event.MessageUser, nil), draft(s, "q-"+s, event.RunQueued, nil))
		write(t, db, func(tx store.Tx) error {
			if err := tx.InsertRequest(ctx, store.Request{ID: "req-" + s, RunID: "r-" + s, SessionID: s, Kind: store.KindApproval,
				Status: store.RequestPending, Prompt: json.RawMessage(`{}`), CreatedAt: t0}); err != nil {
				return err
			}
			return tx.InsertControl(ctx, store.Control{ID: "ctl-" + s, RunID: "r-" + s, Kind: "cancel", CreatedAt: t0})
		})
	}
	lastBefore, _ := db.LastEventID(ctx)

	write(t, db, func(tx store.Tx) error { return tx.DeleteSession(ctx, "s1") })

	if _, err := db.GetSession(ctx, "s1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("session: %v", err)
	}
	for _, id := range []string{"r-s1", "q-s1"} {
		if _, err := db.GetRun(ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("run %s: %v", id, err)
		}
	}
	if runs, _ := db.SessionRuns(ctx, "s1"); len(runs) != 0 {
		t.Fatalf("runs left: %v", runs)
	}
	if evs := allEvents(t, db, store.EventQuery{SessionID: "s1"}); len(evs) != 0 {
		t.Fatalf("events left: %v", ids(evs))
	}
	if _, err := db.GetRequest(ctx, "req-s1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("request: %v", err)
	}
	write(t, db, func(tx store.Tx) error {
		if cs, err := tx.ListControls(ctx, "r-s1"); err != nil || len(cs) != 0 {
			return fmt.Errorf("controls left: %v %v", cs, err)
		}
		return nil
	})

	// The other session is untouched.
	if evs := allEvents(t, db, store.EventQuery{SessionID: "s2"}); len(evs) != 2 {
		t.Fatalf("s2 events: %v", ids(evs))
	}
	if runs, _ := db.SessionRuns(ctx, "s2"); len(runs) != 2 {
		t.Fatalf("s2 runs: %d", len(runs))
	}
	if _, err := db.GetRequest(ctx, "req-s2"); err != nil {
		t.Fatal(err)
	}

	// Event IDs are cursors: never reused, even though the newest events
	// were just deleted.
	write(t, db, func(tx store.Tx) error { return tx.DeleteSession(ctx, "s2") })
	addSessionRun(t, db, "s3", "r-s3")
	if out := appendEvents(t, db, "", draft("s3", "r-s3", event.MessageUser, nil)); out[0].ID <= lastBefore {
		t.Fatalf("event id %d reused (last was %d)", out[0].ID, lastBefore)
	}
}

func testWriteBatchIsolatesFailingBodies(t *testing.T, open Open) {
	ctx := context.Background()
	errBoom := errors.New("boom")
	insert := func(id string) func(store.Tx) error {
		return func(tx store.Tx) error {
			return tx.InsertSession(ctx, store.Session{ID: id, Workspace: "/ws", CreatedAt: t0, UpdatedAt: t0})
		}
	}
	insertThenFail := func(id string, fail error) func(store.Tx) error {
		return func(tx store.Tx) error {
			if err := insert(id)(tx); err != nil {
				return err
			}
			if _, err := tx.AppendEvents(ctx, "", draft("base", "base-run", event.MessageDelta, nil)); err != nil {
				return err
			}
			return fail
		}
	}
	tests := []struct {
		name     string
		fns      []func(store.Tx) error
		wantErrs []bool
		exist    []string
		missing  []string
		events   int // appended by the batch
	}{
		{"middle fails", []func(store.Tx) error{insert("a"), insertThenFail("b", errBoom), insert("c")},
			[]bool{false, true, false}, []string{"a", "c"}, []string{"b"}, 0},
		{"constraint failure", []func(store.Tx) error{insert("a"), insert("a"), insert("c")},
			[]bool{false, true, false}, []string{"a", "c"}, nil, 0},
		{"first fails", []func(store.Tx) error{insertThenFail("a", errBoom), insertThenFail("b", nil)},
			[]bool{true, false}, []string{"b"}, []string{"a"}, 1},
		{"all fail", []func(store.Tx) error{insertThenFail("a", errBoom), insertThenFail("b", errBoom)},
			[]bool{true, true}, nil, []string{"a", "b"}, 0},
		{"single body fails", []func(store.Tx) error{insertThenFail("a", errBoom)},
			[]bool{true}, nil, []string{"a"}, 0},
		{"single body ok", []func(store.Tx) error{insertThenFail("a", nil)},
			[]bool{false}, []string{"a"}, nil, 1},
		{"later body sees earlier writes", []func(store.Tx) error{insert("a"), func(tx store.Tx) error {
			_, err := tx.GetSession(ctx, "a")
			return err
		}}, []bool{false, false}, []string{"a"}, nil, 0},
		{"later body does not see a rolled back body", []func(store.Tx) error{insertThenFail("a", errBoom), func(tx store.Tx) error {
			if _, err := tx.GetSession(ctx, "a"); !errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("saw rolled back session: %v", err)
			}
			return nil
		}}, []bool{true, false}, nil, []string{"a"}, 0},
		{"empty batch", nil, []bool{}, nil, nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := fresh(t, open)
			addSessionRun(t, db, "base", "base-run")
			errs, err := db.WriteBatch(ctx, tc.fns)
			if err != nil {
				t.Fatalf("batch: %v", err)
			}
			if len(errs) != len(tc.wantErrs) {
				t.Fatalf("%d errors for %d bodies", len(errs), len(tc.wantErrs))
			}
			for i, want := range tc.wantErrs {
				if (errs[i] != nil) != want {
					t.Fatalf("body %d: err %v, want failure=%v", i, errs[i], want)
				}
			}
			for _, id := range tc.exist {
				if _, err := db.GetSession(ctx, id); err != nil {
					t.Fatalf("session %s: %v", id, err)
				}
			}
			for _, id := range tc.missing {
				if _, err := db.GetSession(ctx, id); !errors.Is(err, store.ErrNotFound) {
					t.Fatalf("session %s of a failed body: %v", id, err)
				}
			}
			evs := allEvents(t, db, store.EventQuery{RunID: "base-run"})
			if len(evs) != tc.events || getRun(t, db, "base-run").LastSeq != int64(tc.events) {
				t.Fatalf("%d events, last_seq %d; want %d", len(evs), getRun(t, db, "base-run").LastSeq, tc.events)
			}
			checkSeqs(t, evs)
		})
	}
}

// TestTwoHandlesAppendGapFree simulates two processes on one database file:
// each *DB has its own writer connection, and both append to the same run.
func testTwoHandlesAppendGapFree(t *testing.T, open Open) {
	ctx := context.Background()
	db1, another := open(t)
	db2 := another()
	addSessionRun(t, db1, "s1", "r1")
	addRun(t, db1, store.Run{ID: "r2", SessionID: "s1"})

	const workers, appends = 3, 15
	var wg sync.WaitGroup
	errc := make(chan error, 2*workers)
	for _, db := range []store.Store{db1, db2} {
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range appends {
					drafts := []event.Draft{draft("s1", "r1", event.MessageDelta, nil)}
					if (w+i)%3 == 0 { // some calls span two runs and several events
						drafts = append(drafts, draft("s1", "r2", event.MessageDelta, nil), draft("s1", "r1", event.MessageDelta, nil))
					}
					if err := db.Write(ctx, func(tx store.Tx) error {
						_, err := tx.AppendEvents(ctx, "", drafts...)
						return err
					}); err != nil {
						errc <- err
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	for _, db := range []store.Store{db1, db2} {
		evs := allEvents(t, db, store.EventQuery{})
		last := checkSeqs(t, evs)
		for _, id := range []string{"r1", "r2"} {
			if r := getRun(t, db, id); r.LastSeq != last[id] {
				t.Fatalf("run %s: last_seq %d, highest seq %d", id, r.LastSeq, last[id])
			}
		}
		if last["r1"] < 2*workers*appends {
			t.Fatalf("r1 has %d events, want at least %d", last["r1"], 2*workers*appends)
		}
	}
}

// A page bounded by bytes ends with the event that reaches the budget, so
// it always holds one event, however large; rows and bytes bound a page
// together, whichever ends it first; and paging by bytes reads every event
// once.
func testEventsQueryMaxBytes(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	addSessionRun(t, db, "s1", "r1")
	sized := func(n int) json.RawMessage { return json.RawMessage(`"` + strings.Repeat("x", n-2) + `"`) }
	var all []event.Event
	for range 8 {
		all = append(all, appendEvents(t, db, "", draft("s1", "r1", event.MessageDelta, sized(100)))...)
	}
	all = append(all, appendEvents(t, db, "", draft("s1", "r1", event.ToolDone, sized(5000)))...)
	all = append(all, appendEvents(t, db, "", draft("s1", "r1", event.MessageDelta, sized(100)))...)

	tests := []struct {
		name string
		q    store.EventQuery
		want []int64
	}{
		{"no budget", store.EventQuery{RunID: "r1"}, ids(all)},
		{"budget reached inside an event", store.EventQuery{RunID: "r1", MaxBytes: 250}, ids(all[:3])},
		{"budget reached exactly", store.EventQuery{RunID: "r1", MaxBytes: 300}, ids(all[:3])},
		{"one byte over", store.EventQuery{RunID: "r1", MaxBytes: 301}, ids(all[:4])},
		{"tiny budget: one event", store.EventQuery{RunID: "r1", MaxBytes: 1}, ids(all[:1])},
		{"rows end it first", store.EventQuery{RunID: "r1", MaxBytes: 1000, Limit: 2}, ids(all[:2])},
		{"bytes end it first", store.EventQuery{RunID: "r1", MaxBytes: 200, Limit: 5}, ids(all[:2])},
		{"an event over the budget comes alone", store.EventQuery{RunID: "r1", AfterID: all[7].ID, MaxBytes: 1000}, ids(all[8:9])},
		{"after it", store.EventQuery{RunID: "r1", AfterID: all[8].ID, MaxBytes: 1000}, ids(all[9:])},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := db.Events(ctx, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids(got), tc.want) {
				t.Fatalf("got %v, want %v", ids(got), tc.want)
			}
		})
	}

	var paged []int64
	for after := int64(0); ; {
		page, err := db.Events(ctx, store.EventQuery{RunID: "r1", AfterID: after, MaxBytes: 350})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		paged = append(paged, ids(page)...)
		after = page[len(page)-1].ID
	}
	if !slices.Equal(paged, ids(all)) {
		t.Fatalf("paging by bytes read %v, want %v", paged, ids(all))
	}
}
