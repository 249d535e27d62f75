package sqlite

// Scheduled jobs (issue 17, h17-jobs). Each due time is claimed inside a
// write transaction, which SQLite runs one at a time across the processes
// on the file, with an update conditional on the next_fire_at_ms read: a
// second claimer reads the advanced time, and a claim based on a stale
// read would match no row.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlrow"
)

func (r reader) GetJob(ctx context.Context, id string) (store.Job, error) {
	j, err := sqlrow.ScanJob(r.queryRow(ctx, `SELECT `+sqlrow.JobCols+sqlrow.JobFrom+` WHERE j.id = ?`, id))
	if err != nil {
		return j, notFound(err, "job", id)
	}
	return j, nil
}

func (r reader) ListJobs(ctx context.Context) ([]store.Job, error) {
	return r.jobs(ctx, `SELECT `+sqlrow.JobCols+sqlrow.JobFrom+` ORDER BY j.name, j.id`)
}

func (r reader) jobs(ctx context.Context, q string, args ...any) ([]store.Job, error) {
	rows, err := r.query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	defer rows.Close()
	out, err := sqlrow.Collect(rows, sqlrow.ScanJob)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	return out, nil
}

func (r reader) JobRuns(ctx context.Context, jobID string, limit int) ([]store.JobRun, error) {
	rows, err := r.query(ctx, `SELECT job_id, run_id, session_id, fire_at_ms, manual FROM job_runs
		WHERE job_id = ? ORDER BY fire_at_ms DESC, rowid DESC LIMIT ?`, jobID, limit)
	if err != nil {
		return nil, fmt.Errorf("job runs: %w", err)
	}
	defer rows.Close()
	var out []store.JobRun
	for rows.Next() {
		var jr store.JobRun
		var at int64
		if err := rows.Scan(&jr.JobID, &jr.RunID, &jr.SessionID, &at, &jr.Manual); err != nil {
			return nil, fmt.Errorf("job runs: %w", err)
		}
		jr.FireAt = fromMS(at)
		out = append(out, jr)
	}
	return out, rows.Err()
}

func (t *txn) InsertJob(ctx context.Context, j store.Job) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO jobs (id, name, prompt, profile_id, workspace, schedule_kind, schedule_expr, tz,
		enabled, repeat_limit, fire_count, overlap, missed, session_policy, session_id, run_expiry_ms, next_fire_at_ms, last_run_id,
		delivery_notify, delivery_webhooks, created_at_ms, updated_at_ms) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		j.ID, j.Name, j.Prompt, j.ProfileID, j.Workspace, j.ScheduleKind, j.ScheduleExpr, j.TZ, j.Enabled, j.RepeatLimit,
		j.FireCount, j.Overlap, j.Missed, j.SessionPolicy, j.SessionID, j.RunExpiry.Milliseconds(), ms(j.NextFireAt),
		j.LastRunID, j.Delivery.Notify, stringsJSON(j.Delivery.WebhookIDs), ms(j.CreatedAt), ms(j.UpdatedAt))
	if err != nil {
		return fmt.Errorf("insert job: %w", err)
	}
	return nil
}

func (t *txn) UpdateJob(ctx context.Context, j store.Job, readNext time.Time) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE jobs SET name = ?, prompt = ?, profile_id = ?, workspace = ?, schedule_kind = ?,
		schedule_expr = ?, tz = ?, enabled = ?, repeat_limit = ?, overlap = ?, missed = ?, session_policy = ?, run_expiry_ms = ?,
		next_fire_at_ms = ?, delivery_notify = ?, delivery_webhooks = ?, updated_at_ms = ? WHERE id = ? AND next_fire_at_ms = ?`,
		j.Name, j.Prompt, j.ProfileID, j.Workspace, j.ScheduleKind, j.ScheduleExpr, j.TZ, j.Enabled, j.RepeatLimit, j.Overlap,
		j.Missed, j.SessionPolicy, j.RunExpiry.Milliseconds(), ms(j.NextFireAt), j.Delivery.Notify, stringsJSON(j.Delivery.WebhookIDs),
		ms(j.UpdatedAt), j.ID, ms(readNext))
	if err := oneRow(res, err, "update job", j.ID); !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if _, err := t.GetJob(ctx, j.ID); err != nil {
		return err
	}
	return fmt.Errorf("update job %q: its next fire time moved: %w", j.ID, store.ErrConflict)
}

func (t *txn) DeleteJob(ctx context.Context, id string) error {
	res, err := t.tx.ExecContext(ctx, `DELETE FROM jobs WHERE id = ?`, id)
	return oneRow(res, err, "delete job", id)
}

func oneRow(res interface{ RowsAffected() (int64, error) }, err error, what, id string) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	} else if n == 0 {
		return fmt.Errorf("%s %q: %w", what, id, store.ErrNotFound)
	}
	return nil
}

func (t *txn) ClaimDueJobs(ctx context.Context, now time.Time, next func(store.Job) time.Time) ([]store.Job, error) {
	due, err := t.jobs(ctx, `SELECT `+sqlrow.JobCols+sqlrow.JobFrom+` WHERE j.enabled = 1 AND j.next_fire_at_ms > 0 AND j.next_fire_at_ms <= ?
		ORDER BY j.next_fire_at_ms, j.id`, ms(now))
	if err != nil {
		return nil, fmt.Errorf("claim due jobs: %w", err)
	}
	var out []store.Job
	for _, j := range due {
		res, err := t.tx.ExecContext(ctx, `UPDATE jobs SET next_fire_at_ms = ?, fire_count = fire_count + 1
			WHERE id = ? AND enabled = 1 AND next_fire_at_ms = ?`, ms(next(j)), j.ID, ms(j.NextFireAt))
		if err != nil {
			return nil, fmt.Errorf("claim job %s: %w", j.ID, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return nil, fmt.Errorf("claim job %s: %w", j.ID, err)
		} else if n == 1 {
			j.FireCount++
			out = append(out, j)
		}
	}
	return out, nil
}

func (t *txn) RecordJobRun(ctx context.Context, r store.JobRun) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE jobs SET last_run_id = ?,
		session_id = CASE WHEN session_policy = 'accumulate' THEN ? ELSE session_id END WHERE id = ?`, r.RunID, r.SessionID, r.JobID)
	if err := oneRow(res, err, "record job run", r.JobID); err != nil {
		return err
	}
	if _, err := t.tx.ExecContext(ctx, `INSERT INTO job_runs (run_id, job_id, session_id, fire_at_ms, manual) VALUES (?,?,?,?,?)`,
		r.RunID, r.JobID, r.SessionID, ms(r.FireAt), r.Manual); err != nil {
		return fmt.Errorf("record job run: %w", err)
	}
	return nil
}
