package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/schedule"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// Sender queues runs: control.Service.
type Sender interface {
	CreateSession(ctx context.Context, in control.NewSession) (store.Session, error)
	Send(ctx context.Context, sessionID string, m control.Message) (store.Run, error)
	Cancel(ctx context.Context, runID string, by *event.Actor) (store.Run, error)
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
// several due times (within Grace) fires each in turn.
func (s *Scheduler) Tick(ctx context.Context) error {
	for range maxClaimsPerTick {
		now := s.cfg.Now().UTC()
		var claimed []store.Job
		err := s.w.Do(ctx, func(tx store.Tx) error {
			var err error
			claimed, err = tx.ClaimDueJobs(ctx, now, func(j store.Job) time.Time { return s.after(j, now) })
			return err
		})
		if err != nil {
			return fmt.Errorf("claim due jobs: %w", err)
		}
		if len(claimed) == 0 {
			return nil
		}
		for _, j := range claimed {
			due := j.NextFireAt
			if s.missed(due, now) && j.Missed == MissedSkip {
				s.log.Info("scheduled job: missed fire skipped", "job", j.ID, "due", due)
				continue
			}
			if _, err := s.fire(ctx, j, due, false); err != nil {
				s.log.Warn("scheduled job: fire failed", "job", j.ID, "due", due, "err", err)
			}
		}
	}
	return nil
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
	return s.fire(ctx, j, s.cfg.Now().UTC(), true)
}

// fire queues the run of one fire of j, in a new session or the job's
// accumulating one, applying the overlap policy to its last run.
func (s *Scheduler) fire(ctx context.Context, j store.Job, due time.Time, manual bool) (store.Run, error) {
	if j.LastRunID != "" && j.LastRunStatus.Busy() {
		switch {
		case j.Overlap == OverlapSkip && !manual:
			s.log.Info("scheduled job: last run still busy; fire skipped", "job", j.ID, "run", j.LastRunID, "due", due)
			return store.Run{}, nil
		case j.Overlap == OverlapReplace:
			if _, err := s.send.Cancel(ctx, j.LastRunID, nil); err != nil && !errors.Is(err, store.ErrNotFound) {
				s.log.Warn("scheduled job: could not cancel the run it replaces", "job", j.ID, "run", j.LastRunID, "err", err)
			}
		}
	}
	sessionID := ""
	if j.SessionPolicy == SessionAccumulate && j.SessionID != "" {
		if _, err := s.st.GetSession(ctx, j.SessionID); err == nil {
			sessionID = j.SessionID
		}
	}
	if sessionID == "" {
		sess, err := s.send.CreateSession(ctx, control.NewSession{Title: j.Name, Workspace: j.Workspace, ProfileID: j.ProfileID})
		if err != nil {
			return store.Run{}, fmt.Errorf("job %s: session: %w", j.ID, err)
		}
		sessionID = sess.ID
	}
	r, err := s.send.Send(ctx, sessionID, control.Message{Content: j.Prompt, IfBusy: control.IfBusyEnqueue, JobID: j.ID})
	if err != nil {
		return store.Run{}, fmt.Errorf("job %s: send: %w", j.ID, err)
	}
	err = s.w.Do(ctx, func(tx store.Tx) error {
		return tx.RecordJobRun(ctx, store.JobRun{JobID: j.ID, RunID: r.ID, SessionID: sessionID, FireAt: due, Manual: manual})
	})
	if err != nil {
		return r, fmt.Errorf("job %s: record run %s: %w", j.ID, r.ID, err)
	}
	s.log.Info("scheduled job fired", "job", j.ID, "run", r.ID, "session", sessionID, "due", due, "manual", manual)
	return r, nil
}
