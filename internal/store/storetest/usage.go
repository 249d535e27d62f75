package storetest

// Usage and cost (issue 16, h16-usage).

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

func usageDraft(sid, rid string, u event.UsageTotals) event.Draft {
	return draft(sid, rid, event.Usage, event.UsagePayload{TurnID: "t", Turn: u})
}

// started is a run.started payload with the profile the profiles work
// will add (a field the store reads by name).
type started struct {
	event.RunStartedPayload
	ProfileID string `json:"profile_id,omitempty"`
}

func testUsage(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	before := time.Now().Add(-store.UsageBucket)
	addSession(t, db, "s-1", t0)
	addSession(t, db, "s-2", t0)
	for _, r := range []struct{ id, sid, model string }{
		{"r-1", "s-1", "m-a"}, {"r-2", "s-1", "m-b"}, {"r-3", "s-2", "m-a"}, {"r-4", "s-2", "m-none"}, {"r-5", "s-2", "m-fallback"},
	} {
		addRun(t, db, store.Run{ID: r.id, SessionID: r.sid, Status: run.Running, Model: r.model})
	}
	appendEvents(t, db, "",
		draft("s-1", "r-1", event.RunStarted, started{event.RunStartedPayload{Model: "m-a", Provider: "p-1"}, "prof-1"}),
		usageDraft("s-1", "r-1", event.UsageTotals{InputTokens: 100, OutputTokens: 10, CachedTokens: 5, CostUSD: 0.25}),
		// A streamed fragment and other events count nothing.
		draft("s-1", "r-1", event.MessageDelta, event.DeltaPayload{ID: "m", Delta: "hi"}),
		usageDraft("s-1", "r-1", event.UsageTotals{InputTokens: 200, OutputTokens: 20, ReasoningTokens: 7, CostUSD: 0.5}),
		draft("s-1", "r-2", event.RunStarted, started{event.RunStartedPayload{Model: "m-b", Provider: "p-2"}, ""}),
		usageDraft("s-1", "r-2", event.UsageTotals{InputTokens: 1000, OutputTokens: 100}),
		draft("s-2", "r-3", event.RunStarted, started{event.RunStartedPayload{Model: "m-a", Provider: "p-1"}, "prof-1"}),
		usageDraft("s-2", "r-3", event.UsageTotals{InputTokens: 1, OutputTokens: 2, CostUSD: 0.125}),
		// A run that used nothing is in no row.
		draft("s-2", "r-4", event.RunStarted, started{event.RunStartedPayload{Model: "m-none", Provider: "p-1"}, ""}),
		// Usage with no run.started falls back to the run's model.
		usageDraft("s-2", "r-5", event.UsageTotals{InputTokens: 3}),
	)
	// A resumed run answered by another model: its later calls count
	// under that model, the run once, where it first used tokens.
	appendEvents(t, db, "",
		draft("s-2", "r-3", event.RunStarted, started{event.RunStartedPayload{Model: "m-b", Provider: "p-2", Resumed: true}, "prof-1"}),
		usageDraft("s-2", "r-3", event.UsageTotals{InputTokens: 10, OutputTokens: 20}),
	)
	after := time.Now().Add(store.UsageBucket)

	type want struct {
		key   string
		title string
		u     event.UsageTotals
		runs  int64
		calls int64
	}
	r1 := event.UsageTotals{InputTokens: 300, OutputTokens: 30, CachedTokens: 5, ReasoningTokens: 7, CostUSD: 0.75}
	r2 := event.UsageTotals{InputTokens: 1000, OutputTokens: 100}
	r3a := event.UsageTotals{InputTokens: 1, OutputTokens: 2, CostUSD: 0.125}
	r3b := event.UsageTotals{InputTokens: 10, OutputTokens: 20}
	r5 := event.UsageTotals{InputTokens: 3}
	cases := []struct {
		group string
		want  []want
	}{
		{store.UsageByModel, []want{
			{"m-a", "", r1.Add(r3a), 2, 3}, {"m-b", "", r2.Add(r3b), 1, 2}, {"m-fallback", "", r5, 1, 1}}},
		{store.UsageByProvider, []want{
			{"", "", r5, 1, 1}, {"p-1", "", r1.Add(r3a), 2, 3}, {"p-2", "", r2.Add(r3b), 1, 2}}},
		{store.UsageByProfile, []want{
			{"", "", r2.Add(r5), 2, 2}, {"prof-1", "", r1.Add(r3a).Add(r3b), 2, 4}}},
		{store.UsageBySession, []want{
			{"s-1", "title s-1", r1.Add(r2), 2, 3}, {"s-2", "title s-2", r3a.Add(r3b).Add(r5), 2, 3}}},
	}
	check := func(t *testing.T, got []store.UsageRow, w []want) {
		t.Helper()
		if len(got) != len(w) {
			t.Fatalf("rows = %+v, want %+v", got, w)
		}
		for i := range w {
			g := got[i]
			if g.Key != w[i].key || g.Title != w[i].title || g.Usage != w[i].u || g.Runs != w[i].runs || g.Calls != w[i].calls {
				t.Fatalf("row %d = %+v, want %+v", i, g, w[i])
			}
		}
	}
	for _, tc := range cases {
		t.Run(tc.group, func(t *testing.T) {
			got, err := db.Usage(ctx, store.UsageQuery{GroupBy: tc.group})
			if err != nil {
				t.Fatal(err)
			}
			check(t, got, tc.want)
			// The same bounded by the period that holds every call.
			got, err = db.Usage(ctx, store.UsageQuery{GroupBy: tc.group, From: before, To: after})
			if err != nil {
				t.Fatal(err)
			}
			check(t, got, tc.want)
		})
	}

	// Buckets are aligned, fall in the period and add up to everything.
	buckets, err := db.Usage(ctx, store.UsageQuery{GroupBy: store.UsageByBucket})
	if err != nil {
		t.Fatal(err)
	}
	var sum event.UsageTotals
	var runs, calls int64
	for _, b := range buckets {
		if b.Key != "" || b.Start.UnixMilli()%store.UsageBucket.Milliseconds() != 0 || b.Start.Before(before) || !b.Start.Before(after) {
			t.Fatalf("bucket %+v outside [%v, %v) or not aligned", b, before, after)
		}
		sum, runs, calls = sum.Add(b.Usage), runs+b.Runs, calls+b.Calls
	}
	if all := r1.Add(r2).Add(r3a).Add(r3b).Add(r5); sum != all || runs != 4 || calls != 6 {
		t.Fatalf("buckets add up to %+v, %d runs, %d calls; want %+v, 4, 6", sum, runs, calls, all)
	}

	// A period with no calls is empty, not an error.
	for _, q := range []store.UsageQuery{
		{GroupBy: store.UsageByModel, From: after},
		{GroupBy: store.UsageByBucket, To: before},
	} {
		got, err := db.Usage(ctx, q)
		if err != nil || len(got) != 0 {
			t.Fatalf("Usage(%+v) = %+v, %v; want none", q, got, err)
		}
	}
	if _, err := db.Usage(ctx, store.UsageQuery{GroupBy: "colour"}); err == nil {
		t.Fatal("an unknown grouping was answered")
	}

	// Money spent stays spent: a deleted session's usage stays, untitled.
	write(t, db, func(tx store.Tx) error { return tx.DeleteSession(ctx, "s-1") })
	got, err := db.Usage(ctx, store.UsageQuery{GroupBy: store.UsageBySession})
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, []want{{"s-1", "", r1.Add(r2), 2, 3}, {"s-2", "title s-2", r3a.Add(r3b).Add(r5), 2, 3}})
}

