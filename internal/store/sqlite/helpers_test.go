package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlite"
)

// t0 is a fixed, millisecond-precise base time: everything the store keeps
// is stored as Unix milliseconds.
var t0 = time.UnixMilli(1_700_000_000_000).UTC()

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// openDB opens a fresh database file in a temp dir and closes it at cleanup.
func openDB(t testing.TB) (*sqlite.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "caduceus.db")
	return openPath(t, path), path
}

func openPath(t testing.TB, path string) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
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

func sessionDraft(sid string, typ event.Type) event.Draft {
	return event.Draft{SessionID: sid, Type: typ, Payload: map[string]string{"id": sid}}
}

// checkStreamSeqs asserts that ids ascend and that every run, and every
// session's own lifecycle events, carry seqs 1..n without gap or repeat.
func checkStreamSeqs(t *testing.T, evs []event.Event) {
	t.Helper()
	last := map[string]int64{}
	for i, e := range evs {
		if i > 0 && e.ID <= evs[i-1].ID {
			t.Fatalf("ids not ascending: %d after %d", e.ID, evs[i-1].ID)
		}
		k := "run " + e.RunID
		if e.RunID == "" {
			k = "session " + e.SessionID
		}
		if e.Seq != last[k]+1 {
			t.Fatalf("%s: seq %d after %d (event id %d, %s)", k, e.Seq, last[k], e.ID, e.Type)
		}
		last[k] = e.Seq
	}
}
