package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

func testRunRoundTripAndUpdate(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	addSession(t, db, "s1", t0)
	r := addRun(t, db, store.Run{ID: "r1", SessionID: "s1", Status: run.Queued, Input: "do it", Model: "m",
		Priority: 3, CreatedAt: at(5), Usage: event.UsageTotals{InputTokens: 7}, ExpiresAt: at(600)})
	if got := getRun(t, db, "r1"); got != r {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, r)
	}
	upd := r
	upd.Status, upd.RunnerID, upd.LeaseExpiresAt, upd.Attempt = run.Running, "runner-1", at(100), 1
	upd.ErrorCode, upd.ErrorMessage, upd.StartedAt, upd.EndedAt = "c", "msg", at(10), at(20)
	upd.Usage = event.UsageTotals{InputTokens: 1, OutputTokens: 2, CachedTokens: 3, ReasoningTokens: 4}
	upd.Input, upd.LastSeq = "ignored", 99 // not mutable through UpdateRun
	write(t, db, func(tx store.Tx) error { return tx.UpdateRun(ctx, upd, run.Queued) })
	want := upd
	want.Input, want.LastSeq = r.Input, 0
	if got := getRun(t, db, "r1"); got != want {
		t.Fatalf("after update:\n got %+v\nwant %+v", got, want)
	}
	// A status precondition that no longer holds is a conflict.
	err := db.Write(ctx, func(tx store.Tx) error { return tx.UpdateRun(ctx, upd, run.Queued, run.Paused) })
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("err = %v, want ErrConflict", err)
	}
	err = db.Write(ctx, func(tx store.Tx) error { return tx.UpdateRun(ctx, store.Run{ID: "nope", Status: run.Running}) })
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("missing run: err = %v, want ErrConflict", err)
	}
	if _, err := db.GetRun(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get missing: %v", err)
	}
}

