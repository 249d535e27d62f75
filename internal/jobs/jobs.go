// Package jobs is scheduled jobs (issue 17, h17-jobs): their settings,
// checked before they are stored, and the scheduler that fires them.
//
// Exactly once: a job's next fire time lives in the store and every
// process that runs runs claims due times with store.Tx.ClaimDueJobs, an
// update conditional on the time it read. Whichever process wins a due
// time queues its run; the others' updates match nothing.
package jobs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/journal"
	"github.com/caduceus-dev/caduceus/internal/schedule"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// Policies.
const (
	OverlapSkip    = "skip"    // a fire while the last run is busy does nothing
	OverlapQueue   = "queue"   // it queues behind it
	OverlapReplace = "replace" // it cancels the busy run and starts anew

	MissedSkip = "skip" // fire times missed while nothing ran are dropped
	MissedOnce = "once" // they make one catch-up run

	SessionNew        = "new"        // a new session per run
	SessionAccumulate = "accumulate" // one session that collects every run
)

// Error codes (control.Error codes the API answers with).
const (
	CodeInvalidSchedule = "invalid_schedule"
	CodeInvalidJob      = "invalid_job"
	// CodeUnknownWebhook: a job's delivery names a webhook that does not
	// exist (or was deleted).
	CodeUnknownWebhook = "unknown_webhook"
)

// Limits on what a job holds.
const (
	MaxNameBytes   = 200
	MaxPromptBytes = 64 << 10
	// MaxDeliveryWebhooks bounds the webhooks a job's runs are posted to.
	MaxDeliveryWebhooks = 20
)

// Writer runs a transaction through the process's journal writer.
type Writer interface {
	Do(ctx context.Context, op journal.Op) error
}

// Input is a job's settings as a client gives them; nil fields are left
// as they are (on update) or take their defaults (on create).
type Input struct {
	Name          *string
	Prompt        *string
	ProfileID     *string
	Workspace     *string
	ScheduleKind  *string
	ScheduleExpr  *string
	TZ            *string
	Enabled       *bool
	RepeatLimit   *int
	Overlap       *string
	Missed        *string
	SessionPolicy *string
	RunExpiry     *time.Duration
	// Delivery replaces the job's delivery when set.
	Delivery *store.JobDelivery
}

func invalid(code, msg string) error { return &control.Error{Code: code, Message: msg} }

