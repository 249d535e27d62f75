package sqlite

// Job delivery and the delivery cursor (issue 17, h17-deliver).

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/caduceus-dev/caduceus/internal/store/sqlrow"
)

// deliveryCursorName names the one cursor row.
const deliveryCursorName = "webhooks"

func (r reader) JobOfRun(ctx context.Context, runID string) (string, error) {
	var jobID string
	err := r.queryRow(ctx, `SELECT job_id FROM job_runs WHERE run_id = ?`, runID).Scan(&jobID)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("job of run %s: %w", runID, err)
	}
	return jobID, nil
}

// jobsOfRunsChunk bounds the ids of one IN list.
const jobsOfRunsChunk = 500

func (r reader) JobsOfRuns(ctx context.Context, runIDs []string) (map[string]string, error) {
	out := map[string]string{}
	for ids := range slices.Chunk(runIDs, jobsOfRunsChunk) {
		args := make([]any, len(ids))
		for i, id := range ids {
			args[i] = id
		}
		rows, err := r.query(ctx, `SELECT run_id, job_id FROM job_runs WHERE run_id IN (?`+strings.Repeat(",?", len(ids)-1)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("jobs of runs: %w", err)
		}
		for rows.Next() {
			var runID, jobID string
			if err := rows.Scan(&runID, &jobID); err != nil {
				rows.Close()
				return nil, fmt.Errorf("jobs of runs: %w", err)
			}
			out[runID] = jobID
		}
		if err := rows.Close(); err != nil {
			return nil, fmt.Errorf("jobs of runs: %w", err)
		}
	}
	return out, nil
}

func (r reader) DeliveryDue(ctx context.Context, now time.Time) (bool, error) {
	var one int
	err := r.queryRow(ctx, `SELECT 1 FROM webhook_deliveries WHERE state IN ('pending', 'sending') AND next_at_ms <= ? LIMIT 1`,
		ms(now)).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("delivery due: %w", err)
	}
	return true, nil
}

func (r reader) DeliveryCursor(ctx context.Context) (int64, bool, error) {
	var id int64
	err := r.queryRow(ctx, `SELECT event_id FROM delivery_cursor WHERE name = ?`, deliveryCursorName).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("delivery cursor: %w", err)
	}
	return id, true, nil
}

func (t *txn) AdvanceDeliveryCursor(ctx context.Context, eventID int64) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO delivery_cursor (name, event_id) VALUES (?, ?)
		ON CONFLICT (name) DO UPDATE SET event_id = MAX(event_id, excluded.event_id)`, deliveryCursorName, eventID)
	if err != nil {
		return fmt.Errorf("advance delivery cursor: %w", err)
	}
	return nil
}

// dropJobWebhook removes a deleted webhook from every job's delivery.
func (t *txn) dropJobWebhook(ctx context.Context, webhookID string) error {
	rows, err := t.tx.QueryContext(ctx, `SELECT id, delivery_webhooks FROM jobs WHERE delivery_webhooks <> '[]'`)
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
	if err := rows.Close(); err != nil {
		return err
	}
	for jobID, ids := range changed {
		if _, err := t.tx.ExecContext(ctx, `UPDATE jobs SET delivery_webhooks = ? WHERE id = ?`, stringsJSON(ids), jobID); err != nil {
			return fmt.Errorf("drop webhook %s from job %s: %w", webhookID, jobID, err)
		}
	}
	return nil
}