func testClaimNext(t *testing.T, open Open) {
	ctx := context.Background()
	now := at(10_000)
	type claim struct {
		id      string // "" means nothing claimable
		prev    run.Status
		attempt int
	}
	tests := []struct {
		name   string
		runs   []store.Run
		reqs   []store.Request // pending requests
		claims []claim
	}{
		{
			name: "priority desc then oldest",
			runs: []store.Run{
				{ID: "a-low-old", SessionID: "a", Priority: 0, CreatedAt: at(1)},
				{ID: "b-high-new", SessionID: "b", Priority: 5, CreatedAt: at(30)},
				{ID: "c-high-old", SessionID: "c", Priority: 5, CreatedAt: at(20)},
				{ID: "d-low-new", SessionID: "d", Priority: 0, CreatedAt: at(40)},
			},
			claims: []claim{{"c-high-old", run.Queued, 1}, {"b-high-new", run.Queued, 1},
				{"a-low-old", run.Queued, 1}, {"d-low-new", run.Queued, 1}, {id: ""}},
		},
		{
			name: "session with a busy run blocks its queued runs",
			runs: []store.Run{
				{ID: "a-running", SessionID: "a", Status: run.Running, RunnerID: "other", LeaseExpiresAt: at(99_000), CreatedAt: at(1)},
				{ID: "a-queued", SessionID: "a", Priority: 9, CreatedAt: at(2)},
				{ID: "b-awaiting", SessionID: "b", Status: run.AwaitingApproval, RunnerID: "other", LeaseExpiresAt: at(99_000), CreatedAt: at(1)},
				{ID: "b-queued", SessionID: "b", Priority: 9, CreatedAt: at(2)},
				{ID: "c-paused", SessionID: "c", Status: run.Paused, CreatedAt: at(1)},
				{ID: "c-queued", SessionID: "c", Priority: 9, CreatedAt: at(2)},
				{ID: "d-cancelling", SessionID: "d", Status: run.Cancelling, RunnerID: "other", LeaseExpiresAt: at(99_000), CreatedAt: at(1)},
				{ID: "d-queued", SessionID: "d", Priority: 9, CreatedAt: at(2)},
				{ID: "e-clarify", SessionID: "e", Status: run.AwaitingClarify, RunnerID: "other", LeaseExpiresAt: at(99_000), CreatedAt: at(1)},
				{ID: "e-queued", SessionID: "e", Priority: 9, CreatedAt: at(2)},
				{ID: "f-queued", SessionID: "f", Priority: 0, CreatedAt: at(50)},
			},
			claims: []claim{{"f-queued", run.Queued, 1}, {id: ""}},
		},
		{
			name: "finished and interrupted runs do not block",
			runs: []store.Run{
				{ID: "a-done", SessionID: "a", Status: run.Completed, CreatedAt: at(1)},
				{ID: "a-interrupted", SessionID: "a", Status: run.Interrupted, CreatedAt: at(2)},
				{ID: "a-queued", SessionID: "a", CreatedAt: at(3)},
			},
			claims: []claim{{"a-queued", run.Queued, 1}, {id: ""}},
		},
		{
			name: "one run per session at a time, best of the session first",
			runs: []store.Run{
				{ID: "a-1", SessionID: "a", Priority: 0, CreatedAt: at(1)},
				{ID: "a-2", SessionID: "a", Priority: 1, CreatedAt: at(2)},
				{ID: "b-1", SessionID: "b", Priority: 0, CreatedAt: at(3)},
			},
			// After a-2 is claimed session a is busy, so b-1 is next and
			// a-1 waits.
			claims: []claim{{"a-2", run.Queued, 1}, {"b-1", run.Queued, 1}, {id: ""}},
		},
		{
			name: "awaiting run with expired lease is re-claimed without a new attempt",
			runs: []store.Run{
				{ID: "a-approval", SessionID: "a", Status: run.AwaitingApproval, RunnerID: "dead", Attempt: 2, LeaseExpiresAt: at(9_999), CreatedAt: at(2)},
				{ID: "b-clarify", SessionID: "b", Status: run.AwaitingClarify, RunnerID: "dead", Attempt: 1, LeaseExpiresAt: at(5_000), CreatedAt: at(1)},
				{ID: "c-live", SessionID: "c", Status: run.AwaitingApproval, RunnerID: "alive", Attempt: 1, LeaseExpiresAt: at(10_001), CreatedAt: at(0)},
				{ID: "d-running-expired", SessionID: "d", Status: run.Running, RunnerID: "dead", Attempt: 1, LeaseExpiresAt: at(1), CreatedAt: at(0)},
			},
			claims: []claim{{"b-clarify", run.AwaitingClarify, 1}, {"a-approval", run.AwaitingApproval, 2}, {id: ""}},
		},
		{
			name: "awaiting runs whose runner is gone go before queued runs",
			runs: []store.Run{
				{ID: "a-approval", SessionID: "a", Status: run.AwaitingApproval, RunnerID: "dead", Attempt: 1, LeaseExpiresAt: at(1), CreatedAt: at(0)},
				{ID: "b-queued", SessionID: "b", CreatedAt: at(50), Attempt: 3},
			},
			claims: []claim{{"a-approval", run.AwaitingApproval, 1}, {"b-queued", run.Queued, 4}, {id: ""}},
		},
		{
			// A parked run holds no runner; it is claimable once nothing of
			// it is pending, or what is pending has expired by time.
			name: "parked runs are claimed once answered or overdue, never while a request is pending",
			runs: []store.Run{
				{ID: "a-waiting", SessionID: "a", Status: run.AwaitingClarify, Attempt: 1, CreatedAt: at(0)},
				{ID: "b-answered", SessionID: "b", Status: run.AwaitingApproval, Attempt: 1, CreatedAt: at(1)},
				{ID: "c-overdue", SessionID: "c", Status: run.AwaitingApproval, Attempt: 2, CreatedAt: at(2)},
				{ID: "d-queued", SessionID: "d", CreatedAt: at(3)},
			},
			reqs: []store.Request{
				{ID: "req-a", RunID: "a-waiting", SessionID: "a", Kind: store.KindClarify, ToolCallID: "c1", CreatedAt: at(0)},
				{ID: "req-a2", RunID: "a-waiting", SessionID: "a", Kind: store.KindClarify, ToolCallID: "c2", CreatedAt: at(0), ExpiresAt: at(99_000)},
				{ID: "req-c", RunID: "c-overdue", SessionID: "c", Kind: store.KindApproval, ToolCallID: "c3", CreatedAt: at(2), ExpiresAt: at(3)},
			},
			claims: []claim{{"b-answered", run.AwaitingApproval, 1}, {"c-overdue", run.AwaitingApproval, 2}, {"d-queued", run.Queued, 1}, {id: ""}},
		},
		{
			// Run expiry (h17-expiry): a run past its deadline is never
			// claimed, whatever it waits in; one before it is.
			name: "runs past their expiry are never claimed",
			runs: []store.Run{
				{ID: "a-queued-expired", SessionID: "a", Priority: 9, CreatedAt: at(0), ExpiresAt: at(10_000)},
				{ID: "b-recovering-expired", SessionID: "b", Status: run.Recovering, Attempt: 1, CreatedAt: at(1), ExpiresAt: at(5_000)},
				{ID: "c-parked-expired", SessionID: "c", Status: run.AwaitingApproval, Attempt: 1, CreatedAt: at(2), ExpiresAt: at(9_999)},
				{ID: "d-dead-runner-expired", SessionID: "d", Status: run.AwaitingClarify, RunnerID: "dead", LeaseExpiresAt: at(1), Attempt: 1, CreatedAt: at(3), ExpiresAt: at(1)},
				{ID: "e-queued-in-time", SessionID: "e", CreatedAt: at(4), ExpiresAt: at(10_001)},
				{ID: "f-parked-in-time", SessionID: "f", Status: run.AwaitingApproval, Attempt: 1, CreatedAt: at(5), ExpiresAt: at(20_000)},
			},
			claims: []claim{{"f-parked-in-time", run.AwaitingApproval, 1}, {"e-queued-in-time", run.Queued, 1}, {id: ""}},
		},
		{name: "empty", claims: []claim{{id: ""}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := fresh(t, open)
			sessions := map[string]bool{}
			for _, r := range tc.runs {
				if !sessions[r.SessionID] {
					sessions[r.SessionID] = true
					addSession(t, db, r.SessionID, t0)
				}
				addRun(t, db, r)
			}
			for _, q := range tc.reqs {
				q.Status, q.Prompt = store.RequestPending, json.RawMessage(`{}`)
				write(t, db, func(tx store.Tx) error { return tx.InsertRequest(ctx, q) })
			}
			for i, want := range tc.claims {
				var got store.Run
				var prev run.Status
				var ok bool
				lease := now.Add(time.Duration(i+1) * time.Second)
				write(t, db, func(tx store.Tx) error {
					var err error
					got, prev, ok, err = tx.ClaimNext(ctx, "me", now, lease)
					return err
				})
				if want.id == "" {
					if ok {
						t.Fatalf("claim %d: got %s, want nothing", i, got.ID)
					}
					continue
				}
				if !ok || got.ID != want.id || prev != want.prev {
					t.Fatalf("claim %d: got %q prev %q ok %v; want %q prev %q", i, got.ID, prev, ok, want.id, want.prev)
				}
				wantStatus := prev
				if prev == run.Queued {
					wantStatus = run.Running
				}
				stored := getRun(t, db, got.ID)
				if stored != got {
					t.Fatalf("claim %d: returned %+v, stored %+v", i, got, stored)
				}
				if got.Status != wantStatus || got.Attempt != want.attempt || got.RunnerID != "me" ||
					!got.LeaseExpiresAt.Equal(lease) || got.StartedAt.IsZero() {
					t.Fatalf("claim %d: %+v; want status %s attempt %d runner me lease %v", i, got, wantStatus, want.attempt, lease)
				}
			}
		})
	}
}

