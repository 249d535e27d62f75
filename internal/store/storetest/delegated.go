package storetest

import (
	"context"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/store"
)

// testDelegatedSessions: a child session keeps the session, run and tool
// call that delegated to it, and DelegatedSessions finds a run's children
// (only them, oldest first) — what a delegate call run again after a
// handover relies on not to start its tasks twice.
func testDelegatedSessions(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	addSession(t, db, "parent", at(1))
	for i, c := range []store.Session{
		{ID: "child-b", Workspace: "/w", CreatedAt: at(20), UpdatedAt: at(20), DelegatedSessionID: "parent", DelegatedRunID: "run-1", DelegatedCallID: "call-1"},
		{ID: "child-a", Workspace: "/w", CreatedAt: at(10), UpdatedAt: at(10), DelegatedSessionID: "parent", DelegatedRunID: "run-1", DelegatedCallID: "call-1"},
		{ID: "other", Workspace: "/w", CreatedAt: at(5), UpdatedAt: at(5), DelegatedSessionID: "parent", DelegatedRunID: "run-2", DelegatedCallID: "call-9"},
	} {
		write(t, db, func(tx store.Tx) error { return tx.InsertSession(ctx, c) })
		if got, err := db.GetSession(ctx, c.ID); err != nil || got != c {
			t.Fatalf("%d: get = %+v, %v; want %+v", i, got, err, c)
		}
	}
	got, err := db.DelegatedSessions(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	if ids := sessionIDs(got); len(ids) != 2 || ids[0] != "child-a" || ids[1] != "child-b" {
		t.Fatalf("children of run-1 = %v, want [child-a child-b]", ids)
	}
	if got[0].DelegatedCallID != "call-1" || got[0].DelegatedSessionID != "parent" {
		t.Fatalf("child-a = %+v, want its parent and call", got[0])
	}
	if none, err := db.DelegatedSessions(ctx, "run-none"); err != nil || len(none) != 0 {
		t.Fatalf("children of an unknown run = %v, %v; want none", none, err)
	}
	// An ordinary session is nobody's child.
	if plain, _ := db.GetSession(ctx, "parent"); plain.DelegatedRunID != "" || plain.DelegatedSessionID != "" {
		t.Fatalf("plain session = %+v, want no delegation", plain)
	}
}
