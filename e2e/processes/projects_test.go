package processes

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
)

// Two web processes on one database: a project made, renamed and deleted
// through one reaches a tab stream open on the other, through the journal
// (PostgreSQL: its NOTIFY after commit), in order, with the project's own
// seq.
func TestProjectEventsReachOtherWebNodes(t *testing.T) {
	e2etest.EachStore(t, pg, testProjectEventsReachOtherWebNodes)
}

func testProjectEventsReachOtherWebNodes(t *testing.T, dbArgs []string) {
	dataDir, ws := t.TempDir(), t.TempDir()
	sp := e2etest.WriteScript(t, e2etest.Script(e2etest.Turn(e2etest.Text("ok"))))
	web1 := e2etest.StartWeb(t, binary, dataDir, ws, sp, dbArgs...)
	web2 := e2etest.StartWeb(t, binary, dataDir, ws, sp, dbArgs...)
	var list struct {
		LastEventID int64 `json:"last_event_id"`
	}
	e2etest.Do(t, "GET", web2.URL+"/api/sessions", nil, &list)
	tab := e2etest.OpenStream(t, web2.URL+"/api/events", map[string]string{"Last-Event-ID": strconv.FormatInt(list.LastEventID, 10)})
	defer tab.Close()

	var p struct {
		ID string `json:"id"`
	}
	if c := e2etest.Do(t, "POST", web1.URL+"/api/projects", map[string]any{"name": "Alpha"}, &p); c != http.StatusCreated {
		t.Fatalf("create on web 1: %d", c)
	}
	if c := e2etest.Do(t, "PATCH", web1.URL+"/api/projects/"+p.ID, map[string]any{"name": "Beta"}, nil); c != http.StatusOK {
		t.Fatalf("rename on web 1: %d", c)
	}
	if c := e2etest.Do(t, "DELETE", web1.URL+"/api/projects/"+p.ID, nil, nil); c != http.StatusNoContent {
		t.Fatalf("delete on web 1: %d", c)
	}
	seen := tab.Until(t, "project.deleted on web 2", e2etest.IsType(event.ProjectDeleted))
	var got []event.Event
	for _, e := range seen {
		if event.IsProject(e.Type) {
			got = append(got, e)
		}
	}
	want := []event.Type{event.ProjectCreated, event.ProjectUpdated, event.ProjectDeleted}
	if len(got) != len(want) {
		t.Fatalf("web 2 heard %d project events, want %d: %s", len(got), len(want), e2etest.Summarize(seen))
	}
	for i, e := range got {
		if e.Type != want[i] || e.SessionID != p.ID || e.RunID != "" || e.Seq != int64(i+1) {
			t.Fatalf("event %d on web 2: %s of %s seq %d run %q, want %s of %s seq %d", i, e.Type, e.SessionID, e.Seq, e.RunID, want[i], p.ID, i+1)
		}
	}
	type payload struct {
		Project event.ProjectInfo `json:"project"`
	}
	if name := e2etest.Payload[payload](t, got[1]).Project.Name; name != "Beta" {
		t.Fatalf("project.updated on web 2 names %q, want Beta", name)
	}
}
