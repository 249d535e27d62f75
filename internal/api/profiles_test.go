package api_test

// Profiles (issue 16, h16-profiles).

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/api"
	"github.com/caduceus-dev/caduceus/internal/auth"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

type profileJSON struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	Color        string   `json:"color"`
	Instructions string   `json:"instructions"`
	Model        string   `json:"model"`
	Fallbacks    []string `json:"fallbacks"`
	Tools        []string `json:"tools"`
	ApprovalMode string   `json:"approval_mode"`
	Workspace    string   `json:"workspace"`
	Default      bool     `json:"default"`
	DeletedAt    *string  `json:"deleted_at"`
}

var testTools = []provider.ToolSpec{{Name: "read_file", Description: "read"}, {Name: "grep", Description: "search"}, {Name: "run_command", Description: "run"}}

// newProfilesEnv is the API with the tools a profile may enable.
func newProfilesEnv(t *testing.T, open storetest.Open) *env {
	e := newEnv(t, withStore(open), func(c *envConfig) {
		c.options = append(c.options, func(o *api.Options) { o.Tools = testTools })
	})
	e.svc.KnowTools([]string{"read_file", "grep", "run_command"})
	return e
}

func (e *env) profile(t *testing.T, body string) profileJSON {
	t.Helper()
	r := e.req("POST", "/api/profiles", body)
	r.want(t, http.StatusCreated, "")
	var p profileJSON
	r.decode(t, &p)
	return p
}

func TestProfilesCRUD(t *testing.T) {
	t.Parallel()
	storetest.Each(t, pg, func(t *testing.T, open storetest.Open) {
		e := newProfilesEnv(t, open)
		a := e.profile(t, `{"name":"Reviewer","color":"#AABBCC","instructions":"  Review carefully.  ","model":"openai/gpt-x",
			"fallbacks":["local/llama","local/llama"],"tools":["grep","read_file"],"approval_mode":"Manual"}`)
		if a.Name != "Reviewer" || a.Color != "#aabbcc" || a.Instructions != "Review carefully." || a.Model != "openai/gpt-x" ||
			!slices.Equal(a.Fallbacks, []string{"local/llama"}) || !slices.Equal(a.Tools, []string{"grep", "read_file"}) ||
			a.ApprovalMode != "manual" || a.Default || a.DeletedAt != nil {
			t.Fatalf("created = %+v", a)
		}
		// Defaults: a colour, no lists (empty arrays, not null).
		b := e.profile(t, `{"name":"Writer"}`)
		if b.Color == "" || b.Fallbacks == nil || b.Tools == nil || b.ApprovalMode != "" {
			t.Fatalf("defaults = %+v", b)
		}

		var list struct {
			Profiles []profileJSON `json:"profiles"`
		}
		e.req("GET", "/api/profiles", "").decode(t, &list)
		if len(list.Profiles) != 2 || list.Profiles[0].ID != a.ID || list.Profiles[1].ID != b.ID {
			t.Fatalf("list = %+v", list.Profiles)
		}

		// PATCH changes only what it names.
		r := e.req("PATCH", "/api/profiles/"+a.ID, `{"instructions":"Be brief.","tools":[],"default":true}`)
		r.want(t, 200, "")
		var got profileJSON
		r.decode(t, &got)
		if got.Instructions != "Be brief." || len(got.Tools) != 0 || !got.Default || got.Model != "openai/gpt-x" || got.Name != "Reviewer" {
			t.Fatalf("patched = %+v", got)
		}
		e.req("GET", "/api/profiles/"+a.ID, "").decode(t, &got)
		if got.Instructions != "Be brief." || !got.Default {
			t.Fatalf("read back = %+v", got)
		}

		// Duplicate: a copy under a free name, not the default.
		r = e.req("POST", "/api/profiles/"+a.ID+"/duplicate", "")
		r.want(t, http.StatusCreated, "")
		var dup profileJSON
		r.decode(t, &dup)
		if dup.ID == a.ID || dup.Name != "Reviewer (copy)" || dup.Default || dup.Instructions != "Be brief." || dup.Model != a.Model {
			t.Fatalf("duplicate = %+v", dup)
		}
		r = e.req("POST", "/api/profiles/"+a.ID+"/duplicate", "")
		r.decode(t, &dup)
		if dup.Name != "Reviewer (copy 2)" {
			t.Fatalf("second duplicate = %q", dup.Name)
		}

		// Delete: gone from the list, still readable with deleted_at, and
		// a second delete or an edit is 404.
		e.req("DELETE", "/api/profiles/"+b.ID, "").want(t, http.StatusNoContent, "")
		e.req("GET", "/api/profiles", "").decode(t, &list)
		for _, p := range list.Profiles {
			if p.ID == b.ID {
				t.Fatalf("deleted profile listed: %+v", list.Profiles)
			}
		}
		e.req("GET", "/api/profiles/"+b.ID, "").decode(t, &got)
		if got.DeletedAt == nil || got.Name != "Writer" {
			t.Fatalf("deleted profile = %+v", got)
		}
		e.req("DELETE", "/api/profiles/"+b.ID, "").want(t, http.StatusNotFound, "not_found")
		e.req("PATCH", "/api/profiles/"+b.ID, `{"name":"x"}`).want(t, http.StatusNotFound, "not_found")
		e.req("POST", "/api/profiles/"+b.ID+"/duplicate", "").want(t, http.StatusNotFound, "not_found")
		// Its name is free again.
		e.profile(t, `{"name":"writer"}`)
	})
}

