package storetest

// Session lifecycle events (session.created/updated/deleted) belong to no
// run: run_id "", and a gap-free seq of their own per session.

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
)

func sessionDraft(sid string, typ event.Type) event.Draft {
	return event.Draft{SessionID: sid, Type: typ, Payload: map[string]string{"id": sid}}
}

// seqKey is what a seq counts: the run, or the session for its own events.
func seqKey(e event.Event) string {
	if e.RunID == "" {
		return "session " + e.SessionID
	}
	return "run " + e.RunID
}

func checkStreamSeqs(t *testing.T, evs []event.Event) {
	t.Helper()
	last := map[string]int64{}
	for i, e := range evs {
		if i > 0 && e.ID <= evs[i-1].ID {
			t.Fatalf("ids not ascending: %d after %d", e.ID, evs[i-1].ID)
		}
		k := seqKey(e)
		if e.Seq != last[k]+1 {
			t.Fatalf("%s: seq %d after %d (event id %d, %s)", k, e.Seq, last[k], e.ID, e.Type)
		}
		last[k] = e.Seq
	}
}

func testSessionEventsSeqPerSession(t *testing.T, open Open) {
	db := fresh(t, open)
	addSessionRun(t, db, "s1", "r1")
	addSession(t, db, "s2", t0)

	// Every session's first lifecycle event is seq 1: the (run_id, seq)
	// uniqueness must not make them collide on run_id "".
	a := appendEvents(t, db, "", sessionDraft("s1", event.SessionCreated))
	b := appendEvents(t, db, "", sessionDraft("s2", event.SessionCreated))
	if a[0].Seq != 1 || b[0].Seq != 1 || a[0].RunID != "" || b[0].RunID != "" {
		t.Fatalf("first session events: %+v %+v, want seq 1 and no run each", a[0], b[0])
	}
	// Mixed in one call with run events, each stream keeps its own count.
	mixed := appendEvents(t, db, "",
		draft("s1", "r1", event.MessageUser, nil),
		sessionDraft("s1", event.SessionUpdated),
		draft("s1", "r1", event.MessageDelta, nil),
		sessionDraft("s1", event.SessionUpdated),
		sessionDraft("s2", event.SessionUpdated),
	)
	want := []int64{1, 2, 2, 3, 2}
	for i, e := range mixed {
		if e.Seq != want[i] {
			t.Fatalf("mixed[%d] %s: seq %d, want %d", i, e.Type, e.Seq, want[i])
		}
	}
	evs := allEvents(t, db, store.EventQuery{})
	checkStreamSeqs(t, evs)
	if got := getRun(t, db, "r1").LastSeq; got != 2 {
		t.Fatalf("run last_seq = %d, want 2: session events must not count", got)
	}
	s1 := allEvents(t, db, store.EventQuery{SessionID: "s1", Types: event.SessionTypes()})
	if len(s1) != 3 || s1[2].Seq != 3 {
		t.Fatalf("s1 lifecycle events: %+v", s1)
	}
}

