package postgres

// Session goals (issue 15), as in the SQLite store.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/caduceus-dev/caduceus/internal/store"
)

const goalCols = `session_id, text, status, max_runs, max_tokens, max_cost_usd, max_duration_ms,
	runs, tokens, cost_usd, note, reason, by_json, started_at_ms, created_at_ms, updated_at_ms`

func (r reader) GetGoal(ctx context.Context, sessionID string) (store.Goal, error) {
	var g store.Goal
	var dur, started, created, updated int64
	err := r.q.QueryRow(ctx, `SELECT `+goalCols+` FROM goals WHERE session_id = $1`, sessionID).Scan(
		&g.SessionID, &g.Text, &g.Status, &g.MaxRuns, &g.MaxTokens, &g.MaxCostUSD, &dur,
		&g.Runs, &g.Tokens, &g.CostUSD, &g.Note, &g.Reason, &g.By, &started, &created, &updated)
	if err != nil {
		return store.Goal{}, notFound(err, "goal", sessionID)
	}
	g.MaxDuration = time.Duration(dur) * time.Millisecond
	g.StartedAt, g.CreatedAt, g.UpdatedAt = fromMS(started), fromMS(created), fromMS(updated)
	return g, nil
}

func (t *txn) PutGoal(ctx context.Context, g store.Goal) error {
	var one int
	if err := t.c.QueryRow(ctx, `SELECT 1 FROM sessions WHERE id = $1`, g.SessionID).Scan(&one); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("put goal: session %q: %w", g.SessionID, store.ErrNotFound)
		}
		return fmt.Errorf("put goal: %w", err)
	}
	_, err := t.c.Exec(ctx, `INSERT INTO goals (`+goalCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16)
		ON CONFLICT (session_id) DO UPDATE SET text = excluded.text, status = excluded.status,
		max_runs = excluded.max_runs, max_tokens = excluded.max_tokens, max_cost_usd = excluded.max_cost_usd,
		max_duration_ms = excluded.max_duration_ms, runs = excluded.runs, tokens = excluded.tokens,
		cost_usd = excluded.cost_usd, note = excluded.note, reason = excluded.reason, by_json = excluded.by_json,
		started_at_ms = excluded.started_at_ms, created_at_ms = excluded.created_at_ms, updated_at_ms = excluded.updated_at_ms`,
		g.SessionID, g.Text, g.Status, g.MaxRuns, g.MaxTokens, g.MaxCostUSD, g.MaxDuration.Milliseconds(),
		g.Runs, g.Tokens, g.CostUSD, g.Note, g.Reason, g.By, ms(g.StartedAt), ms(g.CreatedAt), ms(g.UpdatedAt))
	if err != nil {
		return fmt.Errorf("put goal: %w", err)
	}
	return nil
}
