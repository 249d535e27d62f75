package storetest

// The smaller records: controls, approval rules, runner registrations, and
// the orders runs are listed in.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

func testControls(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	addSessionRun(t, db, "s1", "r1")
	addSessionRun(t, db, "s2", "r2")
	controls := []store.Control{
		{ID: "c-b", RunID: "r1", Kind: "cancel", Payload: json.RawMessage(`{"reason":"x"}`), CreatedAt: at(20)},
		{ID: "c-a", RunID: "r1", Kind: "cancel", CreatedAt: at(20)}, // same time: by id
		{ID: "c-0", RunID: "r1", Kind: "pause", Payload: json.RawMessage(`{}`), CreatedAt: at(10)},
		{ID: "c-other", RunID: "r2", Kind: "cancel", CreatedAt: at(1)},
	}
	for _, c := range controls {
		write(t, db, func(tx store.Tx) error { return tx.InsertControl(ctx, c) })
	}
	write(t, db, func(tx store.Tx) error {
		got, err := tx.ListControls(ctx, "r1")
		if err != nil {
			return err
		}
		var ids []string
		for _, c := range got {
			ids = append(ids, c.ID)
		}
		if want := []string{"c-0", "c-a", "c-b"}; !slices.Equal(ids, want) {
			return fmt.Errorf("controls of r1: %v, want %v", ids, want)
		}
		if c := got[2]; c.Kind != "cancel" || string(c.Payload) != `{"reason":"x"}` || !c.CreatedAt.Equal(at(20)) || c.RunID != "r1" {
			return fmt.Errorf("control round trip: %+v", c)
		}
		if string(got[1].Payload) != "{}" {
			return fmt.Errorf("empty payload stored as %q, want {}", got[1].Payload)
		}
		if none, err := tx.ListControls(ctx, "nope"); err != nil || len(none) != 0 {
			return fmt.Errorf("controls of an unknown run: %v %v", none, err)
		}
		return nil
	})
	// A control names a run that exists.
	if err := db.Write(ctx, func(tx store.Tx) error {
		return tx.InsertControl(ctx, store.Control{ID: "c-x", RunID: "nope", Kind: "cancel", CreatedAt: at(1)})
	}); err == nil {
		t.Fatal("control of an unknown run was stored")
	}
	// Duplicate ids are refused.
	if err := db.Write(ctx, func(tx store.Tx) error { return tx.InsertControl(ctx, controls[0]) }); err == nil {
		t.Fatal("duplicate control id was stored")
	}
}

func testRules(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	rules := []store.Rule{
		{ID: "r-always", Tool: "run_command", Pattern: "ls", Scope: "always", CreatedAt: at(3)},
		{ID: "r-s1", Tool: "run_command", Pattern: "make", Scope: "session", SessionID: "s1", CreatedAt: at(2)},
		{ID: "r-edit", Tool: "edit_file", Pattern: "ls", Scope: "session", SessionID: "s1", CreatedAt: at(2)},
	}
	for _, r := range rules {
		write(t, db, func(tx store.Tx) error { return tx.InsertRule(ctx, r) })
	}
	tests := []struct {
		tool, pattern, session string
		want                   string // "" not found
	}{
		{"run_command", "ls", "", "r-always"},
		{"run_command", "ls", "s9", "r-always"},
		{"run_command", "make", "s1", "r-s1"},
		{"run_command", "make", "s2", ""},
		{"run_command", "make", "", ""},
		{"edit_file", "ls", "s1", "r-edit"},
		{"edit_file", "ls", "s2", ""},
		{"run_command", "LS", "", ""}, // exact match
		{"run_command", "l%", "", ""}, // no pattern matching in the store
	}
	for _, tc := range tests {
		got, err := db.FindRule(ctx, tc.tool, tc.pattern, tc.session)
		if tc.want == "" {
			if !errors.Is(err, store.ErrNotFound) {
				t.Errorf("FindRule(%q, %q, %q) = %+v, %v; want not found", tc.tool, tc.pattern, tc.session, got, err)
			}
			continue
		}
		if err != nil || got.ID != tc.want {
			t.Errorf("FindRule(%q, %q, %q) = %+v, %v; want %s", tc.tool, tc.pattern, tc.session, got, err, tc.want)
		}
	}
	got, err := db.FindRule(ctx, "run_command", "make", "s1")
	if want := rules[1]; err != nil || got != want {
		t.Fatalf("round trip: %+v, %v; want %+v", got, err, want)
	}
	list, err := db.ListRules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range list {
		ids = append(ids, r.ID)
	}
	if want := []string{"r-edit", "r-s1", "r-always"}; !slices.Equal(ids, want) {
		t.Fatalf("ListRules: %v, want %v (oldest first, then by id)", ids, want)
	}
	write(t, db, func(tx store.Tx) error { return tx.DeleteRule(ctx, "r-always") })
	if _, err := db.FindRule(ctx, "run_command", "ls", ""); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted rule still found: %v", err)
	}
	if err := db.Write(ctx, func(tx store.Tx) error { return tx.DeleteRule(ctx, "r-always") }); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleting a missing rule: %v, want ErrNotFound", err)
	}
	if list, _ := db.ListRules(ctx); len(list) != 2 {
		t.Fatalf("%d rules after a delete, want 2", len(list))
	}
}

