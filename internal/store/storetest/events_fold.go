package storetest

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// testEventsQueryFold: a Fold read selects what the same query without it
// does, each event with its ID, RunID, Type, TS and Payload, and leaves
// the columns a fold does not read (SessionID, Seq, Terminal) zero.
func testEventsQueryFold(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	addSessionRun(t, db, "s1", "r1")
	addSessionRun(t, db, "s2", "r2")
	appendEvents(t, db, "",
		draft("s1", "r1", event.RunQueued, event.RunQueuedPayload{Input: "hi"}),
		draft("s1", "r1", event.MessageUser, event.MessageUserPayload{MessageID: "m1", Content: "hi"}),
		draft("s2", "r2", event.MessageUser, event.MessageUserPayload{MessageID: "m2", Content: "other"}),
		draft("s1", "r1", event.MessageDelta, event.DeltaPayload{ID: "a1", Delta: "he"}),
		draft("s1", "r1", event.MessageDone, event.DonePayload{ID: "a1", Text: "hello"}),
		draft("s1", "r1", event.RunDone, event.RunDonePayload{Status: "completed"}),
	)
	deltas := []event.Type{event.MessageDelta, event.ReasoningDelta}
	for name, q := range map[string]store.EventQuery{
		"session":     {SessionID: "s1"},
		"not deltas":  {SessionID: "s1", NotTypes: deltas},
		"run deltas":  {RunID: "r1", Types: deltas},
		"after":       {SessionID: "s1", AfterID: 2},
		"max bytes":   {SessionID: "s1", MaxBytes: 10},
		"every event": {},
	} {
		full, err := db.Events(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		q.Fold = true
		lean, err := db.Events(ctx, q)
		if err != nil {
			t.Fatalf("%s, fold: %v", name, err)
		}
		if len(full) == 0 || len(lean) != len(full) {
			t.Fatalf("%s: %d events with Fold, %d without", name, len(lean), len(full))
		}
		for i, e := range lean {
			f := full[i]
			if e.ID != f.ID || e.RunID != f.RunID || e.Type != f.Type || !e.TS.Equal(f.TS.Time) || !json.Valid(e.Payload) || string(e.Payload) != string(f.Payload) {
				t.Fatalf("%s: event %d is %+v with Fold, %+v without", name, i, e, f)
			}
			if e.SessionID != "" || e.Seq != 0 || e.Terminal {
				t.Fatalf("%s: event %d read columns a fold does not use: %+v", name, i, e)
			}
		}
	}
}

// testSessionRunStates: a session's run states are its runs as SessionRuns
// lists them — same runs, same order (creation time, then insertion for
// runs created in the same millisecond) — with their statuses, and no run
// of another session.
func testSessionRunStates(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	addSessionRun(t, db, "s1", "r1")
	addSessionRun(t, db, "s2", "other")
	addRun(t, db, store.Run{ID: "r3", SessionID: "s1", Status: run.Completed, CreatedAt: at(2_000)})
	addRun(t, db, store.Run{ID: "r2", SessionID: "s1", Status: run.Queued, CreatedAt: at(1_000)})
	addRun(t, db, store.Run{ID: "r0", SessionID: "s1", Status: run.Cancelled, CreatedAt: at(1_000)})
	runs, err := db.SessionRuns(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	states, err := db.SessionRunStates(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	var want, got []string
	for _, r := range runs {
		want = append(want, r.ID+":"+string(r.Status))
	}
	for _, r := range states {
		got = append(got, r.ID+":"+string(r.Status))
	}
	if len(want) != 4 || !slices.Equal(got, want) {
		t.Fatalf("run states %v, runs %v", got, want)
	}
	if none, err := db.SessionRunStates(ctx, "s404"); err != nil || len(none) != 0 {
		t.Fatalf("no session: %v, %v", none, err)
	}
}