// SeedUsage writes n runs for the usage benchmarks, ten per session (a
// session on one of three models on one of two providers), each
// run.started, two usage events and, between them, three streamed
// fragments a report must not read: 6n events in all, every one now.
func SeedUsage(b testing.TB, db store.Store, n int) {
	b.Helper()
	const batch = 1_000
	for start := 0; start < n; start += batch {
		SeedUsageFrom(b, db, start, min(batch, n-start))
	}
}

// SeedUsageFrom writes SeedUsage's runs first..first+n-1 in one
// transaction (first a multiple of ten: sessions start there).
func SeedUsageFrom(b testing.TB, db store.Store, first, n int) {
	b.Helper()
	ctx := context.Background()
	if err := db.Write(ctx, func(tx store.Tx) error {
		for i := first; i < first+n; i++ {
			sid, rid := fmt.Sprintf("ses_%08d", i/10), fmt.Sprintf("run_%08d", i)
			if i%10 == 0 {
				if err := tx.InsertSession(ctx, store.Session{ID: sid, Title: "s", Workspace: "/ws", CreatedAt: t0, UpdatedAt: t0}); err != nil {
					return err
				}
			}
			if err := tx.InsertRun(ctx, store.Run{ID: rid, SessionID: sid, Status: run.Running, Input: "x", CreatedAt: t0}); err != nil {
				return err
			}
			u := event.UsageTotals{InputTokens: 1000, OutputTokens: 100, CachedTokens: 10, CostUSD: 0.001}
			ds := []event.Draft{draft(sid, rid, event.RunStarted,
				event.RunStartedPayload{Attempt: 1, Model: fmt.Sprintf("model-%d", i/10%3), Provider: fmt.Sprintf("provider-%d", i/10%2)}),
				usageDraft(sid, rid, u)}
			for range 3 {
				ds = append(ds, draft(sid, rid, event.MessageDelta, event.DeltaPayload{ID: "m", TurnID: "t", Delta: "some streamed text"}))
			}
			ds = append(ds, usageDraft(sid, rid, u))
			if _, err := tx.AppendEvents(ctx, "", ds...); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
}