// Bad input is refused with a stable code and changes nothing.
func TestProfilesBadInput(t *testing.T) {
	t.Parallel()
	e := newProfilesEnv(t, storetest.SQLite)
	a := e.profile(t, `{"name":"Alpha","color":"#010203"}`)
	cases := []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"no name", "POST", "/api/profiles", `{}`, 400, "invalid_input"},
		{"blank name", "POST", "/api/profiles", `{"name":"  "}`, 400, "invalid_input"},
		{"two-line name", "POST", "/api/profiles", `{"name":"a\nb"}`, 400, "invalid_input"},
		{"taken name", "POST", "/api/profiles", `{"name":"ALPHA"}`, 409, "profile_name_taken"},
		{"short colour", "POST", "/api/profiles", `{"name":"B","color":"#fff"}`, 400, "invalid_color"},
		{"named colour", "POST", "/api/profiles", `{"name":"B","color":"red"}`, 400, "invalid_color"},
		{"unknown tool", "POST", "/api/profiles", `{"name":"B","tools":["read_file","rm_rf"]}`, 400, "unknown_tool"},
		{"bad mode", "POST", "/api/profiles", `{"name":"B","approval_mode":"yolo"}`, 400, "invalid_approval_mode"},
		{"model with space", "POST", "/api/profiles", `{"name":"B","model":"a b"}`, 400, "invalid_input"},
		{"empty fallback", "POST", "/api/profiles", `{"name":"B","fallbacks":[""]}`, 400, "invalid_input"},
		{"workspace outside roots", "POST", "/api/profiles", `{"name":"B","workspace":"/"}`, 400, "workspace_not_allowed"},
		{"unknown field", "POST", "/api/profiles", `{"name":"B","colour":"#000000"}`, 400, "invalid_input"},
		{"patch colour", "PATCH", "/api/profiles/" + a.ID, `{"color":"#12345g"}`, 400, "invalid_color"},
		{"bad id", "GET", "/api/profiles/nope", "", 404, "not_found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e.req(c.method, c.path, c.body).want(t, c.status, c.code)
		})
	}
	var list struct {
		Profiles []profileJSON `json:"profiles"`
	}
	e.req("GET", "/api/profiles", "").decode(t, &list)
	if len(list.Profiles) != 1 || list.Profiles[0].Color != "#010203" {
		t.Fatalf("bad input changed something: %+v", list.Profiles)
	}
}

