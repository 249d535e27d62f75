package api_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

type searchJSON struct {
	Hits []struct {
		SessionID    string `json:"session_id"`
		SessionTitle string `json:"session_title"`
		EventID      int64  `json:"event_id"`
		ItemID       string `json:"item_id"`
		Kind         string `json:"kind"`
		Snippet      string `json:"snippet"`
	} `json:"hits"`
	NextCursor string `json:"next_cursor"`
}

func (e *env) search(t *testing.T, query string) searchJSON {
	t.Helper()
	r := e.req("GET", "/api/search?"+query, "")
	r.want(t, http.StatusOK, "")
	var out searchJSON
	r.decode(t, &out)
	return out
}

// A word of one person's message is found in that session only, with the
// message's transcript item to scroll to and the word highlighted; a
// deleted session is found no more.
func TestSearch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var target string
	for i := range 5 {
		s := e.session(t)
		msg := "tell me about the weather"
		if i == 2 {
			target, msg = s.ID, "tell me about the Xylophone concert"
		}
		e.send(t, s.ID, msg)
	}
	// The message, and the title the session took from it.
	got := e.search(t, "q="+url.QueryEscape("xylophone"))
	kinds := map[string]bool{}
	for _, h := range got.Hits {
		if h.SessionID != target || h.EventID == 0 || !strings.Contains(h.Snippet, "\x02Xylophone\x03") {
			t.Errorf("hit = %+v, want one of %s with the word highlighted", h, target)
		}
		if h.Kind == "message.user" && !strings.HasPrefix(h.ItemID, "msg_") {
			t.Errorf("message hit names item %q, want the message's id", h.ItemID)
		}
		kinds[h.Kind] = true
	}
	if len(got.Hits) != 2 || !kinds["message.user"] || !kinds["title.updated"] {
		t.Fatalf("hits = %+v, want the message and the title", got.Hits)
	}
	if got := e.search(t, "q=weather&limit=2"); len(got.Hits) != 2 || got.NextCursor == "" {
		t.Errorf("first page of weather: %+v", got)
	} else if rest := e.search(t, "q=weather&limit=2&cursor="+url.QueryEscape(got.NextCursor)); len(rest.Hits) != 2 {
		t.Errorf("second page of weather: %+v", rest)
	}
	if got := e.search(t, "q=xylophone&from=2999-01-01"); len(got.Hits) != 0 {
		t.Errorf("from in the future: %+v", got.Hits)
	}
	for _, q := range []string{`"`, `xylophone"`, `AND OR`, `'; DROP TABLE events; --`, `日本語`, ``} {
		e.search(t, "q="+url.QueryEscape(q))
	}

	e.req("POST", "/api/runs/"+e.runsOf(t, target)[0].ID+"/cancel", "").want(t, http.StatusOK, "")
	e.waitRun(t, e.runsOf(t, target)[0].ID, "cancelled", func(r runJSON) bool { return r.Terminal })
	e.req("DELETE", "/api/sessions/"+target, "").want(t, http.StatusNoContent, "")
	if got := e.search(t, "q=xylophone"); len(got.Hits) != 0 {
		t.Errorf("deleted session still found: %+v", got.Hits)
	}
}

// The filters narrow what a search finds: the session's project and
// archived flag, and the model, where the server's default model also
// finds the sessions that name none.
func TestSearchFilters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.project(t, `{"name":"Filters"}`)
	create := func(body string) string {
		r := e.req("POST", "/api/sessions", body)
		r.want(t, http.StatusCreated, "")
		var s sessionJSON
		r.decode(t, &s)
		return s.ID
	}
	inProject := create(fmt.Sprintf(`{"project_id":%q}`, p.ID))
	otherModel := create(`{"model":"other/x"}`)
	archived := create(fmt.Sprintf(`{"project_id":%q}`, p.ID))
	names := map[string]string{inProject: "inProject", otherModel: "otherModel", archived: "archived"}
	for id, name := range names {
		e.send(t, id, "the quasar of "+name)
	}
	e.req("PATCH", "/api/sessions/"+archived, `{"archived":true}`).want(t, http.StatusOK, "")

	found := func(query string) string {
		var out []string
		for _, h := range e.search(t, "q=quasar&"+query).Hits {
			if n := names[h.SessionID]; !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
		slices.Sort(out)
		return strings.Join(out, " ")
	}
	mr := e.req("GET", "/api/meta", "")
	mr.want(t, http.StatusOK, "")
	var meta struct {
		DefaultModel string `json:"default_model"`
	}
	mr.decode(t, &meta)
	if meta.DefaultModel == "" {
		t.Fatal("no default model in /api/meta")
	}
	def := url.QueryEscape(meta.DefaultModel)
	for _, tc := range []struct{ query, want string }{
		{"", "archived inProject otherModel"},
		{"project=" + p.ID, "archived inProject"},
		{"project=prj_unknown", ""},
		{"archived=true", "archived"},
		{"archived=false", "inProject otherModel"},
		{"archived=all", "archived inProject otherModel"},
		{"model=other%2Fx", "otherModel"},
		{"model=" + def, "archived inProject"},
		{"model=nobody%2Fnothing", ""},
		{"project=" + p.ID + "&archived=false&model=" + def, "inProject"},
		{"project=" + p.ID + "&model=other%2Fx", ""},
		{"from=2000-01-01&to=2999-01-01&archived=false", "inProject otherModel"},
		{"to=2000-01-01", ""},
	} {
		if got := found(tc.query); got != tc.want {
			t.Errorf("search %q found %q, want %q", tc.query, got, tc.want)
		}
	}
}

func TestSearchErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.runErrCases(t, []errCase{
		{name: "q too long", method: "GET", path: "/api/search?q=" + strings.Repeat("a", 501), status: 400, code: "invalid_input"},
		{name: "limit zero", method: "GET", path: "/api/search?q=a&limit=0", status: 400, code: "invalid_input"},
		{name: "limit too large", method: "GET", path: "/api/search?q=a&limit=51", status: 400, code: "invalid_input"},
		{name: "bad from", method: "GET", path: "/api/search?q=a&from=yesterday", status: 400, code: "invalid_input"},
		{name: "bad to", method: "GET", path: "/api/search?q=a&to=2026-13-01", status: 400, code: "invalid_input"},
		{name: "bad archived", method: "GET", path: "/api/search?q=a&archived=maybe", status: 400, code: "invalid_input"},
		{name: "from after to", method: "GET", path: "/api/search?q=a&from=2026-02-01&to=2026-01-01", status: 400, code: "invalid_input"},
		{name: "from equals to", method: "GET", path: "/api/search?q=a&from=2026-01-01&to=2026-01-01", status: 400, code: "invalid_input"},
		{name: "model too long", method: "GET", path: "/api/search?q=a&model=" + strings.Repeat("m", 257), status: 400, code: "invalid_input"},
		{name: "project too long", method: "GET", path: "/api/search?q=a&project=" + strings.Repeat("p", 257), status: 400, code: "invalid_input"},
		{name: "bad cursor", method: "GET", path: "/api/search?q=a&cursor=garbage", status: 400, code: "invalid_cursor"},
	})
}