func testClaimNextKeepsStartedAt(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	addSession(t, db, "a", t0)
	addRun(t, db, store.Run{ID: "r", SessionID: "a", Status: run.AwaitingApproval, RunnerID: "dead",
		StartedAt: at(7), LeaseExpiresAt: at(1)})
	var got store.Run
	write(t, db, func(tx store.Tx) error {
		var err error
		got, _, _, err = tx.ClaimNext(ctx, "me", at(100), at(200))
		return err
	})
	if !got.StartedAt.Equal(at(7)) {
		t.Fatalf("started_at = %v, want %v", got.StartedAt, at(7))
	}
}

func testRenewLeases(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	addSession(t, db, "s", t0)
	old := at(1000)
	runs := []store.Run{
		{ID: "x-running", Status: run.Running, RunnerID: "x"},
		{ID: "x-approval", Status: run.AwaitingApproval, RunnerID: "x"},
		{ID: "x-clarify", Status: run.AwaitingClarify, RunnerID: "x"},
		{ID: "x-cancelling", Status: run.Cancelling, RunnerID: "x"},
		{ID: "x-paused", Status: run.Paused, RunnerID: "x"},
		{ID: "x-completed", Status: run.Completed, RunnerID: "x"},
		{ID: "x-queued", Status: run.Queued, RunnerID: "x"},
		{ID: "y-running", Status: run.Running, RunnerID: "y"},
	}
	for _, r := range runs {
		r.SessionID, r.LeaseExpiresAt = "s", old
		addRun(t, db, r)
	}
	until := at(50_000)
	var renewed []string
	write(t, db, func(tx store.Tx) error {
		var err error
		renewed, err = tx.RenewLeases(ctx, "x", until)
		return err
	})
	slices.Sort(renewed)
	want := []string{"x-approval", "x-cancelling", "x-clarify", "x-running"}
	if !slices.Equal(renewed, want) {
		t.Fatalf("renewed %v, want %v", renewed, want)
	}
	for _, r := range runs {
		wantLease := old
		if slices.Contains(want, r.ID) {
			wantLease = until
		}
		if got := getRun(t, db, r.ID).LeaseExpiresAt; !got.Equal(wantLease) {
			t.Fatalf("%s: lease %v, want %v", r.ID, got, wantLease)
		}
	}
	write(t, db, func(tx store.Tx) error {
		ids, err := tx.RenewLeases(ctx, "nobody", until)
		if err == nil && len(ids) != 0 {
			t.Errorf("renewed for unknown runner: %v", ids)
		}
		return err
	})
}

