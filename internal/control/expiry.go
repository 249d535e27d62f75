package control

// Run expiry (issue 17, h17-expiry): a run may carry a deadline, fixed when
// it is queued. A run not finished by then ends expired: its runner ends it
// when the deadline passes while it holds it (the step in flight is
// cancelled), and the watchdog's sweep ends it when no runner holds it
// (queued, parked waiting for a person, paused, recovering, interrupted).
// A run past its deadline is never claimed (store.Tx.ClaimNext).

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// Bounds of a run's expiry: shorter than MinExpiry would end most runs
// before their first answer; longer than MaxExpiry is no deadline at all.
const (
	MinExpiry = time.Second
	MaxExpiry = 7 * 24 * time.Hour
)

// CodeInvalidExpiresIn refuses an expires_in that is not a duration within
// the bounds.
const CodeInvalidExpiresIn = "invalid_expires_in"

// ErrorExpired is the error code run.done carries when a run expired.
const ErrorExpired = "expired"

// ParseExpiresIn reads a client's expires_in ("10m", "2h30m"); "" is none.
func ParseExpiresIn(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, &Error{Code: CodeInvalidExpiresIn, Message: fmt.Sprintf("expires_in must be a duration such as \"10m\" or \"2h\", not %q", s),
			Details: map[string]any{"field": "expires_in"}}
	}
	if d == 0 {
		// An explicit "0s" is a mistake, not "no deadline": leave it out.
		d = -1
	}
	if err := checkExpiresIn(d); err != nil {
		return 0, err
	}
	return d, nil
}

func checkExpiresIn(d time.Duration) error {
	if d == 0 {
		return nil
	}
	if d < MinExpiry || d > MaxExpiry {
		return &Error{Code: CodeInvalidExpiresIn, Message: fmt.Sprintf("expires_in must be from %s to %s", MinExpiry, formatDuration(MaxExpiry)),
			Details: map[string]any{"field": "expires_in"}}
	}
	return nil
}

// ExpiredError is the error of a run that ended expired: how long it was
// given, which the UI shows as the run's end line.
func ExpiredError(r store.Run) *event.ErrorInfo {
	d := r.ExpiresAt.Sub(r.CreatedAt).Round(time.Second)
	return &event.ErrorInfo{Code: ErrorExpired, Message: "Expired after " + formatDuration(d) +
		": the run had not finished by its deadline, " + r.ExpiresAt.UTC().Format(time.RFC3339)}
}

// formatDuration writes d as people do: "10m", "1h30m", "2s".
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// ExpireRun ends a run past its deadline as expired, closing what it left
// open and cancelling its pending requests as Finish does. fence is the
// runner holding it; "" (the sweep) ends only a run no runner holds, so a
// live runner ends its own runs and their journal stays in order.
//
// before are events to journal ahead of the end when the run does expire:
// the sweep's checkpoint of what the run did.
func ExpireRun(ctx context.Context, tx store.Tx, runID, fence string, now time.Time, before ...event.Draft) error {
	r, err := tx.GetRun(ctx, runID)
	if err != nil {
		return err
	}
	switch {
	case r.Status.Terminal():
		return fmt.Errorf("expire run %s: already %s: %w", runID, r.Status, store.ErrConflict)
	case r.ExpiresAt.IsZero() || now.Before(r.ExpiresAt):
		return fmt.Errorf("expire run %s: its deadline has not passed: %w", runID, store.ErrConflict)
	case fence == "" && r.RunnerID != "":
		return fmt.Errorf("expire run %s: runner %s holds it: %w", runID, r.RunnerID, store.ErrConflict)
	}
	if len(before) > 0 {
		if _, err := tx.AppendEvents(ctx, fence, before...); err != nil {
			return err
		}
	}
	return finishInTx(ctx, tx, runID, fence, Outcome{Status: run.Expired, Error: ExpiredError(r)}, now)
}

// Unheld lists the statuses in which no runner holds a run, so a sweep
// may end it when it expires; parked runs (awaiting a person with no
// runner) are among the awaiting ones.
func Unheld() []run.Status {
	return []run.Status{run.Queued, run.AwaitingApproval, run.AwaitingClarify, run.Paused, run.Recovering, run.Interrupted}
}