// A new session takes the profile asked for, else its project's, else the
// default; PATCH switches it; a profile_id naming no live profile is 400.
func TestSessionProfile(t *testing.T) {
	t.Parallel()
	storetest.Each(t, pg, func(t *testing.T, open storetest.Open) {
		e := newProfilesEnv(t, open)
		def := e.profile(t, `{"name":"Default","default":true}`)
		other := e.profile(t, `{"name":"Other"}`)
		prof := func(body string) string {
			t.Helper()
			r := e.req("POST", "/api/sessions", body)
			r.want(t, http.StatusCreated, "")
			var s struct {
				ProfileID string `json:"profile_id"`
			}
			r.decode(t, &s)
			return s.ProfileID
		}
		if got := prof(`{}`); got != def.ID {
			t.Fatalf("new session profile = %q, want the default %q", got, def.ID)
		}
		if got := prof(`{"profile_id":"` + other.ID + `"}`); got != other.ID {
			t.Fatalf("asked profile = %q, want %q", got, other.ID)
		}
		p := e.project(t, `{"name":"P","profile_id":"`+other.ID+`"}`)
		if got := prof(`{"project_id":"` + p.ID + `"}`); got != other.ID {
			t.Fatalf("project's profile = %q, want %q", got, other.ID)
		}
		e.req("POST", "/api/projects", `{"name":"Q","profile_id":"prf_nope"}`).want(t, 400, "profile_not_found")
		e.req("POST", "/api/sessions", `{"profile_id":"prf_nope"}`).want(t, 400, "profile_not_found")

		s := e.session(t)
		r := e.req("PATCH", "/api/sessions/"+s.ID, `{"profile_id":"`+other.ID+`"}`)
		r.want(t, 200, "")
		var v map[string]any
		r.decode(t, &v)
		if v["profile_id"] != other.ID {
			t.Fatalf("patched session = %v", v)
		}
		e.req("PATCH", "/api/sessions/"+s.ID, `{"profile_id":"prf_01ARZ3NDEKTSV4RRFFQ69G5FAV"}`).want(t, 400, "profile_not_found")
		// The switch is announced with the field that changed.
		evs, err := e.st.Events(e.ctx, store.EventQuery{SessionID: s.ID, Types: []event.Type{event.SessionUpdated}})
		if err != nil || len(evs) == 0 || profileIDOf(t, evs[len(evs)-1].Payload) != other.ID {
			t.Fatalf("session.updated events = %+v, %v", evs, err)
		}
		// A deleted profile can no longer be picked; sessions keep naming it.
		e.req("DELETE", "/api/profiles/"+other.ID, "").want(t, http.StatusNoContent, "")
		e.req("PATCH", "/api/sessions/"+s.ID, `{"profile_id":"`+other.ID+`"}`).want(t, 200, "") // unchanged: no check
		e.req("GET", "/api/sessions/"+s.ID, "").decode(t, &v)
		if v["profile_id"] != other.ID {
			t.Fatalf("session after its profile was deleted = %v", v)
		}
		e.req("POST", "/api/sessions", `{"profile_id":"`+other.ID+`"}`).want(t, 400, "profile_not_found")
		// A project saved as it was keeps the deleted profile it names.
		e.req("PATCH", "/api/projects/"+p.ID, `{"name":"P2","profile_id":"`+other.ID+`"}`).want(t, 200, "")
		e.req("PATCH", "/api/projects/"+p.ID, `{"profile_id":"`+def.ID+`"}`).want(t, 200, "")
		e.req("PATCH", "/api/projects/"+p.ID, `{"profile_id":"`+other.ID+`"}`).want(t, 400, "profile_not_found")
		e.req("PATCH", "/api/sessions/"+s.ID, `{"profile_id":""}`).want(t, 200, "")
	})
}

func profileIDOf(t *testing.T, payload json.RawMessage) string {
	t.Helper()
	var p struct {
		ProfileID string `json:"profile_id"`
	}
	if err := json.Unmarshal(payload, &p); err != nil {
		t.Fatal(err)
	}
	return p.ProfileID
}

func TestListTools(t *testing.T) {
	t.Parallel()
	e := newProfilesEnv(t, storetest.SQLite)
	var out struct {
		Tools []struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		} `json:"tools"`
	}
	r := e.req("GET", "/api/tools", "")
	r.want(t, 200, "")
	r.decode(t, &out)
	if len(out.Tools) != 3 || out.Tools[0].Name != "read_file" || out.Tools[1].Description != "search" {
		t.Fatalf("tools = %+v", out.Tools)
	}
}

// Profiles configure the server's agents: an operator reads them and
// picks one for a session, but only an admin changes them.
func TestProfilesNeedAdmin(t *testing.T) {
	t.Parallel()
	e := newProfilesEnv(t, storetest.SQLite)
	pr := e.profile(t, `{"name":"Ada"}`) // the local principal, before any account exists
	s := e.session(t)
	op := e.login(e.addPerson("ops", auth.RoleOperator))
	admin := e.login(e.addPerson("root", auth.RoleAdmin))
	for _, w := range []struct{ method, path, body string }{
		{"POST", "/api/profiles", `{"name":"Bob"}`},
		{"PATCH", "/api/profiles/" + pr.ID, `{"instructions":"x"}`},
		{"DELETE", "/api/profiles/" + pr.ID, ""},
		{"POST", "/api/profiles/" + pr.ID + "/duplicate", ""},
	} {
		op.req(w.method, w.path, w.body).want(t, http.StatusForbidden, "forbidden")
	}
	op.req("GET", "/api/profiles", "").want(t, http.StatusOK, "")
	op.req("GET", "/api/tools", "").want(t, http.StatusOK, "")
	op.req("PATCH", "/api/sessions/"+s.ID, `{"profile_id":"`+pr.ID+`"}`).want(t, http.StatusOK, "")
	admin.req("PATCH", "/api/profiles/"+pr.ID, `{"instructions":"x"}`).want(t, http.StatusOK, "")
	var got profileJSON
	admin.req("GET", "/api/profiles/"+pr.ID, "").decode(t, &got)
	if got.Instructions != "x" {
		t.Fatalf("after the refusals and the admin's edit: %+v", got)
	}
}
