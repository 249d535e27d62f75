package schedule

import (
	"errors"
	"testing"
	"time"
)

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestNextFireTimes(t *testing.T) {
	tests := []struct {
		name           string
		kind, expr, tz string
		from           string
		want           []string // RFC 3339, in UTC
	}{
		{"interval aligned to the epoch", KindInterval, "every 2h", "", "2026-01-01T01:30:00Z",
			[]string{"2026-01-01T02:00:00Z", "2026-01-01T04:00:00Z", "2026-01-01T06:00:00Z"}},
		{"interval of seconds", KindInterval, "every 2s", "", "2026-01-01T00:00:01Z",
			[]string{"2026-01-01T00:00:02Z", "2026-01-01T00:00:04Z"}},
		{"interval in words", KindInterval, "every 90 minutes", "", "2026-01-01T00:00:00Z",
			[]string{"2026-01-01T01:30:00Z", "2026-01-01T03:00:00Z"}},
		{"once in the future", KindOnce, "2026-06-01T09:00:00+02:00", "", "2026-01-01T00:00:00Z",
			[]string{"2026-06-01T07:00:00Z"}},
		{"once already past", KindOnce, "2025-06-01T09:00:00Z", "", "2026-01-01T00:00:00Z", nil},
		{"weekdays at 09:00 Berlin", KindCron, "0 9 * * 1-5", "Europe/Berlin", "2026-01-02T09:00:00Z",
			[]string{"2026-01-05T08:00:00Z", "2026-01-06T08:00:00Z"}},
		// Europe/Berlin springs forward on 2026-03-29 at 02:00 CET to 03:00
		// CEST: 02:30 does not exist that day and fires at the jump.
		{"spring forward Berlin: skipped time fires at the jump", KindCron, "30 2 * * *", "Europe/Berlin", "2026-03-27T12:00:00Z",
			[]string{"2026-03-28T01:30:00Z", "2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"}},
		// And falls back on 2026-10-25 at 03:00 CEST to 02:00 CET: 02:30
		// happens twice and fires once.
		{"fall back Berlin: repeated time fires once", KindCron, "30 2 * * *", "Europe/Berlin", "2026-10-23T12:00:00Z",
			[]string{"2026-10-24T00:30:00Z", "2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"}},
		{"spring forward New York", KindCron, "30 2 * * *", "America/New_York", "2026-03-07T12:00:00Z",
			[]string{"2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z"}},
		{"fall back New York", KindCron, "30 1 * * *", "America/New_York", "2026-10-31T12:00:00Z",
			[]string{"2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"}},
		// A wildcard hour runs in real time: the repeated hour is an hour.
		{"hourly across fall back", KindCron, "0 * * * *", "Europe/Berlin", "2026-10-24T23:30:00Z",
			[]string{"2026-10-25T00:00:00Z", "2026-10-25T01:00:00Z", "2026-10-25T02:00:00Z"}},
		{"hourly across spring forward", KindCron, "0 * * * *", "Europe/Berlin", "2026-03-28T23:30:00Z",
			[]string{"2026-03-29T00:00:00Z", "2026-03-29T01:00:00Z", "2026-03-29T02:00:00Z"}},
		{"fixed time outside the jump is unaffected", KindCron, "0 9 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z",
			[]string{"2026-03-29T07:00:00Z", "2026-03-30T07:00:00Z"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(tc.kind, tc.expr, tc.tz)
			if err != nil {
				t.Fatal(err)
			}
			got := Preview(s, mustTime(t, tc.from), len(tc.want)+1)
			if tc.want == nil {
				if len(got) != 0 {
					t.Fatalf("got %v, want none", got)
				}
				return
			}
			for i, w := range tc.want {
				if i >= len(got) || !got[i].Equal(mustTime(t, w)) {
					t.Fatalf("fire %d = %v, want %s (all: %v)", i, got, w, got)
				}
			}
		})
	}
}

// TestDSTDaysFireOncePerDay walks a whole year minute by minute-ish (by
// fire) and checks a daily fixed-time job fires exactly once every local
// day, through both jumps.
func TestDSTDaysFireOncePerDay(t *testing.T) {
	for _, tz := range []string{"Europe/Berlin", "America/New_York"} {
		for _, expr := range []string{"30 2 * * *", "0 2 * * *", "59 1 * * *", "30 1 * * *"} {
			s, err := Parse(KindCron, expr, tz)
			if err != nil {
				t.Fatal(err)
			}
			loc, _ := Location(tz)
			from := time.Date(2026, 1, 1, 0, 0, 0, 0, loc)
			seen := map[string]int{}
			for _, f := range Preview(s, from, 365) {
				seen[f.In(loc).Format(time.DateOnly)]++
			}
			for d := from; d.Year() == 2026; d = d.AddDate(0, 0, 1) {
				if n := seen[d.Format(time.DateOnly)]; n != 1 && d.YearDay() < 365 {
					t.Errorf("%s %q: %d fires on %s, want 1", tz, expr, n, d.Format(time.DateOnly))
				}
			}
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ kind, expr, tz string }{
		{KindCron, "", ""},
		{KindCron, "61 * * * *", ""},
		{KindCron, "* * *", ""},
		{KindCron, "0 9 * * *", "Mars/Olympus"},
		{KindCron, "TZ=UTC 0 9 * * *", ""},
		{KindInterval, "every 0s", ""},
		{KindInterval, "every 500ms", ""},
		{KindInterval, "every fortnight", ""},
		{KindInterval, "every 3 parsecs", ""},
		{KindOnce, "tomorrow", ""},
		{"weekly", "x", ""},
	}
	for _, tc := range tests {
		if _, err := Parse(tc.kind, tc.expr, tc.tz); !errors.Is(err, ErrInvalid) {
			t.Errorf("Parse(%q, %q, %q) = %v, want ErrInvalid", tc.kind, tc.expr, tc.tz, err)
		}
	}
}