func testRunners(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	if list, err := db.ListRunners(ctx); err != nil || len(list) != 0 {
		t.Fatalf("runners of an empty store: %v %v", list, err)
	}
	b := store.RunnerInfo{ID: "b", Host: "h1", PID: 42, Version: "v1", StartedAt: at(5), HeartbeatAt: at(5)}
	a := store.RunnerInfo{ID: "a", Host: "h2", PID: 7, Version: "v2", StartedAt: at(5), HeartbeatAt: at(6)}
	c := store.RunnerInfo{ID: "c", Host: "h1", PID: 9, Version: "v1", StartedAt: at(1), HeartbeatAt: at(1)}
	for _, r := range []store.RunnerInfo{b, a, c} {
		write(t, db, func(tx store.Tx) error { return tx.UpsertRunner(ctx, r) })
	}
	// A heartbeat moves only the heartbeat: the registration stays.
	beat := b
	beat.HeartbeatAt, beat.PID, beat.Host, beat.Version, beat.StartedAt = at(99), 1, "other", "v9", at(50)
	write(t, db, func(tx store.Tx) error { return tx.UpsertRunner(ctx, beat) })
	list, err := db.ListRunners(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantB := b
	wantB.HeartbeatAt = at(99)
	if want := []store.RunnerInfo{c, a, wantB}; !slices.Equal(list, want) {
		t.Fatalf("runners:\n got %+v\nwant %+v", list, want)
	}
	write(t, db, func(tx store.Tx) error { return tx.DeleteRunner(ctx, "a") })
	write(t, db, func(tx store.Tx) error { return tx.DeleteRunner(ctx, "a") }) // gone already: fine
	if list, _ := db.ListRunners(ctx); len(list) != 2 || list[0].ID != "c" || list[1].ID != "b" {
		t.Fatalf("after delete: %+v", list)
	}
}

// Runs created in the same millisecond keep the order they were inserted
// in, whatever their ids: ids are random within a millisecond.
func testRunOrder(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	addSession(t, db, "s1", t0)
	addSession(t, db, "s2", t0)
	runs := []store.Run{
		{ID: "z-first", SessionID: "s1", CreatedAt: at(1)},
		{ID: "m-second", SessionID: "s1", CreatedAt: at(1)},
		{ID: "a-third", SessionID: "s1", CreatedAt: at(1)},
		{ID: "b-older", SessionID: "s1", CreatedAt: at(0), Status: run.Completed},
		{ID: "y-high", SessionID: "s2", CreatedAt: at(2), Priority: 5},
		{ID: "x-s2", SessionID: "s2", CreatedAt: at(1), Status: run.Recovering},
	}
	for _, r := range runs {
		addRun(t, db, r)
	}
	idsOf := func(rs []store.Run, err error) []string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}
	if got, want := idsOf(db.SessionRuns(ctx, "s1")), []string{"b-older", "z-first", "m-second", "a-third"}; !slices.Equal(got, want) {
		t.Fatalf("SessionRuns: %v, want %v", got, want)
	}
	if got := idsOf(db.SessionRuns(ctx, "nope")); len(got) != 0 {
		t.Fatalf("SessionRuns of an unknown session: %v", got)
	}
	if got, want := idsOf(db.RunsWithStatus(ctx, run.Queued, run.Recovering)), []string{"y-high", "z-first", "m-second", "a-third", "x-s2"}; !slices.Equal(got, want) {
		t.Fatalf("RunsWithStatus: %v, want %v", got, want)
	}
	if got := idsOf(db.RunsWithStatus(ctx)); len(got) != 0 {
		t.Fatalf("RunsWithStatus of no status: %v", got)
	}
	// The same millisecond, the same priority, three sessions: the claim
	// order is the insertion order.
	for i, id := range []string{"q-c", "q-a", "q-b"} {
		s := fmt.Sprintf("claim-%d", i)
		addSession(t, db, s, t0)
		addRun(t, db, store.Run{ID: id, SessionID: s, CreatedAt: at(0), Priority: 9})
	}
	var claimed []string
	for range 3 {
		write(t, db, func(tx store.Tx) error {
			r, _, ok, err := tx.ClaimNext(ctx, "me", at(10), at(1000))
			if ok {
				claimed = append(claimed, r.ID)
			}
			return err
		})
	}
	if want := []string{"q-c", "q-a", "q-b"}; !slices.Equal(claimed, want) {
		t.Fatalf("claimed %v, want %v", claimed, want)
	}
}

// An empty journal has cursor 0 everywhere.
func testEmptyCursors(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	if id, err := db.LastEventID(ctx); err != nil || id != 0 {
		t.Fatalf("LastEventID of an empty store: %d, %v", id, err)
	}
	if id, err := db.RunCursor(ctx, "nope"); err != nil || id != 0 {
		t.Fatalf("RunCursor of an unknown run: %d, %v", id, err)
	}
	if evs := allEvents(t, db, store.EventQuery{AfterID: 5}); len(evs) != 0 {
		t.Fatalf("events of an empty store: %v", evs)
	}
	addSessionRun(t, db, "s1", "r1")
	out := appendEvents(t, db, "", draft("s1", "r1", "message.user", nil))
	if id, err := db.RunCursor(ctx, "r1"); err != nil || id != out[0].ID {
		t.Fatalf("RunCursor: %d, %v; want %d", id, err, out[0].ID)
	}
	if out[0].ID <= 0 {
		t.Fatalf("first event id %d, want positive", out[0].ID)
	}
}
