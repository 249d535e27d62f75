package postgres

// Budgets (issue 16, h16-budgets), as in the SQLite store.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlrow"
)

func (r reader) GetBudget(ctx context.Context, scope, target string) (store.Budget, error) {
	b, err := sqlrow.ScanBudget(r.q.QueryRow(ctx, `SELECT scope, target, limits, updated_at_ms FROM budgets WHERE scope = $1 AND target = $2`, scope, target))
	if err != nil {
		return b, notFound(err, "budget", scope+"/"+target)
	}
	return b, nil
}

func (r reader) ListBudgets(ctx context.Context, scope string) ([]store.Budget, error) {
	rows, err := r.q.Query(ctx, `SELECT scope, target, limits, updated_at_ms FROM budgets
		WHERE $1 = '' OR scope = $1 ORDER BY scope, target`, scope)
	if err != nil {
		return nil, fmt.Errorf("list budgets: %w", err)
	}
	out, err := collect(rows, sqlrow.ScanBudget)
	if err != nil {
		return nil, fmt.Errorf("list budgets: %w", err)
	}
	return out, nil
}

func (r reader) DayUsage(ctx context.Context, day string) (store.DayUsage, error) {
	u := store.DayUsage{Day: day}
	err := r.q.QueryRow(ctx, `SELECT tokens, cost_usd, tool_calls FROM budget_days WHERE day = $1`, day).Scan(&u.Tokens, &u.CostUSD, &u.ToolCalls)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return u, fmt.Errorf("day usage %s: %w", day, err)
	}
	return u, nil
}

func (t *txn) PutBudget(ctx context.Context, b store.Budget) error {
	limits, err := json.Marshal(b.Limits)
	if err != nil {
		return fmt.Errorf("put budget: %w", err)
	}
	_, err = t.c.Exec(ctx, `INSERT INTO budgets (scope, target, limits, updated_at_ms) VALUES ($1,$2,$3,$4)
		ON CONFLICT (scope, target) DO UPDATE SET limits = excluded.limits, updated_at_ms = excluded.updated_at_ms`,
		b.Scope, b.Target, string(limits), ms(b.UpdatedAt))
	if err != nil {
		return fmt.Errorf("put budget: %w", err)
	}
	return nil
}

func (t *txn) DeleteBudget(ctx context.Context, scope, target string) error {
	if _, err := t.c.Exec(ctx, `DELETE FROM budgets WHERE scope = $1 AND target = $2`, scope, target); err != nil {
		return fmt.Errorf("delete budget: %w", err)
	}
	return nil
}

func (t *txn) AddDayUsage(ctx context.Context, u store.DayUsage) error {
	_, err := t.c.Exec(ctx, `INSERT INTO budget_days (day, tokens, cost_usd, tool_calls) VALUES ($1,$2,$3,$4)
		ON CONFLICT (day) DO UPDATE SET tokens = budget_days.tokens + excluded.tokens,
		cost_usd = budget_days.cost_usd + excluded.cost_usd, tool_calls = budget_days.tool_calls + excluded.tool_calls`,
		u.Day, u.Tokens, u.CostUSD, u.ToolCalls)
	if err != nil {
		return fmt.Errorf("add day usage: %w", err)
	}
	return nil
}