func testSessionEventsRefused(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	addSessionRun(t, db, "s1", "r1")
	before := allEvents(t, db, store.EventQuery{})

	tests := []struct {
		name   string
		fence  string
		drafts []event.Draft
		want   error
	}{
		{"run event without a run", "", []event.Draft{draft("s1", "", event.MessageUser, nil)}, store.ErrConflict},
		{"session event under a run", "", []event.Draft{draft("s1", "r1", event.SessionCreated, nil)}, store.ErrConflict},
		{"terminal event under a run", "", []event.Draft{draft("s1", "r1", event.TerminalOpened, nil)}, store.ErrConflict},
		{"session event with a fence", "runner-1", []event.Draft{sessionDraft("s1", event.SessionUpdated)}, store.ErrConflict},
		{"no session", "", []event.Draft{sessionDraft("", event.SessionUpdated)}, store.ErrConflict},
		{"unknown session", "", []event.Draft{sessionDraft("nope", event.SessionCreated)}, store.ErrNotFound},
		// All or nothing: the run's seq and the session's reserved first
		// are given back when a later draft fails.
		{"valid drafts before a bad one", "", []event.Draft{
			draft("s1", "r1", event.MessageUser, nil), sessionDraft("s1", event.SessionUpdated), sessionDraft("nope", event.SessionUpdated),
		}, store.ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := db.Write(ctx, func(tx store.Tx) error {
				_, err := tx.AppendEvents(ctx, tc.fence, tc.drafts...)
				return err
			})
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	if after := allEvents(t, db, store.EventQuery{}); !slices.Equal(ids(after), ids(before)) {
		t.Fatalf("refused appends wrote events: %v", ids(after))
	}
	// Nothing was reserved: the next events are seq 1 of the session and 1
	// of the run.
	out := appendEvents(t, db, "", sessionDraft("s1", event.SessionCreated), draft("s1", "r1", event.MessageUser, nil))
	if out[0].Seq != 1 || out[1].Seq != 1 {
		t.Fatalf("after refusals: seqs %d and %d, want 1 and 1", out[0].Seq, out[1].Seq)
	}
	// Terminal events belong to the session alone and share its seq.
	term := appendEvents(t, db, "", sessionDraft("s1", event.TerminalOpened), sessionDraft("s1", event.TerminalClosed))
	if term[0].RunID != "" || term[0].Seq != 2 || term[1].Seq != 3 {
		t.Fatalf("terminal events: run %q, seqs %d and %d; want no run, 2 and 3", term[0].RunID, term[0].Seq, term[1].Seq)
	}
}

// A stream reads session events with everything else: in a session's own
// selection, from every session through AlsoTypes, and from any cursor.
func testSessionEventsReplay(t *testing.T, open Open) {
	db := fresh(t, open)
	addSessionRun(t, db, "s1", "r1")
	addSessionRun(t, db, "s2", "r2")
	var all []event.Event
	for _, d := range []event.Draft{
		sessionDraft("s1", event.SessionCreated),
		sessionDraft("s2", event.SessionCreated),
		draft("s1", "r1", event.RunQueued, nil),
		draft("s2", "r2", event.MessageDelta, nil),
		sessionDraft("s2", event.SessionUpdated),
		draft("s1", "r1", event.MessageDelta, nil),
		sessionDraft("s1", event.SessionUpdated),
	} {
		all = append(all, appendEvents(t, db, "", d)...)
	}
	pick := func(after int64, keep func(event.Event) bool) []int64 {
		var out []int64
		for _, e := range all {
			if e.ID > after && keep(e) {
				out = append(out, e.ID)
			}
		}
		return out
	}
	lifecycle := append([]event.Type{event.RunQueued}, event.SessionTypes()...)
	mid := all[2].ID
	tests := []struct {
		name string
		q    store.EventQuery
		want []int64
	}{
		{"session", store.EventQuery{SessionID: "s1"}, pick(0, func(e event.Event) bool { return e.SessionID == "s1" })},
		{"session after a cursor", store.EventQuery{SessionID: "s1", AfterID: mid}, pick(mid, func(e event.Event) bool { return e.SessionID == "s1" })},
		{"tab: a session plus every lifecycle", store.EventQuery{SessionID: "s1", AlsoTypes: lifecycle},
			pick(0, func(e event.Event) bool { return e.SessionID == "s1" || slices.Contains(lifecycle, e.Type) })},
		{"tab after a cursor", store.EventQuery{SessionID: "s1", AlsoTypes: lifecycle, AfterID: mid},
			pick(mid, func(e event.Event) bool { return e.SessionID == "s1" || slices.Contains(lifecycle, e.Type) })},
		{"tab without a session", store.EventQuery{AlsoTypes: event.SessionTypes()}, pick(0, func(e event.Event) bool { return e.RunID == "" })},
		{"run excludes them", store.EventQuery{RunID: "r1"}, pick(0, func(e event.Event) bool { return e.RunID == "r1" })},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := allEvents(t, db, tc.q); !slices.Equal(ids(got), tc.want) {
				t.Fatalf("got %v, want %v", ids(got), tc.want)
			}
		})
	}
}

// Deleting a session takes its runs' events and its own lifecycle events,
// but keeps session.deleted: streams announce the delete from it, and the
// newest id does not move back (cursors stay valid, no false resync).
func testDeleteSessionKeepsTombstone(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	addSessionRun(t, db, "s1", "r1")
	addSessionRun(t, db, "s2", "r2")
	appendEvents(t, db, "", sessionDraft("s1", event.SessionCreated), draft("s1", "r1", event.MessageUser, nil),
		sessionDraft("s1", event.SessionUpdated), sessionDraft("s2", event.SessionCreated))
	var tomb []event.Event
	write(t, db, func(tx store.Tx) error {
		var err error
		if tomb, err = tx.AppendEvents(ctx, "", sessionDraft("s1", event.SessionDeleted)); err != nil {
			return err
		}
		return tx.DeleteSession(ctx, "s1")
	})
	if tomb[0].Seq != 3 {
		t.Fatalf("session.deleted seq = %d, want 3 (after created and updated)", tomb[0].Seq)
	}
	left := allEvents(t, db, store.EventQuery{SessionID: "s1"})
	if len(left) != 1 || left[0].ID != tomb[0].ID || left[0].Type != event.SessionDeleted || string(left[0].Payload) != `{"id":"s1"}` {
		t.Fatalf("left of s1: %+v, want only its session.deleted", left)
	}
	if last, _ := db.LastEventID(ctx); last != tomb[0].ID {
		t.Fatalf("last event id = %d, want the tombstone's %d", last, tomb[0].ID)
	}
	if got := allEvents(t, db, store.EventQuery{AlsoTypes: event.SessionTypes(), AfterID: tomb[0].ID - 1}); len(got) != 1 || got[0].ID != tomb[0].ID {
		t.Fatalf("a cursor just before the delete reads %v, want the tombstone", ids(got))
	}
	if _, err := db.GetSession(ctx, "s1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("session after delete: %v", err)
	}
	// The session is gone: nothing more can be appended to it.
	err := db.Write(ctx, func(tx store.Tx) error {
		_, err := tx.AppendEvents(ctx, "", sessionDraft("s1", event.SessionUpdated))
		return err
	})
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("append to a deleted session: %v", err)
	}
	if got := allEvents(t, db, store.EventQuery{SessionID: "s2"}); len(got) != 1 {
		t.Fatalf("s2 lost events: %v", ids(got))
	}
}
