package api_test

// Projects on the tab stream (issue 15): creating, changing and deleting a
// project, and filing a session in one, reach every tab's GET /api/events.

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
)

func TestProjectEventsReachTheTabStream(t *testing.T) {
	e := newEnv(t)
	var list struct {
		LastEventID int64 `json:"last_event_id"`
	}
	lcCall(t, e, "GET", "/api/sessions", nil, &list)
	var sess lcSessionJSON
	if c := lcCall(t, e, "POST", "/api/sessions", map[string]string{"title": "Filed"}, &sess); c != http.StatusCreated {
		t.Fatalf("create session: %d", c)
	}
	tab := mustSSE(t, e, fmt.Sprintf("/api/events?after=%d", list.LastEventID))
	if ev := tab.next(t).ev; ev.Type != event.SessionCreated {
		t.Fatalf("first event %s, want session.created", ev.Type)
	}

	type project struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	var p project
	if c := lcCall(t, e, "POST", "/api/projects", map[string]string{"name": "Alpha", "model": "demo"}, &p); c != http.StatusCreated {
		t.Fatalf("create project: %d", c)
	}
	type projectPayload struct {
		Project event.ProjectInfo `json:"project"`
	}
	ev := tab.next(t).ev
	if ev.Type != event.ProjectCreated || ev.SessionID != p.ID || ev.RunID != "" || ev.Seq != 1 {
		t.Fatalf("created envelope: %+v", ev)
	}
	if got := decodeAs[projectPayload](t, ev).Project; got.ID != p.ID || got.Name != "Alpha" || got.Model != "demo" {
		t.Fatalf("project.created payload: %+v", got)
	}

	if c := lcCall(t, e, "PATCH", "/api/projects/"+p.ID, map[string]string{"name": "Beta"}, nil); c != http.StatusOK {
		t.Fatalf("rename project: %d", c)
	}
	ev = tab.next(t).ev
	if got := decodeAs[projectPayload](t, ev).Project; ev.Type != event.ProjectUpdated || ev.Seq != 2 || got.Name != "Beta" || got.Model != "demo" {
		t.Fatalf("rename: %+v with %+v", ev, got)
	}

	// A refused change is announced nowhere.
	if c := lcCall(t, e, "PATCH", "/api/projects/"+p.ID, map[string]string{"name": ""}, nil); c != http.StatusBadRequest {
		t.Fatalf("empty name: %d, want 400", c)
	}

	if c := lcCall(t, e, "PATCH", "/api/sessions/"+sess.ID, map[string]string{"project_id": p.ID}, nil); c != http.StatusOK {
		t.Fatalf("file session: %d", c)
	}
	ev = tab.next(t).ev
	if ev.Type != event.SessionUpdated || ev.SessionID != sess.ID {
		t.Fatalf("filing: %+v, want the session's session.updated", ev)
	}
	if got := decodeAs[event.SessionUpdatedPayload](t, ev); got.ProjectID == nil || *got.ProjectID != p.ID {
		t.Fatalf("filing payload: %+v", got)
	}

	if c := lcCall(t, e, "DELETE", "/api/projects/"+p.ID, nil, nil); c != http.StatusNoContent {
		t.Fatalf("delete project: %d", c)
	}
	ev = tab.next(t).ev
	if got := decodeAs[event.ProjectDeletedPayload](t, ev); ev.Type != event.ProjectDeleted || ev.Seq != 3 || got.ID != p.ID {
		t.Fatalf("delete: %+v with %+v", ev, got)
	}
	// Deleting it again is a 404 and writes nothing more.
	if c := lcCall(t, e, "DELETE", "/api/projects/"+p.ID, nil, nil); c != http.StatusNotFound {
		t.Fatalf("delete again: %d, want 404", c)
	}
	if c := lcCall(t, e, "PATCH", "/api/sessions/"+sess.ID, map[string]string{"title": "Last"}, nil); c != http.StatusOK {
		t.Fatalf("rename session: %d", c)
	}
	if ev = tab.next(t).ev; ev.Type != event.SessionUpdated {
		t.Fatalf("after the refusals: %s, want session.updated (nothing between)", ev.Type)
	}
}
