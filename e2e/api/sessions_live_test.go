package api

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
)

// TestSessionsLive: sessions created, renamed and deleted through the API
// reach every tab's stream (GET /api/events) at once with their payloads,
// a reconnect with a cursor replays exactly what came after it, a refused
// delete announces nothing, and a reload (the list) agrees with the stream.
func TestSessionsLive(t *testing.T) {
	t.Parallel()
	srv := e2etest.StartServer(t, e2etest.Scenarios(
		e2etest.Scenario("run a command", e2etest.Turn(e2etest.Call("run_command", `{"command":"echo hi"}`)), e2etest.Turn(e2etest.Text("Done."))),
		e2etest.Scenario("hello", e2etest.Turn(e2etest.Text("Hello."))),
	))
	var list struct {
		LastEventID int64 `json:"last_event_id"`
	}
	e2etest.Do(t, "GET", srv.URL+"/api/sessions", nil, &list)
	start := list.LastEventID
	tab := e2etest.OpenStream(t, srv.URL+"/api/events?after="+strconv.FormatInt(start, 10), nil)

	// next waits for the next session event (runs of other sessions also
	// flow on the tab stream) and returns it with the time it took since
	// the API call that caused it was made.
	var lags []time.Duration
	next := func(what string, since time.Time) event.Event {
		t.Helper()
		seen := tab.Until(t, what, func(e event.Event) bool { return event.IsSession(e.Type) || e.Type == event.TitleUpdated })
		e := seen[len(seen)-1]
		lag := time.Since(since)
		lags = append(lags, lag)
		if lag > time.Second {
			t.Errorf("%s reached the stream %s after the API call, want within a second", what, lag)
		}
		return e
	}

	// Create.
	var created struct {
		ID, Title, Workspace, Model string
		CreatedAt                   string `json:"created_at"`
		UpdatedAt                   string `json:"updated_at"`
	}
	t0 := time.Now()
	if c := e2etest.Do(t, "POST", srv.URL+"/api/sessions", map[string]any{"title": "Live one"}, &created); c != http.StatusCreated {
		t.Fatalf("create: %d", c)
	}
	e := next("session.created", t0)
	if e.Type != event.SessionCreated || e.SessionID != created.ID || e.RunID != "" || e.Seq != 1 {
		t.Fatalf("session.created envelope: %+v", e)
	}
	cp := e2etest.Payload[event.SessionCreatedPayload](t, e)
	if cp.Session.ID != created.ID || cp.Session.Title != "Live one" || cp.Session.Workspace != created.Workspace ||
		cp.Session.CreatedAt.Format(event.TimeFormat) != created.CreatedAt {
		t.Fatalf("session.created payload %+v, POST answered %+v", cp.Session, created)
	}
	createdID := e.ID

	// Rename.
	t0 = time.Now()
	e2etest.Do(t, "PATCH", srv.URL+"/api/sessions/"+created.ID, map[string]any{"title": "Renamed live"}, nil)
	e = next("session.updated", t0)
	up := e2etest.Payload[event.SessionUpdatedPayload](t, e)
	if e.Type != event.SessionUpdated || e.Seq != 2 || up.ID != created.ID || up.Title == nil || *up.Title != "Renamed live" || up.Model != nil {
		t.Fatalf("session.updated: %+v %s", e, e.Payload)
	}

	// A first message titles a session: title.updated from its run, which
	// every tab hears too.
	other := srv.NewSession(t)
	next("the other session's session.created", time.Now())
	t0 = time.Now()
	r := srv.Send(t, other, "hello there")
	e = next("title.updated", t0)
	if e.Type != event.TitleUpdated || e.SessionID != other || e2etest.Payload[event.TitlePayload](t, e).Title != "hello there" {
		t.Fatalf("title.updated: %+v %s", e, e.Payload)
	}
	srv.WaitStatus(t, r.ID, "completed")

	// A busy session cannot be deleted, and the refusal announces nothing.
	busy := srv.Send(t, created.ID, "please run a command")
	srv.WaitStatus(t, busy.ID, "awaiting_approval")
	var refused e2etest.ErrorJSON
	if c := e2etest.Do(t, "DELETE", srv.URL+"/api/sessions/"+created.ID, nil, &refused); c != http.StatusConflict || refused.Error.Code != "session_busy" {
		t.Fatalf("delete of a busy session: %d %+v", c, refused)
	}
	e2etest.Do(t, "POST", srv.URL+"/api/runs/"+busy.ID+"/cancel", nil, nil)
	srv.WaitStatus(t, busy.ID, "cancelled")

	// The session's own stream, open while it is deleted, ends with it.
	own := e2etest.OpenStream(t, srv.URL+"/api/sessions/"+created.ID+"/events", nil)
	t0 = time.Now()
	if c := e2etest.Do(t, "DELETE", srv.URL+"/api/sessions/"+created.ID, nil, nil); c != http.StatusNoContent {
		t.Fatalf("delete: %d", c)
	}
	e = next("session.deleted", t0)
	if e.Type != event.SessionDeleted || e.SessionID != created.ID || e.RunID != "" || e.Seq != 3 ||
		e2etest.Payload[event.SessionDeletedPayload](t, e).ID != created.ID {
		t.Fatalf("session.deleted: %+v %s (the refused delete must not have taken a seq)", e, e.Payload)
	}
	deletedID := e.ID
	ownEvs := own.Drain(t)
	if last := ownEvs[len(ownEvs)-1]; last.ID != deletedID {
		t.Fatalf("the session stream ended with %s, want session.deleted", last.Type)
	}
	if ownEvs[0].Type != event.SessionCreated {
		t.Fatalf("the session stream began with %s, want session.created", ownEvs[0].Type)
	}
	t.Logf("stream lag after the API call: %v", lags)

	// Reload: the list agrees with what the stream said.
	var now struct {
		Sessions []e2etest.SessionJSON `json:"sessions"`
	}
	e2etest.Do(t, "GET", srv.URL+"/api/sessions", nil, &now)
	if i := slices.IndexFunc(now.Sessions, func(s e2etest.SessionJSON) bool { return s.ID == created.ID }); i >= 0 {
		t.Fatalf("deleted session still listed: %+v", now.Sessions[i])
	}
	if i := slices.IndexFunc(now.Sessions, func(s e2etest.SessionJSON) bool { return s.ID == other }); i < 0 || now.Sessions[i].Title != "hello there" {
		t.Fatalf("the other session in the list: %+v", now.Sessions)
	}

	// Reconnect after the create, with either cursor: the rest of the
	// session's lifecycle comes once and in order; of its erased history
	// nothing but the tombstone.
	for _, mode := range []string{"Last-Event-ID", "after"} {
		t.Run("replay with "+mode, func(t *testing.T) {
			url, hdr := srv.URL+"/api/events", map[string]string{}
			if mode == "after" {
				url += fmt.Sprintf("?after=%d", createdID)
			} else {
				hdr["Last-Event-ID"] = fmt.Sprint(createdID)
			}
			evs := e2etest.OpenStream(t, url, hdr).Until(t, "session.deleted", func(e event.Event) bool { return e.ID == deletedID })
			var mine []event.Type
			for i, e := range evs {
				if e.ID <= createdID || (i > 0 && e.ID <= evs[i-1].ID) {
					t.Fatalf("replay after %d: id %d out of order", createdID, e.ID)
				}
				if e.SessionID == created.ID {
					mine = append(mine, e.Type)
				}
			}
			// session.updated was erased with the session; its runs' events
			// too (they were lifecycle events of runs).
			if !slices.Equal(mine, []event.Type{event.SessionDeleted}) {
				t.Fatalf("replay of the deleted session: %v, want only session.deleted", mine)
			}
			if !slices.ContainsFunc(evs, func(e event.Event) bool { return e.SessionID == other && e.Type == event.SessionCreated }) {
				t.Fatal("the replay lacks the other session's session.created")
			}
		})
	}
}
