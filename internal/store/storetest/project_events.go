package storetest

// Project events (project.created/updated/deleted) belong to no session
// and no run: run_id "", the project's id in session_id, and a gap-free
// seq of their own per project, counted by the project's row.

import (
	"context"
	"errors"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
)

func testProjectEvents(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	addSession(t, db, "s1", t0)
	for _, pid := range []string{"p1", "p2"} {
		p := store.Project{ID: pid, Name: pid, CreatedAt: at(1), UpdatedAt: at(1)}
		write(t, db, func(tx store.Tx) error { return tx.InsertProject(ctx, p) })
	}

	// Each project counts from 1, apart from sessions and from each
	// other, also when one call mixes them.
	mixed := appendEvents(t, db, "",
		sessionDraft("p1", event.ProjectCreated),
		sessionDraft("s1", event.SessionCreated),
		sessionDraft("p2", event.ProjectCreated),
		sessionDraft("p1", event.ProjectUpdated),
	)
	wantSeq := []int64{1, 1, 1, 2}
	for i, e := range mixed {
		if e.Seq != wantSeq[i] || e.RunID != "" {
			t.Fatalf("event %d (%s of %s): seq %d run %q, want seq %d and no run", i, e.Type, e.SessionID, e.Seq, e.RunID, wantSeq[i])
		}
	}

	// The announcement first, then the project goes; the event outlives it
	// and every tab's query (types from any session) hears it.
	var del []event.Event
	write(t, db, func(tx store.Tx) error {
		var err error
		if del, err = tx.AppendEvents(ctx, "", sessionDraft("p1", event.ProjectDeleted)); err != nil {
			return err
		}
		return tx.DeleteProject(ctx, "p1")
	})
	if del[0].Seq != 3 {
		t.Fatalf("project.deleted seq %d, want 3", del[0].Seq)
	}
	tab := allEvents(t, db, store.EventQuery{AlsoTypes: event.ProjectTypes()})
	var got []event.Type
	for _, e := range tab {
		if e.SessionID == "p1" {
			got = append(got, e.Type)
		}
	}
	if want := []event.Type{event.ProjectCreated, event.ProjectUpdated, event.ProjectDeleted}; len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("p1's events on a tab query: %v, want %v", got, want)
	}

	// A project that does not exist has no counter: nothing is written.
	err := db.Write(ctx, func(tx store.Tx) error {
		_, err := tx.AppendEvents(ctx, "", sessionDraft("p1", event.ProjectUpdated))
		return err
	})
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("append to a deleted project: %v, want ErrNotFound", err)
	}
	// Nor may a run's events pose as a project's.
	err = db.Write(ctx, func(tx store.Tx) error {
		_, err := tx.AppendEvents(ctx, "", event.Draft{RunID: "r1", SessionID: "p2", Type: event.ProjectUpdated})
		return err
	})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a run's project.updated: %v, want ErrConflict", err)
	}
	if n := len(allEvents(t, db, store.EventQuery{AlsoTypes: event.ProjectTypes()})); n != len(tab) {
		t.Fatalf("refused appends left events: %d, want %d", n, len(tab))
	}
}
