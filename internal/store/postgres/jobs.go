package postgres

// Scheduled jobs (issue 17, h17-jobs), as in the SQLite store. Write
// transactions already run one at a time under the append lock, so a
// claim reads the latest next fire time; the update is conditional on the
// time read all the same, so a due time stays single even for a claim
// made outside that serialisation (under READ COMMITTED the second update
// would wait for the first's row lock and then match nothing).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlrow"
)

func (r reader) GetJob(ctx context.Context, id string) (store.Job, error) {
	j, err := sqlrow.ScanJob(r.q.QueryRow(ctx, `SELECT `+sqlrow.JobCols+sqlrow.JobFrom+` WHERE j.id = $1`, id))
	if err != nil {
		return j, notFound(err, "job", id)
	}
	return j, nil
}

func (r reader) ListJobs(ctx context.Context) ([]store.Job, error) {
	return r.jobs(ctx, `SELECT `+sqlrow.JobCols+sqlrow.JobFrom+` ORDER BY j.name, j.id`)
}

func (r reader) jobs(ctx context.Context, q string, args ...any) ([]store.Job, error) {
	rows, err := r.q.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	out, err := collect(rows, sqlrow.ScanJob)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	return out, nil
}

func (r reader) JobRuns(ctx context.Context, jobID string, limit int) ([]store.JobRun, error) {
	rows, err := r.q.Query(ctx, `SELECT job_id, run_id, session_id, fire_at_ms, manual FROM job_runs
		WHERE job_id = $1 ORDER BY fire_at_ms DESC, run_id DESC LIMIT $2`, jobID, limit)
	if err != nil {
		return nil, fmt.Errorf("job runs: %w", err)
	}
	out, err := collect(rows, func(s sqlrow.Scanner) (store.JobRun, error) {
		var jr store.JobRun
		var at int64
		err := s.Scan(&jr.JobID, &jr.RunID, &jr.SessionID, &at, &jr.Manual)
		jr.FireAt = fromMS(at)
		return jr, err
	})
	if err != nil {
		return nil, fmt.Errorf("job runs: %w", err)
	}
	return out, nil
}

func (t *txn) InsertJob(ctx context.Context, j store.Job) error {
	_, err := t.c.Exec(ctx, `INSERT INTO jobs (id, name, prompt, profile_id, workspace, schedule_kind, schedule_expr, tz,
		enabled, repeat_limit, fire_count, overlap, missed, session_policy, session_id, run_expiry_ms, next_fire_at_ms, last_run_id,
		delivery_notify, delivery_webhooks, created_at_ms, updated_at_ms)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22)`,
		j.ID, j.Name, j.Prompt, j.ProfileID, j.Workspace, j.ScheduleKind, j.ScheduleExpr, j.TZ, j.Enabled, j.RepeatLimit,
		j.FireCount, j.Overlap, j.Missed, j.SessionPolicy, j.SessionID, j.RunExpiry.Milliseconds(), ms(j.NextFireAt),
		j.LastRunID, j.Delivery.Notify, stringsJSON(j.Delivery.WebhookIDs), ms(j.CreatedAt), ms(j.UpdatedAt))
	if err != nil {
		return fmt.Errorf("insert job: %w", err)
	}
	return nil
}

func (t *txn) UpdateJob(ctx context.Context, j store.Job, readNext time.Time) error {
	tag, err := t.c.Exec(ctx, `UPDATE jobs SET name = $1, prompt = $2, profile_id = $3, workspace = $4, schedule_kind = $5,
		schedule_expr = $6, tz = $7, enabled = $8, repeat_limit = $9, overlap = $10, missed = $11, session_policy = $12,
		run_expiry_ms = $13, next_fire_at_ms = $14, updated_at_ms = $15, delivery_notify = $18, delivery_webhooks = $19
		WHERE id = $16 AND next_fire_at_ms = $17`,
		j.Name, j.Prompt, j.ProfileID, j.Workspace, j.ScheduleKind, j.ScheduleExpr, j.TZ, j.Enabled, j.RepeatLimit, j.Overlap,
		j.Missed, j.SessionPolicy, j.RunExpiry.Milliseconds(), ms(j.NextFireAt), ms(j.UpdatedAt), j.ID, ms(readNext),
		j.Delivery.Notify, stringsJSON(j.Delivery.WebhookIDs))
	if err := oneJobRow(tag.RowsAffected(), err, "update job", j.ID); !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if _, err := t.GetJob(ctx, j.ID); err != nil {
		return err
	}
	return fmt.Errorf("update job %q: its next fire time moved: %w", j.ID, store.ErrConflict)
}

func (t *txn) DeleteJob(ctx context.Context, id string) error {
	tag, err := t.c.Exec(ctx, `DELETE FROM jobs WHERE id = $1`, id)
	return oneJobRow(tag.RowsAffected(), err, "delete job", id)
}

func oneJobRow(n int64, err error, what, id string) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if n == 0 {
		return fmt.Errorf("%s %q: %w", what, id, store.ErrNotFound)
	}
	return nil
}

func (t *txn) ClaimDueJobs(ctx context.Context, now time.Time, next func(store.Job) time.Time) ([]store.Job, error) {
	due, err := t.jobs(ctx, `SELECT `+sqlrow.JobCols+sqlrow.JobFrom+` WHERE j.enabled AND j.next_fire_at_ms > 0 AND j.next_fire_at_ms <= $1
		ORDER BY j.next_fire_at_ms, j.id`, ms(now))
	if err != nil {
		return nil, fmt.Errorf("claim due jobs: %w", err)
	}
	var out []store.Job
	for _, j := range due {
		tag, err := t.c.Exec(ctx, `UPDATE jobs SET next_fire_at_ms = $1, fire_count = fire_count + 1
			WHERE id = $2 AND enabled AND next_fire_at_ms = $3`, ms(next(j)), j.ID, ms(j.NextFireAt))
		if err != nil {
			return nil, fmt.Errorf("claim job %s: %w", j.ID, err)
		}
		if tag.RowsAffected() == 1 {
			j.FireCount++
			out = append(out, j)
		}
	}
	return out, nil
}

func (t *txn) RecordJobRun(ctx context.Context, r store.JobRun) error {
	tag, err := t.c.Exec(ctx, `UPDATE jobs SET last_run_id = $1,
		session_id = CASE WHEN session_policy = 'accumulate' THEN $2 ELSE session_id END WHERE id = $3`, r.RunID, r.SessionID, r.JobID)
	if err := oneJobRow(tag.RowsAffected(), err, "record job run", r.JobID); err != nil {
		return err
	}
	if _, err := t.c.Exec(ctx, `INSERT INTO job_runs (run_id, job_id, session_id, fire_at_ms, manual) VALUES ($1,$2,$3,$4,$5)`,
		r.RunID, r.JobID, r.SessionID, ms(r.FireAt), r.Manual); err != nil {
		return fmt.Errorf("record job run: %w", err)
	}
	return nil
}