// Apply writes in onto j and checks the result; now sets NextFireAt when
// the schedule changed or the job was enabled.
func Apply(j store.Job, in Input, now time.Time) (store.Job, error) {
	old := j
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = strings.TrimSpace(*src)
		}
	}
	set(&j.Name, in.Name)
	if in.Prompt != nil {
		j.Prompt = *in.Prompt
	}
	set(&j.ProfileID, in.ProfileID)
	set(&j.Workspace, in.Workspace)
	set(&j.ScheduleKind, in.ScheduleKind)
	set(&j.ScheduleExpr, in.ScheduleExpr)
	set(&j.TZ, in.TZ)
	set(&j.Overlap, in.Overlap)
	set(&j.Missed, in.Missed)
	set(&j.SessionPolicy, in.SessionPolicy)
	if in.Enabled != nil {
		j.Enabled = *in.Enabled
	}
	if in.RepeatLimit != nil {
		j.RepeatLimit = *in.RepeatLimit
	}
	if in.RunExpiry != nil {
		j.RunExpiry = *in.RunExpiry
	}
	if in.Delivery != nil {
		j.Delivery = store.JobDelivery{Notify: in.Delivery.Notify}
		for _, w := range in.Delivery.WebhookIDs {
			if w = strings.TrimSpace(w); !slices.Contains(j.Delivery.WebhookIDs, w) {
				j.Delivery.WebhookIDs = append(j.Delivery.WebhookIDs, w)
			}
		}
	}
	if j.ScheduleKind == "" {
		j.ScheduleKind = schedule.KindCron
	}
	switch {
	case j.Name == "" || len(j.Name) > MaxNameBytes || !utf8.ValidString(j.Name):
		return old, invalid(CodeInvalidJob, "name must be 1 to 200 bytes of UTF-8 text")
	case strings.TrimSpace(j.Prompt) == "" || len(j.Prompt) > MaxPromptBytes || !utf8.ValidString(j.Prompt):
		return old, invalid(CodeInvalidJob, "prompt must be non-empty UTF-8 text of at most 64 KiB")
	case j.Overlap != OverlapSkip && j.Overlap != OverlapQueue && j.Overlap != OverlapReplace:
		return old, invalid(CodeInvalidJob, "overlap must be one of skip, queue, replace")
	case j.Missed != MissedSkip && j.Missed != MissedOnce:
		return old, invalid(CodeInvalidJob, "missed must be one of skip, once")
	case j.SessionPolicy != SessionNew && j.SessionPolicy != SessionAccumulate:
		return old, invalid(CodeInvalidJob, "session must be one of new, accumulate")
	case len(j.Delivery.WebhookIDs) > MaxDeliveryWebhooks:
		return old, invalid(CodeInvalidJob, fmt.Sprintf("delivery names more than %d webhooks", MaxDeliveryWebhooks))
	case j.RepeatLimit < 0:
		return old, invalid(CodeInvalidJob, "repeat_limit must be 0 (no limit) or more")
	case j.RunExpiry != 0 && (j.RunExpiry < control.MinExpiry || j.RunExpiry > control.MaxExpiry):
		return old, invalid(CodeInvalidJob, fmt.Sprintf("run_expiry must be 0 (none) or between %s and %s", control.MinExpiry, control.MaxExpiry))
	}
	if j.ScheduleKind != schedule.KindCron {
		j.TZ = "" // only a cron expression is read in a zone
	}
	sc, err := schedule.Parse(j.ScheduleKind, j.ScheduleExpr, j.TZ)
	if err != nil {
		return old, invalid(CodeInvalidSchedule, err.Error())
	}
	scheduleChanged := j.ScheduleKind != old.ScheduleKind || j.ScheduleExpr != old.ScheduleExpr || j.TZ != old.TZ
	if scheduleChanged || (j.Enabled && !old.Enabled) || j.RepeatLimit != old.RepeatLimit {
		j.NextFireAt = nextFire(sc, j, now)
	}
	if j.Enabled && j.NextFireAt.IsZero() && j.ScheduleKind == schedule.KindOnce && scheduleChanged {
		return old, invalid(CodeInvalidSchedule, "the one-time schedule is in the past")
	}
	j.UpdatedAt = now
	return j, nil
}

// nextFire is the job's first fire time after now, zero when its repeat
// limit is used up or the schedule has none.
func nextFire(sc schedule.Schedule, j store.Job, now time.Time) time.Time {
	if j.RepeatLimit > 0 && j.FireCount >= j.RepeatLimit {
		return time.Time{}
	}
	return sc.Next(now)
}

// New makes a job from in, with the defaults of anything left out:
// enabled, overlap skip, missed once, a new session per run.
func New(in Input, now time.Time) (store.Job, error) {
	j := store.Job{ID: id.New("job"), Enabled: true, Overlap: OverlapSkip, Missed: MissedOnce,
		SessionPolicy: SessionNew, CreatedAt: now}
	if in.ScheduleExpr == nil {
		return j, invalid(CodeInvalidSchedule, "schedule is required")
	}
	return Apply(j, in, now)
}

// Preview checks a schedule and lists its next n fire times after now.
func Preview(kind, expr, tz string, now time.Time, n int) ([]time.Time, error) {
	sc, err := schedule.Parse(kind, expr, tz)
	if err != nil {
		return nil, invalid(CodeInvalidSchedule, err.Error())
	}
	return schedule.Preview(sc, now, n), nil
}

// IsInvalid reports whether err is a job or schedule the client got
// wrong.
func IsInvalid(err error) bool {
	var ce *control.Error
	return errors.As(err, &ce) && (ce.Code == CodeInvalidJob || ce.Code == CodeInvalidSchedule || ce.Code == CodeUnknownWebhook)
}

// CheckWebhooks checks that every webhook a job delivers to exists, read
// in the transaction that stores the job so a webhook deleted meanwhile
// cannot stay on its list.
func CheckWebhooks(ctx context.Context, r interface {
	GetWebhook(ctx context.Context, id string) (store.Webhook, error)
}, d store.JobDelivery) error {
	for _, w := range d.WebhookIDs {
		_, err := r.GetWebhook(ctx, w)
		if errors.Is(err, store.ErrNotFound) || (err == nil && w == "") {
			return invalid(CodeUnknownWebhook, fmt.Sprintf("delivery.webhook_ids names no webhook: %q", w))
		}
		if err != nil {
			return err
		}
	}
	return nil
}
