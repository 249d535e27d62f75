package api

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

// afterSessionRead lets a test commit events between transcriptEvents'
// read of a session and its read of fragments, as a busy runner does.
type afterSessionRead struct {
	store.Store
	once func()
}

func (s *afterSessionRead) Events(ctx context.Context, q store.EventQuery) ([]event.Event, error) {
	evs, err := s.Store.Events(ctx, q)
	if q.SessionID != "" && s.once != nil {
		f := s.once
		s.once = nil
		f()
	}
	return evs, err
}

// The events a snapshot is folded from end where its cursor says: a
// fragment committed after the session was read would carry the cursor
// past the answer and the run.done committed with it, which the client
// then never gets (CI: the run stayed "running" in the browser).
func TestTranscriptEventsEndTogether(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := storetest.SQLite(t)
	const sid, rid, fence = "ses_1", "run_1", "rnr_1"
	now := time.Now().UTC()
	write := func(drafts ...event.Draft) {
		t.Helper()
		if err := db.Write(ctx, func(tx store.Tx) error { _, err := tx.AppendEvents(ctx, fence, drafts...); return err }); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Write(ctx, func(tx store.Tx) error {
		if err := tx.InsertSession(ctx, store.Session{ID: sid, Title: "t", Workspace: "/ws", Model: "m", CreatedAt: now, UpdatedAt: now}); err != nil {
			return err
		}
		return tx.InsertRun(ctx, store.Run{ID: rid, SessionID: sid, Status: run.Running, RunnerID: fence, LeaseExpiresAt: now.Add(time.Minute), Input: "hi", CreatedAt: now})
	}); err != nil {
		t.Fatal(err)
	}
	d := func(typ event.Type, p any) event.Draft {
		return event.Draft{RunID: rid, SessionID: sid, Type: typ, Payload: p}
	}
	write(d(event.RunStarted, event.RunStartedPayload{RunnerID: fence, Attempt: 1, Model: "m"}),
		d(event.MessageDelta, event.DeltaPayload{ID: "m1", TurnID: "t1", Delta: "Hel"}))

	st := &afterSessionRead{Store: db, once: func() {
		// The answer's first segment ends and a second begins: under the
		// bug, the second's fragment set the cursor past the first's end.
		write(d(event.MessageDelta, event.DeltaPayload{ID: "m1", TurnID: "t1", Delta: "lo"}),
			d(event.MessageDone, event.DonePayload{ID: "m1", TurnID: "t1", Text: "Hello"}),
			d(event.MessageDelta, event.DeltaPayload{ID: "m2", TurnID: "t2", Delta: "Next"}))
	}}
	a := &API{st: st}
	evs, last, err := a.transcriptEvents(ctx, sid)
	if err != nil {
		t.Fatal(err)
	}
	all, err := db.Events(ctx, store.EventQuery{SessionID: sid})
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]bool{}
	for _, ev := range evs {
		got[ev.ID] = true
	}
	for _, ev := range all {
		if ev.ID <= last && !got[ev.ID] {
			t.Errorf("event %d (%s) is under the snapshot's last id %d but not in it: the client would never see it", ev.ID, ev.Type, last)
		}
	}
	var deltas int
	for _, ev := range evs {
		if ev.Type == event.MessageDelta {
			deltas++
		}
	}
	if deltas != 1 {
		t.Errorf("%d fragments of the unfinished answer, want the 1 committed before the read", deltas)
	}
}

// afterRunCursor ends the run just before a run's cursor is read, as a
// runner finishing between a handler's two reads does.
type afterRunCursor struct {
	store.Store
	once func()
}

func (s *afterRunCursor) RunCursor(ctx context.Context, runID string) (int64, error) {
	if s.once != nil {
		f := s.once
		s.once = nil
		f()
	}
	return s.Store.RunCursor(ctx, runID)
}

// A run's view never says it reflects events it lacks: the client skips
// every event up to last_event_id, so a "running" view whose cursor took
// in run.done left the run running in the browser (TestUIVersions).
func TestRunViewCursorNotAheadOfStatus(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		asOf bool // as a list reads it: the journal's cursor first
	}{{"one run", false}, {"a session's runs", true}} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			db, _ := storetest.SQLite(t)
			const sid, rid, fence = "ses_1", "run_1", "rnr_1"
			now := time.Now().UTC()
			running := store.Run{ID: rid, SessionID: sid, Status: run.Running, RunnerID: fence, LeaseExpiresAt: now.Add(time.Minute), Input: "hi", CreatedAt: now}
			if err := db.Write(ctx, func(tx store.Tx) error {
				if err := tx.InsertSession(ctx, store.Session{ID: sid, Title: "t", Workspace: "/ws", Model: "m", CreatedAt: now, UpdatedAt: now}); err != nil {
					return err
				}
				if err := tx.InsertRun(ctx, running); err != nil {
					return err
				}
				_, err := tx.AppendEvents(ctx, fence, event.Draft{RunID: rid, SessionID: sid, Type: event.RunStarted, Payload: event.RunStartedPayload{RunnerID: fence, Attempt: 1}})
				return err
			}); err != nil {
				t.Fatal(err)
			}
			asOf := int64(0)
			if c.asOf {
				var err error
				if asOf, err = db.LastEventID(ctx); err != nil {
					t.Fatal(err)
				}
			}
			ru, err := db.GetRun(ctx, rid)
			if err != nil {
				t.Fatal(err)
			}
			var done int64
			st := &afterRunCursor{Store: db, once: func() {
				if err := db.Write(ctx, func(tx store.Tx) error {
					evs, err := tx.AppendEvents(ctx, fence, event.Draft{RunID: rid, SessionID: sid, Type: event.RunDone, Payload: event.RunDonePayload{Status: string(run.Completed)}})
					if err != nil {
						return err
					}
					done = evs[0].ID
					fin := running
					fin.Status, fin.RunnerID = run.Completed, ""
					return tx.UpdateRun(ctx, fin, run.Running)
				}); err != nil {
					t.Fatal(err)
				}
			}}
			a := &API{st: st}
			v, err := a.runView(httptest.NewRequest("GET", "/api/sessions/"+sid+"/runs", nil), ru, nil, asOf, nil)
			if err != nil {
				t.Fatal(err)
			}
			if v.LastEventID >= done && v.Status != run.Completed {
				t.Errorf("the view says %s as of event %d, which is the run's run.done", v.Status, v.LastEventID)
			}
		})
	}
}
