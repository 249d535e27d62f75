package api

import (
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// Buckets go to the day they fall on in the caller's zone, whatever its
// offset (a half hour, three quarters, a day-long one across a DST change).
func TestUsageDaysFollowTheZone(t *testing.T) {
	bucket := func(utc string, in int64) store.UsageRow {
		ts, err := time.Parse(time.RFC3339, utc)
		if err != nil {
			t.Fatal(err)
		}
		return store.UsageRow{Start: ts, Usage: event.UsageTotals{InputTokens: in}, Runs: 1, Calls: 1}
	}
	cases := []struct {
		tz       string
		from, to string
		buckets  []store.UsageRow
		want     map[string]int64 // day -> input tokens
	}{
		{"UTC", "2026-03-01", "2026-03-02", []store.UsageRow{
			bucket("2026-03-01T23:45:00Z", 1), bucket("2026-03-02T00:00:00Z", 2)},
			map[string]int64{"2026-03-01": 1, "2026-03-02": 2}},
		// +05:30: 18:15 UTC is 23:45 local, 18:30 UTC the next midnight.
		{"Asia/Kolkata", "2026-03-01", "2026-03-02", []store.UsageRow{
			bucket("2026-03-01T18:15:00Z", 1), bucket("2026-03-01T18:30:00Z", 2)},
			map[string]int64{"2026-03-01": 1, "2026-03-02": 2}},
		// +05:45.
		{"Asia/Kathmandu", "2026-03-01", "2026-03-02", []store.UsageRow{
			bucket("2026-03-01T18:00:00Z", 1), bucket("2026-03-01T18:15:00Z", 2)},
			map[string]int64{"2026-03-01": 1, "2026-03-02": 2}},
		// New York springs forward on 2026-03-08: midnight is -05:00 before
		// and -04:00 after.
		{"America/New_York", "2026-03-08", "2026-03-09", []store.UsageRow{
			bucket("2026-03-08T04:45:00Z", 1), bucket("2026-03-08T05:00:00Z", 2),
			bucket("2026-03-09T03:45:00Z", 4), bucket("2026-03-09T04:00:00Z", 8)},
			map[string]int64{"2026-03-08": 2 + 4, "2026-03-09": 8}},
	}
	for _, tc := range cases {
		t.Run(tc.tz, func(t *testing.T) {
			loc, err := time.LoadLocation(tc.tz)
			if err != nil {
				t.Fatal(err)
			}
			from, _ := time.Parse(time.DateOnly, tc.from)
			to, _ := time.Parse(time.DateOnly, tc.to)
			rows := usageDays(tc.buckets, from, to, loc)
			if len(rows) != len(tc.want) {
				t.Fatalf("rows = %+v, want days %v", rows, tc.want)
			}
			for _, r := range rows {
				if r.InputTokens != tc.want[r.Key] {
					t.Fatalf("day %s: %d input tokens, want %d (rows %+v)", r.Key, r.InputTokens, tc.want[r.Key], rows)
				}
			}
		})
	}
}

// The period is whole local days, also around a day whose midnight the
// zone skips: Santiago springs forward from 00:00 to 01:00 on 2026-09-06,
// so that day starts at 01:00 (-03:00) and the day before ends there.
func TestUsagePeriodIsWholeLocalDays(t *testing.T) {
	loc, err := time.LoadLocation("America/Santiago")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ from, to, start, end string }{
		{"2026-09-06", "2026-09-06", "2026-09-06T01:00:00-03:00", "2026-09-07T00:00:00-03:00"},
		{"2026-09-05", "2026-09-05", "2026-09-05T00:00:00-04:00", "2026-09-06T01:00:00-03:00"},
		{"2026-03-01", "2026-03-01", "2026-03-01T00:00:00-03:00", "2026-03-02T00:00:00-03:00"},
	} {
		from, _ := time.Parse(time.DateOnly, tc.from)
		to, _ := time.Parse(time.DateOnly, tc.to)
		q := usageRequest{from: from, to: to, loc: loc}
		start, _ := time.Parse(time.RFC3339, tc.start)
		end, _ := time.Parse(time.RFC3339, tc.end)
		if !q.start().Equal(start) || !q.end().Equal(end) {
			t.Errorf("%s..%s: [%s, %s), want [%s, %s)", tc.from, tc.to, q.start().Format(time.RFC3339), q.end().Format(time.RFC3339), tc.start, tc.end)
		}
		if got := usageDays(nil, from, to, loc); len(got) != 1 || got[0].Key != tc.from {
			t.Errorf("%s: days %+v", tc.from, got)
		}
	}
}
