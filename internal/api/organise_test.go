package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
)

type organisedJSON struct {
	ID         string  `json:"id"`
	Workspace  string  `json:"workspace"`
	Model      string  `json:"model"`
	Pinned     bool    `json:"pinned"`
	ArchivedAt *string `json:"archived_at"`
	ProjectID  *string `json:"project_id"`
	UpdatedAt  string  `json:"updated_at"`
}

type projectJSON struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Workspace    string `json:"workspace"`
	Model        string `json:"model"`
	Instructions string `json:"instructions"`
}

func (e *env) project(t *testing.T, body string) projectJSON {
	t.Helper()
	r := e.req("POST", "/api/projects", body)
	r.want(t, http.StatusCreated, "")
	var p projectJSON
	r.decode(t, &p)
	return p
}

func (e *env) listIDs(t *testing.T, query string) []string {
	t.Helper()
	r := e.req("GET", "/api/sessions"+query, "")
	r.want(t, 200, "")
	var out struct {
		Sessions []organisedJSON `json:"sessions"`
	}
	r.decode(t, &out)
	var ids []string
	for _, s := range out.Sessions {
		ids = append(ids, s.ID)
	}
	return ids
}

// Pin and archive through PATCH: the list puts pinned sessions first,
// leaves archived ones out unless asked, and each change is announced
// with the fields that changed.
func TestOrganisePinArchive(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// Ids made in the same millisecond do not sort by creation: a pause
	// between them makes c the newest.
	var made []sessionJSON
	for range 3 {
		made = append(made, e.session(t))
		time.Sleep(3 * time.Millisecond)
	}
	a, b, c := made[0], made[1], made[2]
	patch := func(id, body string) organisedJSON {
		t.Helper()
		r := e.req("PATCH", "/api/sessions/"+id, body)
		r.want(t, 200, "")
		var out organisedJSON
		r.decode(t, &out)
		return out
	}
	// Pin a (no activity: it keeps its place among the unpinned order, but
	// pinned sessions lead); a later rename of b moves b above c but not
	// above a.
	aBefore := patch(a.ID, `{}`) // an empty patch is activity, as ever
	time.Sleep(3 * time.Millisecond)
	if got := patch(a.ID, `{"pinned":true}`); !got.Pinned || got.ArchivedAt != nil || got.UpdatedAt != aBefore.UpdatedAt {
		t.Fatalf("after pin: %+v (updated_at before %s: organising is no activity)", got, aBefore.UpdatedAt)
	}
	patch(b.ID, `{"title":"b"}`)
	if got, want := e.listIDs(t, ""), []string{a.ID, b.ID, c.ID}; !slices.Equal(got, want) {
		t.Fatalf("list %v, want %v", got, want)
	}
	if got := patch(c.ID, `{"archived":true}`); got.ArchivedAt == nil {
		t.Fatalf("after archive: %+v", got)
	}
	for _, tc := range []struct{ query string }{{""}, {"?archived=0"}, {"?archived=1"}, {"?archived=all"}} {
		want := map[string][]string{"": {a.ID, b.ID}, "?archived=0": {a.ID, b.ID},
			"?archived=1": {c.ID}, "?archived=all": {a.ID, b.ID, c.ID}}[tc.query]
		if got := e.listIDs(t, tc.query); !slices.Equal(got, want) {
			t.Errorf("list%s = %v, want %v", tc.query, got, want)
		}
	}
	if got := patch(c.ID, `{"archived":false,"pinned":false}`); got.ArchivedAt != nil || got.Pinned {
		t.Fatalf("after unarchive: %+v", got)
	}

	// The events name what changed: pin, archive, unarchive.
	evs, err := e.st.Events(e.ctx, store.EventQuery{Types: []event.Type{event.SessionUpdated}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range evs {
		var p event.SessionUpdatedPayload
		if err := json.Unmarshal(ev.Payload, &p); err != nil {
			t.Fatal(err)
		}
		s := p.ID[len(p.ID)-4:] + ":"
		if p.Pinned != nil {
			s += fmt.Sprintf("pinned=%v ", *p.Pinned)
		}
		if p.Archived != nil {
			s += fmt.Sprintf("archived=%v at=%v ", *p.Archived, p.ArchivedAt != nil)
		}
		got = append(got, strings.TrimSpace(s))
	}
	want := []string{a.ID[len(a.ID)-4:] + ":", a.ID[len(a.ID)-4:] + ":pinned=true", b.ID[len(b.ID)-4:] + ":",
		c.ID[len(c.ID)-4:] + ":archived=true at=true", c.ID[len(c.ID)-4:] + ":archived=false at=false"}
	if !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
}

// Projects: CRUD, case-insensitive unique names, a new session takes the
// project's defaults, the list filters by project, and deleting a project
// leaves its sessions in none.
func TestOrganiseProjects(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.project(t, fmt.Sprintf(`{"name":" Alpha ","workspace":%q,"model":"demo/demo","instructions":"Answer in French."}`, e.ws))
	if p.Name != "Alpha" || p.Workspace != e.ws || p.Model != "demo/demo" || p.Instructions != "Answer in French." || !strings.HasPrefix(p.ID, "prj_") {
		t.Fatalf("created %+v", p)
	}
	e.req("POST", "/api/projects", `{"name":"ALPHA"}`).want(t, 409, "project_name_taken")
	other := e.project(t, `{"name":"beta"}`)
	e.req("PATCH", "/api/projects/"+other.ID, `{"name":"alpha"}`).want(t, 409, "project_name_taken")

	r := e.req("POST", "/api/sessions", fmt.Sprintf(`{"project_id":%q}`, p.ID))
	r.want(t, 201, "")
	var in organisedJSON
	r.decode(t, &in)
	if in.Workspace != e.ws || in.Model != "demo/demo" || in.ProjectID == nil || *in.ProjectID != p.ID {
		t.Fatalf("session in project: %+v", in)
	}
	// A model given wins over the project's.
	r = e.req("POST", "/api/sessions", fmt.Sprintf(`{"project_id":%q,"model":"other/x"}`, p.ID))
	r.want(t, 201, "")
	var own organisedJSON
	r.decode(t, &own)
	if own.Model != "other/x" {
		t.Fatalf("own model: %+v", own)
	}
	outside := e.session(t)
	moved := e.req("PATCH", "/api/sessions/"+outside.ID, fmt.Sprintf(`{"project_id":%q}`, other.ID))
	moved.want(t, 200, "")

	if got, want := e.listIDs(t, "?project="+p.ID), []string{own.ID, in.ID}; !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
		t.Fatalf("project list %v, want %v", got, want)
	}
	if got := e.listIDs(t, "?project="+other.ID); !slices.Equal(got, []string{outside.ID}) {
		t.Fatalf("other project list %v", got)
	}

	// Edit, list, read.
	upd := e.req("PATCH", "/api/projects/"+p.ID, `{"instructions":"Answer in German."}`)
	upd.want(t, 200, "")
	var edited projectJSON
	upd.decode(t, &edited)
	if edited.Instructions != "Answer in German." || edited.Name != "Alpha" || edited.Model != "demo/demo" {
		t.Fatalf("edited %+v", edited)
	}
	lr := e.req("GET", "/api/projects", "")
	lr.want(t, 200, "")
	var list struct {
		Projects []projectJSON `json:"projects"`
	}
	lr.decode(t, &list)
	if len(list.Projects) != 2 || list.Projects[0] != edited || list.Projects[1].Name != "beta" {
		t.Fatalf("list %+v", list.Projects)
	}

	// Leave a project with null; delete the other: its session stays.
	left := e.req("PATCH", "/api/sessions/"+own.ID, `{"project_id":null}`)
	left.want(t, 200, "")
	var l organisedJSON
	left.decode(t, &l)
	if l.ProjectID != nil {
		t.Fatalf("after leaving: %+v", l)
	}
	e.req("DELETE", "/api/projects/"+p.ID, "").want(t, http.StatusNoContent, "")
	e.req("GET", "/api/projects/"+p.ID, "").want(t, 404, "not_found")
	g := e.req("GET", "/api/sessions/"+in.ID, "")
	g.want(t, 200, "")
	var after organisedJSON
	g.decode(t, &after)
	if after.ProjectID != nil || after.Workspace != e.ws {
		t.Fatalf("session of a deleted project: %+v", after)
	}
}

// Bad organising input gets a stable code and changes nothing.
func TestOrganiseErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.session(t)
	p := e.project(t, `{"name":"p"}`)
	gone := "prj_" + strings.Repeat("0", 26)
	long := strings.Repeat("n", 101)
	e.runErrCases(t, []errCase{
		{name: "archived filter", method: "GET", path: "/api/sessions?archived=yes", status: 400, code: "invalid_input"},
		{name: "pinned not a bool", method: "PATCH", path: "/api/sessions/" + s.ID, body: `{"pinned":"yes"}`, status: 400, code: "invalid_input"},
		{name: "archived not a bool", method: "PATCH", path: "/api/sessions/" + s.ID, body: `{"archived":1}`, status: 400, code: "invalid_input"},
		{name: "project_id a number", method: "PATCH", path: "/api/sessions/" + s.ID, body: `{"project_id":7}`, status: 400, code: "invalid_input"},
		{name: "unknown project", method: "PATCH", path: "/api/sessions/" + s.ID, body: `{"project_id":"` + gone + `"}`, status: 400, code: "project_not_found"},
		{name: "malformed project", method: "PATCH", path: "/api/sessions/" + s.ID, body: `{"project_id":"nope"}`, status: 400, code: "project_not_found"},
		{name: "create in unknown project", method: "POST", path: "/api/sessions", body: `{"project_id":"` + gone + `"}`, status: 400, code: "project_not_found"},
		{name: "project without name", method: "POST", path: "/api/projects", body: `{}`, status: 400, code: "invalid_input"},
		{name: "project blank name", method: "POST", path: "/api/projects", body: `{"name":"  "}`, status: 400, code: "invalid_input"},
		{name: "project two-line name", method: "POST", path: "/api/projects", body: `{"name":"a\nb"}`, status: 400, code: "invalid_input"},
		{name: "project long name", method: "POST", path: "/api/projects", body: `{"name":"` + long + `"}`, status: 400, code: "invalid_input"},
		{name: "project relative workspace", method: "POST", path: "/api/projects", body: `{"name":"w","workspace":"rel"}`, status: 400, code: "invalid_input"},
		{name: "project workspace outside roots", method: "POST", path: "/api/projects", body: `{"name":"w","workspace":"/"}`, status: 400, code: "workspace_not_allowed"},
		{name: "project unknown field", method: "POST", path: "/api/projects", body: `{"name":"w","colour":"red"}`, status: 400, code: "invalid_input"},
		{name: "project unknown", method: "GET", path: "/api/projects/" + gone, status: 404, code: "not_found"},
		{name: "project malformed id", method: "GET", path: "/api/projects/nope", status: 404, code: "not_found"},
		{name: "patch unknown project", method: "PATCH", path: "/api/projects/" + gone, body: `{"name":"x"}`, status: 404, code: "not_found"},
		{name: "patch project blank name", method: "PATCH", path: "/api/projects/" + p.ID, body: `{"name":""}`, status: 400, code: "invalid_input"},
		{name: "delete unknown project", method: "DELETE", path: "/api/projects/" + gone, status: 404, code: "not_found"},
	})
	g := e.req("GET", "/api/sessions/"+s.ID, "")
	var after organisedJSON
	g.decode(t, &after)
	if after.Pinned || after.ArchivedAt != nil || after.ProjectID != nil {
		t.Fatalf("refused patches changed the session: %+v", after)
	}
}
