package sqlrow

// Scheduled jobs (issue 17).

import (
	"fmt"
	"time"

	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// JobCols are the columns ScanJob reads, in its order.
const JobCols = `j.id, j.name, j.prompt, j.profile_id, j.workspace, j.schedule_kind, j.schedule_expr, j.tz, j.enabled,
	j.repeat_limit, j.fire_count, j.overlap, j.missed, j.session_policy, j.session_id, j.run_expiry_ms, j.next_fire_at_ms,
	j.last_run_id, COALESCE(r.status, ''), j.delivery_notify, j.delivery_webhooks, j.created_at_ms, j.updated_at_ms`

// JobFrom joins a job to its last run, which JobCols read too.
const JobFrom = ` FROM jobs j LEFT JOIN runs r ON r.id = j.last_run_id`

// ScanJob reads one row of JobCols.
func ScanJob(s Scanner) (store.Job, error) {
	var j store.Job
	var expiry, next, c, u int64
	var status, hooks string
	err := s.Scan(&j.ID, &j.Name, &j.Prompt, &j.ProfileID, &j.Workspace, &j.ScheduleKind, &j.ScheduleExpr, &j.TZ, &j.Enabled,
		&j.RepeatLimit, &j.FireCount, &j.Overlap, &j.Missed, &j.SessionPolicy, &j.SessionID, &expiry, &next,
		&j.LastRunID, &status, &j.Delivery.Notify, &hooks, &c, &u)
	if err != nil {
		return j, err
	}
	if j.Delivery.WebhookIDs, err = StringList(hooks); err != nil {
		return j, fmt.Errorf("job %q delivery webhooks: %w", j.ID, err)
	}
	j.RunExpiry = time.Duration(expiry) * time.Millisecond
	j.NextFireAt, j.CreatedAt, j.UpdatedAt = fromMS(next), fromMS(c), fromMS(u)
	j.LastRunStatus = run.Status(status)
	return j, err
}
