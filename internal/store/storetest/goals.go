package storetest

// Session goals (issue 15).

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/store"
)

func testGoals(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	addSession(t, db, "s-1", t0)
	addSession(t, db, "s-2", t0)
	if _, err := db.GetGoal(ctx, "s-1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetGoal before any: %v, want not found", err)
	}
	g := store.Goal{SessionID: "s-1", Text: "make the tests pass", Status: "active", MaxRuns: 5, MaxTokens: 200000,
		MaxCostUSD: 1.25, MaxDuration: 90 * time.Minute, By: `{"kind":"user","name":"ann"}`,
		StartedAt: at(10), CreatedAt: at(10), UpdatedAt: at(10)}
	write(t, db, func(tx store.Tx) error { return tx.PutGoal(ctx, g) })
	if got, err := db.GetGoal(ctx, "s-1"); err != nil || got != g {
		t.Fatalf("GetGoal = %+v, %v; want %+v", got, err, g)
	}
	// A second put replaces every field, counters included.
	g2 := g
	g2.Status, g2.Runs, g2.Tokens, g2.CostUSD, g2.Note, g2.Reason, g2.UpdatedAt = "met", 3, 4200, 0.031, "all green", "met", at(50)
	write(t, db, func(tx store.Tx) error { return tx.PutGoal(ctx, g2) })
	if got, err := db.GetGoal(ctx, "s-1"); err != nil || got != g2 {
		t.Fatalf("GetGoal after update = %+v, %v; want %+v", got, err, g2)
	}
	if _, err := db.GetGoal(ctx, "s-2"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another session's goal: %v, want not found", err)
	}
	// An unknown session has no goal to hold.
	err := db.Write(ctx, func(tx store.Tx) error {
		return tx.PutGoal(ctx, store.Goal{SessionID: "s-none", Text: "x", Status: "active", StartedAt: at(1), CreatedAt: at(1), UpdatedAt: at(1)})
	})
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("PutGoal of an unknown session: %v, want not found", err)
	}
	// The goal goes with its session.
	write(t, db, func(tx store.Tx) error { return tx.DeleteSession(ctx, "s-1") })
	if _, err := db.GetGoal(ctx, "s-1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("goal of a deleted session: %v, want not found", err)
	}
}
