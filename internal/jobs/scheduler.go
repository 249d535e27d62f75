package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/schedule"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// Sender queues runs in the caller's transaction: control.Service.
type Sender interface {
	PrepareSession(ctx context.Context, in control.NewSession) (store.Session, error)
	SendInTx(ctx context.Context, tx store.Tx, sessionID string, m control.Message) (store.Run, error)
}

// Config tunes a Scheduler; zero fields take the defaults.
type Config struct {
	// Tick is how often due jobs are claimed (default one second).
	Tick time.Duration
	// Grace is how late a due time may be claimed and still count as on
	// time (default 5 s). One older was missed while no process ran: the
	// job's missed policy decides whether it fires once, and its schedule
	// then resumes after now, so the others are dropped.
	Grace time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Scheduler claims due jobs and queues their runs. Every process that
// runs runs has one; the store makes sure each due time fires once.
type Scheduler struct {
	st   store.Store
	w    Writer
	send Sender
	log  *slog.Logger
	cfg  Config
}

// NewScheduler returns a Scheduler; Run starts it.
func NewScheduler(st store.Store, w Writer, send Sender, cfg Config, log *slog.Logger) *Scheduler {
	if cfg.Tick <= 0 {
		cfg.Tick = time.Second
	}
	if cfg.Grace <= 0 {
		cfg.Grace = 5 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Scheduler{st: st, w: w, send: send, log: log, cfg: cfg}
}

// Run ticks until ctx ends.
func (s *Scheduler) Run(ctx context.Context) {
	t := time.NewTicker(s.cfg.Tick)
	defer t.Stop()
	for {
		if err := s.Tick(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("scheduled jobs: tick failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// maxClaimsPerTick bounds the claims of one tick, so a job far behind
// cannot hold a tick forever.
const maxClaimsPerTick = 100

// Tick claims every due time that has come and fires it. A job behind by
// several due times (within Grace) fires each in turn. A claim and the
// runs it queues commit in one transaction: a process that dies between
// them leaves neither, and another process claims the due time again.
func (s *Scheduler) Tick(ctx context.Context) error {
	for range maxClaimsPerTick {
		now := s.cfg.Now().UTC()
		var claimed []store.Job
		var fired []fireLog
		err := s.w.Do(ctx, func(tx store.Tx) error {
			var err error
			fired = fired[:0]
			claimed, err = tx.ClaimDueJobs(ctx, now, func(j store.Job) time.Time { return s.after(j, now) })
			if err != nil {
				return err
			}
			for _, j := range claimed {
				due := j.NextFireAt
				if s.missed(due, now) && j.Missed == MissedSkip {
					fired = append(fired, fireLog{job: j.ID, due: due, skipped: "missed"})
					continue
				}
				r, skipped, err := s.fireInTx(ctx, tx, j, due, false)
				var ce *control.Error
				if errors.As(err, &ce) {
					// The job's settings no longer work (its workspace
					// is gone, say): this due time is dropped, the claim
					// stands, the other jobs fire.
					fired = append(fired, fireLog{job: j.ID, due: due, err: err})
					continue
				}
				if err != nil {
					return err
				}
				fired = append(fired, fireLog{job: j.ID, due: due, run: r.ID, skipped: skipped})
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("claim due jobs: %w", err)
		}
		for _, f := range fired {
			switch {
			case f.err != nil:
				s.log.Warn("scheduled job: fire failed; this due time is dropped", "job", f.job, "due", f.due, "err", f.err)
			case f.skipped != "":
				s.log.Info("scheduled job: fire skipped", "job", f.job, "due", f.due, "why", f.skipped)
			default:
				s.log.Info("scheduled job fired", "job", f.job, "due", f.due, "run", f.run)
			}
		}
		if len(claimed) == 0 {
			return nil
		}
	}
	return nil
}

type fireLog struct {
	job, run, skipped string
	due               time.Time
	err               error
}

func (s *Scheduler) missed(due, now time.Time) bool { return now.Sub(due) > s.cfg.Grace }

// after is the fire time that follows a claimed due time.
func (s *Scheduler) after(j store.Job, now time.Time) time.Time {
	sc, err := schedule.Parse(j.ScheduleKind, j.ScheduleExpr, j.TZ)
	if err != nil {
		// Stored schedules were checked; one that no longer parses (a
		// zone gone from the database) stops rather than fires wrongly.
		s.log.Warn("scheduled job: schedule no longer parses; it stops", "job", j.ID, "err", err)
		return time.Time{}
	}
	if j.RepeatLimit > 0 && j.FireCount+1 >= j.RepeatLimit {
		return time.Time{}
	}
	if s.missed(j.NextFireAt, now) {
		return sc.Next(now)
	}
	return sc.Next(j.NextFireAt)
}

// RunNow fires j at once, outside its schedule (its next fire time stays).
// A busy last run is queued behind rather than skipped: a person asked.
func (s *Scheduler) RunNow(ctx context.Context, j store.Job) (store.Run, error) {
	var r store.Run
	err := s.w.Do(ctx, func(tx store.Tx) error {
		var err error
		r, _, err = s.fireInTx(ctx, tx, j, s.cfg.Now().UTC(), true)
		return err
	})
	return r, err
}

// fireInTx queues the run of one fire of j, in a new session or the job's
// accumulating one, applying the overlap policy to its last run; skipped
// says why it queued none.
func (s *Scheduler) fireInTx(ctx context.Context, tx store.Tx, j store.Job, due time.Time, manual bool) (store.Run, string, error) {
	if j.LastRunID != "" && j.LastRunStatus.Busy() {
		switch {
		case j.Overlap == OverlapSkip && !manual:
			return store.Run{}, "the last run " + j.LastRunID + " is still busy", nil
		case j.Overlap == OverlapReplace:
			err := control.CancelInTx(ctx, tx, j.LastRunID, "replaced by the next run of its scheduled job")
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return store.Run{}, "", err
			}
		}
	}
	sessionID := ""
	if j.SessionPolicy == SessionAccumulate && j.SessionID != "" {
		if _, err := tx.GetSession(ctx, j.SessionID); err == nil {
			sessionID = j.SessionID
		} else if !errors.Is(err, store.ErrNotFound) {
			return store.Run{}, "", err
		}
	}
	if sessionID == "" {
		sess, err := s.send.PrepareSession(ctx, control.NewSession{Title: j.Name, Workspace: j.Workspace, ProfileID: j.ProfileID})
		if err != nil {
			return store.Run{}, "", err
		}
		if err := control.InsertSessionInTx(ctx, tx, sess); err != nil {
			return store.Run{}, "", err
		}
		sessionID = sess.ID
	}
	r, err := s.send.SendInTx(ctx, tx, sessionID, control.Message{Content: j.Prompt, IfBusy: control.IfBusyEnqueue, JobID: j.ID, ExpiresIn: j.RunExpiry})
	if err != nil {
		return store.Run{}, "", err
	}
	err = tx.RecordJobRun(ctx, store.JobRun{JobID: j.ID, RunID: r.ID, SessionID: sessionID, FireAt: due, Manual: manual})
	return r, "", err
}
