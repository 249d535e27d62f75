package storetest

// Budgets (issue 16, h16-budgets).

import (
	"context"
	"errors"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/budget"
	"github.com/caduceus-dev/caduceus/internal/store"
)

func testBudgets(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	if _, err := db.GetBudget(ctx, budget.ScopeRun, "r-1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetBudget before any: %v, want not found", err)
	}
	if got, err := db.ListBudgets(ctx, ""); err != nil || len(got) != 0 {
		t.Fatalf("ListBudgets empty = %v, %v", got, err)
	}
	run := store.Budget{Scope: budget.ScopeRun, Target: "r-1", Limits: budget.Limits{MaxTokens: 500}, UpdatedAt: at(1)}
	prof := store.Budget{Scope: budget.ScopeProfile, Target: "prf-1", Limits: budget.Limits{MaxCostUSD: 0.25, MaxToolCalls: 40,
		MaxWallSeconds: 600, MaxConsecutiveErrors: 3}, UpdatedAt: at(2)}
	day := store.Budget{Scope: budget.ScopeDay, Target: "", Limits: budget.Limits{MaxTokens: 1_000_000}, UpdatedAt: at(3)}
	for _, b := range []store.Budget{run, prof, day} {
		write(t, db, func(tx store.Tx) error { return tx.PutBudget(ctx, b) })
	}
	if got, err := db.GetBudget(ctx, budget.ScopeProfile, "prf-1"); err != nil || got != prof {
		t.Fatalf("GetBudget = %+v, %v; want %+v", got, err, prof)
	}
	// Another scope with the same target is another budget.
	if _, err := db.GetBudget(ctx, budget.ScopeSession, "r-1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetBudget of another scope: %v, want not found", err)
	}
	// A second put replaces the limits whole.
	run2 := run
	run2.Limits, run2.UpdatedAt = budget.Limits{MaxTokens: 5000, MaxToolCalls: 7}, at(9)
	write(t, db, func(tx store.Tx) error { return tx.PutBudget(ctx, run2) })
	if got, err := db.GetBudget(ctx, budget.ScopeRun, "r-1"); err != nil || got != run2 {
		t.Fatalf("GetBudget after put = %+v, %v; want %+v", got, err, run2)
	}
	all, err := db.ListBudgets(ctx, "")
	if err != nil || len(all) != 3 || all[0] != day || all[1] != prof || all[2] != run2 {
		t.Fatalf("ListBudgets = %+v, %v; want day, profile, run", all, err)
	}
	only, err := db.ListBudgets(ctx, budget.ScopeProfile)
	if err != nil || len(only) != 1 || only[0] != prof {
		t.Fatalf("ListBudgets(profile) = %+v, %v", only, err)
	}
	write(t, db, func(tx store.Tx) error { return tx.DeleteBudget(ctx, budget.ScopeRun, "r-1") })
	write(t, db, func(tx store.Tx) error { return tx.DeleteBudget(ctx, budget.ScopeRun, "r-unknown") })
	if _, err := db.GetBudget(ctx, budget.ScopeRun, "r-1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetBudget after delete: %v, want not found", err)
	}
}

func testBudgetDayUsage(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	if got, err := db.DayUsage(ctx, "2026-11-24"); err != nil || got != (store.DayUsage{Day: "2026-11-24"}) {
		t.Fatalf("DayUsage before any = %+v, %v", got, err)
	}
	write(t, db, func(tx store.Tx) error {
		return tx.AddDayUsage(ctx, store.DayUsage{Day: "2026-11-24", Tokens: 100, CostUSD: 0.5, ToolCalls: 1})
	})
	write(t, db, func(tx store.Tx) error {
		return tx.AddDayUsage(ctx, store.DayUsage{Day: "2026-11-24", Tokens: 20, CostUSD: 0.25, ToolCalls: 2})
	})
	write(t, db, func(tx store.Tx) error { return tx.AddDayUsage(ctx, store.DayUsage{Day: "2026-11-25", Tokens: 7}) })
	if got, err := db.DayUsage(ctx, "2026-11-24"); err != nil || got != (store.DayUsage{Day: "2026-11-24", Tokens: 120, CostUSD: 0.75, ToolCalls: 3}) {
		t.Fatalf("DayUsage = %+v, %v; want the sum of both", got, err)
	}
	if got, err := db.DayUsage(ctx, "2026-11-25"); err != nil || got.Tokens != 7 {
		t.Fatalf("DayUsage of the next day = %+v, %v", got, err)
	}
}
