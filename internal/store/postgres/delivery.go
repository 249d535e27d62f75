package postgres

// Job delivery and the delivery cursor (issue 17, h17-deliver), as in the
// SQLite store.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/caduceus-dev/caduceus/internal/store/sqlrow"
)

// deliveryCursorName names the one cursor row.
const deliveryCursorName = "webhooks"

func (r reader) JobOfRun(ctx context.Context, runID string) (string, error) {
	var jobID string
	err := r.q.QueryRow(ctx, `SELECT job_id FROM job_runs WHERE run_id = $1`, runID).Scan(&jobID)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("job of run %s: %w", runID, err)
	}
	return jobID, nil
}

func (r reader) JobsOfRuns(ctx context.Context, runIDs []string) (map[string]string, error) {
	out := map[string]string{}
	if len(runIDs) == 0 {
		return out, nil
	}
	rows, err := r.q.Query(ctx, `SELECT run_id, job_id FROM job_runs WHERE run_id = ANY($1)`, runIDs)
	if err != nil {
		return nil, fmt.Errorf("jobs of runs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var runID, jobID string
		if err := rows.Scan(&runID, &jobID); err != nil {
			return nil, fmt.Errorf("jobs of runs: %w", err)
		}
		out[runID] = jobID
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("jobs of runs: %w", err)
	}
	return out, nil
}

func (r reader) DeliveryDue(ctx context.Context, now time.Time) (bool, error) {
	var one int
	err := r.q.QueryRow(ctx, `SELECT 1 FROM webhook_deliveries WHERE state IN ('pending', 'sending') AND next_at_ms <= $1 LIMIT 1`,
		ms(now)).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("delivery due: %w", err)
	}
	return true, nil
}

func (r reader) DeliveryCursor(ctx context.Context) (int64, bool, error) {
	var id int64
	err := r.q.QueryRow(ctx, `SELECT event_id FROM delivery_cursor WHERE name = $1`, deliveryCursorName).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("delivery cursor: %w", err)
	}
	return id, true, nil
}

func (t *txn) AdvanceDeliveryCursor(ctx context.Context, eventID int64) error {
	_, err := t.c.Exec(ctx, `INSERT INTO delivery_cursor (name, event_id) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET event_id = GREATEST(delivery_cursor.event_id, excluded.event_id)`, deliveryCursorName, eventID)
	if err != nil {
		return fmt.Errorf("advance delivery cursor: %w", err)
	}
	return nil
}

// dropJobWebhook removes a deleted webhook from every job's delivery.
func (t *txn) dropJobWebhook(ctx context.Context, webhookID string) error {
	rows, err := t.c.Query(ctx, `SELECT id, delivery_webhooks FROM jobs WHERE delivery_webhooks <> '[]'`)
	if err != nil {
		return fmt.Errorf("jobs delivering to webhook %s: %w", webhookID, err)
	}
	changed := map[string][]string{}
	for rows.Next() {
		var jobID, hooks string
		if err := rows.Scan(&jobID, &hooks); err != nil {
			rows.Close()
			return fmt.Errorf("jobs delivering to webhook %s: %w", webhookID, err)
		}
		ids, err := sqlrow.StringList(hooks)
		if err != nil {
			rows.Close()
			return fmt.Errorf("job %q delivery webhooks: %w", jobID, err)
		}
		if slices.Contains(ids, webhookID) {
			changed[jobID] = slices.DeleteFunc(ids, func(s string) bool { return s == webhookID })
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("jobs delivering to webhook %s: %w", webhookID, err)
	}
	for jobID, ids := range changed {
		if _, err := t.c.Exec(ctx, `UPDATE jobs SET delivery_webhooks = $1 WHERE id = $2`, stringsJSON(ids), jobID); err != nil {
			return fmt.Errorf("drop webhook %s from job %s: %w", webhookID, jobID, err)
		}
	}
	return nil
}