func testResolveRequestFirstWins(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	addSessionRun(t, db, "s", "r")
	for _, id := range []string{"q1", "q2"} {
		write(t, db, func(tx store.Tx) error {
			return tx.InsertRequest(ctx, store.Request{ID: id, RunID: "r", SessionID: "s", Kind: store.KindApproval,
				Status: store.RequestPending, ToolCallID: "tc", Prompt: json.RawMessage(`{"tool":"bash"}`),
				CreatedAt: at(1), ExpiresAt: at(60_000)})
		})
	}
	resolve := func(id, status, resp string, when time.Time) error {
		return db.Write(ctx, func(tx store.Tx) error { return tx.ResolveRequest(ctx, id, status, resp, when) })
	}
	steps := []struct {
		id, status, resp string
		want             error
	}{
		{"q1", store.RequestResolved, "once", nil},
		{"q1", store.RequestResolved, "deny", store.ErrConflict},
		{"q1", store.RequestExpired, "", store.ErrConflict},
		{"q2", store.RequestExpired, "", nil},
		{"q2", store.RequestResolved, "always", store.ErrConflict},
		{"missing", store.RequestResolved, "once", store.ErrNotFound},
	}
	for i, s := range steps {
		err := resolve(s.id, s.status, s.resp, at(100+i))
		if (s.want == nil) != (err == nil) || (s.want != nil && !errors.Is(err, s.want)) {
			t.Fatalf("step %d (%s -> %s): err %v, want %v", i, s.id, s.status, err, s.want)
		}
	}
	q1, err := db.GetRequest(ctx, "q1")
	if err != nil || q1.Status != store.RequestResolved || q1.Response != "once" || !q1.ResolvedAt.Equal(at(100)) ||
		string(q1.Prompt) != `{"tool":"bash"}` || !q1.ExpiresAt.Equal(at(60_000)) {
		t.Fatalf("q1 = %+v, %v", q1, err)
	}
	q2, _ := db.GetRequest(ctx, "q2")
	if q2.Status != store.RequestExpired || q2.Response != "" {
		t.Fatalf("q2 = %+v", q2)
	}
	for _, tc := range []struct {
		q    store.RequestQuery
		want []string
	}{
		{store.RequestQuery{}, []string{"q1", "q2"}},
		{store.RequestQuery{Status: store.RequestExpired}, []string{"q2"}},
		{store.RequestQuery{Status: store.RequestPending}, nil},
		{store.RequestQuery{RunID: "r", SessionID: "s"}, []string{"q1", "q2"}},
		{store.RequestQuery{SessionID: "other"}, nil},
	} {
		got, err := db.ListRequests(ctx, tc.q)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, q := range got {
			ids = append(ids, q.ID)
		}
		if !slices.Equal(ids, tc.want) {
			t.Fatalf("ListRequests(%+v) = %v, want %v", tc.q, ids, tc.want)
		}
	}
}
