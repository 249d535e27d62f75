package sqlite

// Budgets (issue 16, h16-budgets): limits per scope and what the server
// spent per day.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlrow"
)

func (r reader) GetBudget(ctx context.Context, scope, target string) (store.Budget, error) {
	b, err := sqlrow.ScanBudget(r.queryRow(ctx, `SELECT scope, target, limits, updated_at_ms FROM budgets WHERE scope = ? AND target = ?`, scope, target))
	if err != nil {
		return b, notFound(err, "budget", scope+"/"+target)
	}
	return b, nil
}

func (r reader) ListBudgets(ctx context.Context, scope string) ([]store.Budget, error) {
	rows, err := r.query(ctx, `SELECT scope, target, limits, updated_at_ms FROM budgets
		WHERE ? = '' OR scope = ? ORDER BY scope, target`, scope, scope)
	if err != nil {
		return nil, fmt.Errorf("list budgets: %w", err)
	}
	defer rows.Close()
	out, err := sqlrow.Collect(rows, sqlrow.ScanBudget)
	if err != nil {
		return nil, fmt.Errorf("list budgets: %w", err)
	}
	return out, nil
}

func (r reader) DayUsage(ctx context.Context, day string) (store.DayUsage, error) {
	u := store.DayUsage{Day: day}
	err := r.queryRow(ctx, `SELECT tokens, cost_usd, tool_calls FROM budget_days WHERE day = ?`, day).Scan(&u.Tokens, &u.CostUSD, &u.ToolCalls)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return u, fmt.Errorf("day usage %s: %w", day, err)
	}
	return u, nil
}

func (t *txn) PutBudget(ctx context.Context, b store.Budget) error {
	limits, err := json.Marshal(b.Limits)
	if err != nil {
		return fmt.Errorf("put budget: %w", err)
	}
	_, err = t.tx.ExecContext(ctx, `INSERT INTO budgets (scope, target, limits, updated_at_ms) VALUES (?,?,?,?)
		ON CONFLICT (scope, target) DO UPDATE SET limits = excluded.limits, updated_at_ms = excluded.updated_at_ms`,
		b.Scope, b.Target, string(limits), ms(b.UpdatedAt))
	if err != nil {
		return fmt.Errorf("put budget: %w", err)
	}
	return nil
}

func (t *txn) DeleteBudget(ctx context.Context, scope, target string) error {
	if _, err := t.tx.ExecContext(ctx, `DELETE FROM budgets WHERE scope = ? AND target = ?`, scope, target); err != nil {
		return fmt.Errorf("delete budget: %w", err)
	}
	return nil
}

func (t *txn) AddDayUsage(ctx context.Context, u store.DayUsage) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO budget_days (day, tokens, cost_usd, tool_calls) VALUES (?,?,?,?)
		ON CONFLICT (day) DO UPDATE SET tokens = tokens + excluded.tokens, cost_usd = cost_usd + excluded.cost_usd,
		tool_calls = tool_calls + excluded.tool_calls`, u.Day, u.Tokens, u.CostUSD, u.ToolCalls)
	if err != nil {
		return fmt.Errorf("add day usage: %w", err)
	}
	return nil
}
