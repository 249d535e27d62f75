package storetest

import (
	"context"
	"slices"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// testSessionLineage: a branch's lineage round-trips through both reads
// of a session, and store.SessionHistory cuts each ancestor at the branch
// point: earlier runs whole, the cut run up to the event, later runs and
// the ancestors' later events never (issue 15, branch).
func testSessionLineage(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	addSession(t, db, "sA", t0)
	for i, rid := range []string{"rA1", "rA2", "rA3"} {
		addRun(t, db, store.Run{ID: rid, SessionID: "sA", Status: run.Running, CreatedAt: at(i)})
	}
	a1 := appendEvents(t, db, "", draft("sA", "rA1", event.MessageUser, map[string]string{"text": "a1"}),
		draft("sA", "rA1", event.TurnStarted, nil))
	a2 := appendEvents(t, db, "", draft("sA", "rA2", event.MessageUser, map[string]string{"text": "a2"}),
		draft("sA", "rA2", event.TurnStarted, nil))
	appendEvents(t, db, "", draft("sA", "rA3", event.MessageUser, map[string]string{"text": "a3"}))

	// B branches from A after a2's first event; C from B after that same
	// inherited event, then has a run of its own.
	b := store.Session{ID: "sB", Title: "b", Workspace: "/ws", CreatedAt: at(10), UpdatedAt: at(10),
		ParentSessionID: "sA", BranchedFromEventID: a2[0].ID}
	write(t, db, func(tx store.Tx) error { return tx.InsertSession(ctx, b) })
	addRun(t, db, store.Run{ID: "rB1", SessionID: "sB", Status: run.Running, CreatedAt: at(11)})
	appendEvents(t, db, "", draft("sB", "rB1", event.MessageUser, map[string]string{"text": "b1"}))
	c := store.Session{ID: "sC", Title: "c", Workspace: "/ws", CreatedAt: at(20), UpdatedAt: at(20),
		ParentSessionID: "sB", BranchedFromEventID: a1[1].ID}
	write(t, db, func(tx store.Tx) error { return tx.InsertSession(ctx, c) })

	got, err := db.GetSession(ctx, "sB")
	if err != nil || got.ParentSessionID != "sA" || got.BranchedFromEventID != a2[0].ID {
		t.Fatalf("GetSession(sB) = %+v, %v; want lineage sA@%d", got, err, a2[0].ID)
	}
	list, _, err := db.ListSessions(ctx, store.SessionPage{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list {
		if s.ID == "sC" && (s.ParentSessionID != "sB" || s.BranchedFromEventID != a1[1].ID) {
			t.Fatalf("ListSessions: sC = %+v", s)
		}
		if s.ID == "sA" && (s.ParentSessionID != "" || s.BranchedFromEventID != 0) {
			t.Fatalf("ListSessions: sA = %+v, want no lineage", s)
		}
	}

	tests := []struct {
		session  string
		wantRuns []string
		wantEvs  []int64
	}{
		{"sA", []string{"rA1", "rA2", "rA3"}, nil},
		{"sB", []string{"rA1", "rA2", "rB1"}, []int64{a1[0].ID, a1[1].ID, a2[0].ID}},
		{"sC", []string{"rA1"}, []int64{a1[0].ID, a1[1].ID}},
	}
	for _, tc := range tests {
		evs, runs, err := store.SessionHistory(ctx, db, tc.session)
		if err != nil {
			t.Fatalf("SessionHistory(%s): %v", tc.session, err)
		}
		if !slices.Equal(runs, tc.wantRuns) {
			t.Errorf("SessionHistory(%s) runs = %v, want %v", tc.session, runs, tc.wantRuns)
		}
		if tc.wantEvs == nil {
			continue
		}
		var inherited []int64
		for _, e := range evs {
			if e.SessionID != tc.session {
				inherited = append(inherited, e.ID)
			}
		}
		if !slices.Equal(inherited, tc.wantEvs) {
			t.Errorf("SessionHistory(%s) inherited events = %v, want %v", tc.session, inherited, tc.wantEvs)
		}
	}
}

// testBranchVersionPath: a branch of a session that has versions inherits
// the conversation on screen at the branch point — the cut run and its
// ancestors in the tree of versions — not every run made before it, with
// or without a type filter; the parent's own history is unchanged.
func testBranchVersionPath(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	addSession(t, db, "sV", t0)
	// r1, r2, then r2b a retry of r2 (its sibling), r3 after r2b; then a
	// person switches back to r2.
	var msg = map[string][]event.Event{}
	for i, rv := range []struct{ id, of string }{{"r1", ""}, {"r2", ""}, {"r2b", "r2"}, {"r3", ""}} {
		addRun(t, db, store.Run{ID: rv.id, SessionID: "sV", Status: run.Completed, CreatedAt: at(i)})
		msg[rv.id] = appendEvents(t, db, "",
			draft("sV", rv.id, event.RunQueued, event.RunQueuedPayload{VersionOf: rv.of}),
			draft("sV", rv.id, event.MessageUser, map[string]string{"text": rv.id}),
			draft("sV", rv.id, event.MessageDone, map[string]string{"id": "a-" + rv.id}))
	}
	appendEvents(t, db, "", draft("sV", "", event.VersionSelected, event.VersionSelectedPayload{Leaf: "r2", Cause: "switch"}))

	tests := []struct {
		name     string
		cut      int64
		wantRuns []string
	}{
		{"at the retry's answer", msg["r2b"][2].ID, []string{"r1", "r2b"}},
		{"after the retry", msg["r3"][2].ID, []string{"r1", "r2b", "r3"}},
		{"at the version put aside", msg["r2"][1].ID, []string{"r1", "r2"}},
		{"before any version", msg["r1"][2].ID, []string{"r1"}},
	}
	filters := map[string]store.EventQuery{
		"all":          {},
		"cut types":    {Types: []event.Type{event.MessageUser, event.MessageDone}},
		"not versions": {NotTypes: []event.Type{event.RunQueued, event.VersionSelected}},
	}
	for i, tc := range tests {
		b := store.Session{ID: "sB" + string(rune('a'+i)), Title: "b", Workspace: "/ws", CreatedAt: at(10), UpdatedAt: at(10),
			ParentSessionID: "sV", BranchedFromEventID: tc.cut}
		write(t, db, func(tx store.Tx) error { return tx.InsertSession(ctx, b) })
		for fname, f := range filters {
			evs, runs, err := store.Inherited(ctx, db, b, f)
			if err != nil {
				t.Fatalf("%s, %s: Inherited: %v", tc.name, fname, err)
			}
			if !slices.Equal(runs, tc.wantRuns) {
				t.Errorf("%s, %s: runs = %v, want %v", tc.name, fname, runs, tc.wantRuns)
			}
			for _, e := range evs {
				if !slices.Contains(tc.wantRuns, e.RunID) || e.ID > tc.cut && e.RunID == tc.wantRuns[len(tc.wantRuns)-1] {
					t.Errorf("%s, %s: inherited event %d of run %q beyond the visible path", tc.name, fname, e.ID, e.RunID)
				}
			}
		}
	}
	_, runs, err := store.SessionHistory(ctx, db, "sV")
	if err != nil || !slices.Equal(runs, []string{"r1", "r2", "r2b", "r3"}) {
		t.Fatalf("SessionHistory(sV) runs = %v, %v; the parent keeps every run", runs, err)
	}
}
