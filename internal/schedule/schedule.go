// Package schedule parses the schedules of scheduled jobs (issue 17,
// h17-jobs) and computes their fire times. It is pure: the caller passes
// the time to compute from, so tests inject a clock.
package schedule

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Kinds of schedule.
const (
	KindCron     = "cron"     // a five-field cron expression in a time zone
	KindInterval = "interval" // "every 2h", "every 30s", or a Go duration
	KindOnce     = "once"     // one RFC 3339 time
)

// MinInterval bounds intervals from below: a scheduler ticks about once a
// second, so anything shorter could not be kept.
const MinInterval = time.Second

// Schedule computes fire times.
type Schedule interface {
	// Next is the first fire time strictly after t; zero when there is
	// none (a one-time schedule already past).
	Next(t time.Time) time.Time
}

// ErrInvalid marks every parse error; its message says what is wrong.
var ErrInvalid = errors.New("invalid schedule")

var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Parse reads a schedule of kind (KindCron when "") from expr. tz is the
// IANA zone of a cron expression ("" is UTC); it is ignored by the other
// kinds, whose times are absolute.
func Parse(kind, expr, tz string) (Schedule, error) {
	expr = strings.TrimSpace(expr)
	if expr == "" {
		return nil, fmt.Errorf("%w: the expression is empty", ErrInvalid)
	}
	switch kind {
	case KindCron, "":
		loc, err := Location(tz)
		if err != nil {
			return nil, err
		}
		if strings.HasPrefix(expr, "TZ=") || strings.HasPrefix(expr, "CRON_TZ=") {
			return nil, fmt.Errorf("%w: give the time zone as tz, not in the expression", ErrInvalid)
		}
		s, err := parser.Parse(expr)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
		}
		return cronSchedule{s: s, loc: loc, fixedHour: hasFixedHour(expr)}, nil
	case KindInterval:
		d, err := ParseInterval(expr)
		if err != nil {
			return nil, err
		}
		return every(d), nil
	case KindOnce:
		t, err := time.Parse(time.RFC3339, expr)
		if err != nil {
			return nil, fmt.Errorf("%w: a one-time schedule is an RFC 3339 time such as 2026-12-01T09:00:00Z", ErrInvalid)
		}
		return once(t.UTC()), nil
	default:
		return nil, fmt.Errorf("%w: kind must be one of cron, interval, once", ErrInvalid)
	}
}

// Location loads an IANA time zone ("" is UTC). The binary embeds the
// zone database (time/tzdata), so this does not depend on the host.
func Location(tz string) (*time.Location, error) {
	if tz == "" {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(tz)
	if err != nil || strings.EqualFold(tz, "local") {
		return nil, fmt.Errorf("%w: unknown time zone %q (an IANA name such as Europe/Berlin)", ErrInvalid, tz)
	}
	return loc, nil
}

// ParseInterval reads "every 2h", "every 90 minutes", "every 5s" or a bare
// Go duration ("2h30m").
func ParseInterval(expr string) (time.Duration, error) {
	s := strings.ToLower(strings.TrimSpace(expr))
	s = strings.TrimSpace(strings.TrimPrefix(s, "every"))
	if d, err := time.ParseDuration(strings.ReplaceAll(s, " ", "")); err == nil {
		return checkInterval(d)
	}
	var n int
	var unit string
	if _, err := fmt.Sscanf(s, "%d %s", &n, &unit); err != nil || n <= 0 {
		return 0, fmt.Errorf("%w: an interval reads like \"every 2h\" or \"every 30 minutes\"", ErrInvalid)
	}
	units := map[string]time.Duration{"second": time.Second, "minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour}
	u, ok := units[strings.TrimSuffix(unit, "s")]
	if !ok {
		return 0, fmt.Errorf("%w: unknown unit %q (seconds, minutes, hours, days)", ErrInvalid, unit)
	}
	return checkInterval(time.Duration(n) * u)
}

func checkInterval(d time.Duration) (time.Duration, error) {
	if d < MinInterval {
		return 0, fmt.Errorf("%w: an interval must be at least %s", ErrInvalid, MinInterval)
	}
	return d, nil
}

// cronSchedule evaluates the expression in its zone. robfig/cron alone
// walks wall-clock time: a time a spring-forward jump skips never fires,
// and one a fall-back repeats fires twice. For expressions with fixed
// hours Next corrects both the way Vixie cron does: a time in the skipped
// hour fires at the jump itself, a repeated time fires at its first
// instance only. Expressions with a wildcard hour ("*/15 * * * *") run in
// real time and need no correction.
type cronSchedule struct {
	s         cron.Schedule
	loc       *time.Location
	fixedHour bool
}

func (c cronSchedule) Next(t time.Time) time.Time {
	t = t.In(c.loc)
	for {
		n := c.s.Next(t)
		if !c.fixedHour {
			return n.UTC()
		}
		if g, ok := c.gapFire(t, n); ok {
			return g.UTC()
		}
		if !n.IsZero() && repeated(n) {
			t = n
			continue
		}
		return n.UTC()
	}
}

// gapFire finds a spring-forward jump after t and not after n whose
// skipped wall-clock times include one the expression names; it fires at
// the jump.
func (c cronSchedule) gapFire(t, n time.Time) (time.Time, bool) {
	for cur := t; ; {
		_, end := cur.ZoneBounds()
		if end.IsZero() || (!n.IsZero() && end.After(n)) {
			return time.Time{}, false
		}
		_, before := cur.Zone()
		_, after := end.Zone()
		if after > before {
			old := time.FixedZone("", before)
			wallStart := end.In(old) // the first skipped wall-clock time, in the old offset
			cand := c.s.Next(wallStart.Add(-time.Second))
			if !cand.IsZero() && cand.Before(wallStart.Add(time.Duration(after-before)*time.Second)) {
				return end.In(c.loc), true
			}
		}
		cur = end
	}
}

// repeated says whether n's wall-clock time already happened once: n lies
// in the hour a fall-back repeats, after the jump.
func repeated(n time.Time) bool {
	start, _ := n.ZoneBounds()
	if start.IsZero() {
		return false
	}
	_, off := n.Zone()
	_, prev := start.Add(-time.Nanosecond).Zone()
	return prev > off && n.Sub(start) < time.Duration(prev-off)*time.Second
}

// hasFixedHour says whether a cron expression names particular hours
// (then daylight-saving jumps need correcting) rather than every hour.
func hasFixedHour(expr string) bool {
	f := strings.Fields(expr)
	if len(f) == 1 {
		switch f[0] {
		case "@daily", "@midnight", "@weekly", "@monthly", "@yearly", "@annually":
			return true
		}
		return false
	}
	if len(f) < 2 {
		return false
	}
	return f[1] != "*" && !strings.HasPrefix(f[1], "*/")
}

// every fires at whole multiples of d after the Unix epoch, so that every
// process computes the same due times whatever instant it starts from.
type every time.Duration

func (e every) Next(t time.Time) time.Time {
	d := time.Duration(e)
	return t.Truncate(d).Add(d).UTC()
}

type once time.Time

func (o once) Next(t time.Time) time.Time {
	if ot := time.Time(o); ot.After(t) {
		return ot
	}
	return time.Time{}
}

// Preview lists up to n fire times after from.
func Preview(s Schedule, from time.Time, n int) []time.Time {
	var out []time.Time
	for t := from; len(out) < n; {
		t = s.Next(t)
		if t.IsZero() {
			break
		}
		out = append(out, t)
	}
	return out
}
