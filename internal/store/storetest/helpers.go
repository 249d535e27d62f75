package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// t0 is a fixed, millisecond-precise base time: everything the store keeps
// is stored as Unix milliseconds.
var t0 = time.UnixMilli(1_700_000_000_000).UTC()

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// fresh opens an empty store for the test.
func fresh(t testing.TB, open Open) store.Store {
	t.Helper()
	st, _ := open(t)
	return st
}

func write(t testing.TB, db store.Store, fn func(tx store.Tx) error) {
	t.Helper()
	if err := db.Write(context.Background(), fn); err != nil {
		t.Fatalf("write: %v", err)
	}
}

func addSession(t testing.TB, db store.Store, id string, updated time.Time) store.Session {
	t.Helper()
	s := store.Session{ID: id, Title: "title " + id, Workspace: "/ws", Model: "m", CreatedAt: updated, UpdatedAt: updated}
	write(t, db, func(tx store.Tx) error { return tx.InsertSession(context.Background(), s) })
	return s
}

func addRun(t testing.TB, db store.Store, r store.Run) store.Run {
	t.Helper()
	if r.Status == "" {
		r.Status = run.Queued
	}
	if r.Input == "" {
		r.Input = "input of " + r.ID
	}
	if r.CreatedAt.IsZero() {
		r.CreatedAt = t0
	}
	write(t, db, func(tx store.Tx) error { return tx.InsertRun(context.Background(), r) })
	return r
}

// addSessionRun creates session sid with one running run rid leased to
// runner "runner-1".
func addSessionRun(t testing.TB, db store.Store, sid, rid string) {
	t.Helper()
	addSession(t, db, sid, t0)
	addRun(t, db, store.Run{ID: rid, SessionID: sid, Status: run.Running, RunnerID: "runner-1", LeaseExpiresAt: at(60_000)})
}

func draft(sid, rid string, typ event.Type, payload any) event.Draft {
	return event.Draft{RunID: rid, SessionID: sid, Type: typ, Payload: payload}
}

func appendEvents(t testing.TB, db store.Store, fence string, drafts ...event.Draft) []event.Event {
	t.Helper()
	var out []event.Event
	write(t, db, func(tx store.Tx) error {
		var err error
		out, err = tx.AppendEvents(context.Background(), fence, drafts...)
		return err
	})
	return out
}

func allEvents(t testing.TB, r store.Reader, q store.EventQuery) []event.Event {
	t.Helper()
	evs, err := r.Events(context.Background(), q)
	if err != nil {
		t.Fatalf("events %+v: %v", q, err)
	}
	return evs
}

func getRun(t testing.TB, r store.Reader, id string) store.Run {
	t.Helper()
	v, err := r.GetRun(context.Background(), id)
	if err != nil {
		t.Fatalf("get run %s: %v", id, err)
	}
	return v
}

// checkSeqs asserts that the events of each run carry seqs 1..n in ID
// order, without gap or repeat.
func checkSeqs(t testing.TB, evs []event.Event) map[string]int64 {
	t.Helper()
	last := map[string]int64{}
	var prevID int64
	for _, e := range evs {
		if e.ID <= prevID {
			t.Fatalf("ids not ascending: %d after %d", e.ID, prevID)
		}
		prevID = e.ID
		if e.Seq != last[e.RunID]+1 {
			t.Fatalf("run %s: seq %d after %d (event id %d)", e.RunID, e.Seq, last[e.RunID], e.ID)
		}
		last[e.RunID] = e.Seq
	}
	return last
}

func ids(evs []event.Event) []int64 {
	out := make([]int64, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}

func sessionIDs(ss []store.Session) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.ID
	}
	return out
}

func sid(i int) string { return fmt.Sprintf("s%03d", i) }
