package jobs

import (
	"context"
	"errors"
	"time"

	"github.com/caduceus-dev/caduceus/internal/store"
)

// Create checks in and stores a new job.
func (s *Scheduler) Create(ctx context.Context, in Input) (store.Job, error) {
	j, err := New(in, s.cfg.Now().UTC())
	if err != nil {
		return store.Job{}, err
	}
	if err := s.checkProfile(ctx, j.ProfileID); err != nil {
		return store.Job{}, err
	}
	err = s.w.Do(ctx, func(tx store.Tx) error {
		if err := CheckWebhooks(ctx, tx, j.Delivery); err != nil {
			return err
		}
		return tx.InsertJob(ctx, j)
	})
	if err != nil {
		return store.Job{}, err
	}
	return s.st.GetJob(ctx, j.ID)
}

// Update applies in to a job. A claim that moves the job's next fire time
// while the update is made makes it start over, so a due time is never
// written back.
func (s *Scheduler) Update(ctx context.Context, jobID string, in Input) (store.Job, error) {
	if in.ProfileID != nil {
		if err := s.checkProfile(ctx, *in.ProfileID); err != nil {
			return store.Job{}, err
		}
	}
	for attempt := 0; ; attempt++ {
		err := s.w.Do(ctx, func(tx store.Tx) error {
			j, err := tx.GetJob(ctx, jobID)
			if err != nil {
				return err
			}
			next, err := Apply(j, in, s.cfg.Now().UTC())
			if err != nil {
				return err
			}
			if in.Delivery != nil {
				if err := CheckWebhooks(ctx, tx, next.Delivery); err != nil {
					return err
				}
			}
			return tx.UpdateJob(ctx, next, j.NextFireAt)
		})
		if errors.Is(err, store.ErrConflict) && attempt < 5 {
			continue
		}
		if err != nil {
			return store.Job{}, err
		}
		return s.st.GetJob(ctx, jobID)
	}
}

// Delete removes a job and its history; the runs it started stay.
func (s *Scheduler) Delete(ctx context.Context, jobID string) error {
	return s.w.Do(ctx, func(tx store.Tx) error { return tx.DeleteJob(ctx, jobID) })
}

// RunNowByID fires the job now (see RunNow).
func (s *Scheduler) RunNowByID(ctx context.Context, jobID string) (store.Run, error) {
	j, err := s.st.GetJob(ctx, jobID)
	if err != nil {
		return store.Run{}, err
	}
	return s.RunNow(ctx, j)
}

// Preview checks a schedule and lists its next n fire times from now.
func (s *Scheduler) Preview(kind, expr, tz string, n int) ([]time.Time, error) {
	return Preview(kind, expr, tz, s.cfg.Now().UTC(), n)
}

func (s *Scheduler) checkProfile(ctx context.Context, profileID string) error {
	if profileID == "" {
		return nil
	}
	p, err := s.st.GetProfile(ctx, profileID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !p.Live()) {
		return invalid(CodeInvalidJob, "profile_id names no profile")
	}
	return err
}
