package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/control"
)

// Bad input to the session routes: each answer has its status and stable
// code, and nothing is written.
func TestSessionErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.session(t)
	busy := e.session(t)
	e.send(t, busy.ID, "keep me busy") // queued: no runner
	gone := "ses_" + strings.Repeat("0", 26)
	if r := e.req("GET", "/api/sessions/"+gone, ""); r.code != 404 {
		// Make sure the made-up id is well-formed, so the store is asked.
		t.Fatalf("made-up session id: %d %s", r.code, r.body)
	}
	long := strings.Repeat("é", control.MaxTitleRunes+1)
	e.runErrCases(t, []errCase{
		{name: "malformed id", method: "GET", path: "/api/sessions/nope", status: 404, code: "not_found"},
		{name: "wrong prefix", method: "GET", path: "/api/sessions/run_" + strings.Repeat("0", 26), status: 404, code: "not_found"},
		{name: "unknown id", method: "GET", path: "/api/sessions/" + gone, status: 404, code: "not_found"},
		{name: "patch unknown", method: "PATCH", path: "/api/sessions/" + gone, body: `{"title":"x"}`, status: 404, code: "not_found"},
		{name: "delete unknown", method: "DELETE", path: "/api/sessions/" + gone, status: 404, code: "not_found"},
		{name: "messages of unknown", method: "GET", path: "/api/sessions/" + gone + "/messages", status: 404, code: "not_found"},
		{name: "runs of unknown", method: "GET", path: "/api/sessions/" + gone + "/runs", status: 404, code: "not_found"},
		{name: "send to unknown", method: "POST", path: "/api/sessions/" + gone + "/messages", body: `{"content":"hi"}`, status: 404, code: "not_found"},
		{name: "compact unknown", method: "POST", path: "/api/sessions/" + gone + "/compact", status: 404, code: "not_found"},
		{name: "create with unknown field", method: "POST", path: "/api/sessions", body: `{"titel":"x"}`, status: 400, code: "invalid_input"},
		{name: "create with a relative workspace", method: "POST", path: "/api/sessions", body: `{"workspace":"rel/dir"}`, status: 400, code: "invalid_input"},
		{name: "create with a missing workspace", method: "POST", path: "/api/sessions", body: `{"workspace":"/does/not/exist"}`, status: 400, code: "invalid_input"},
		{name: "create with a two-line title", method: "POST", path: "/api/sessions", body: `{"title":"a\nb"}`, status: 400, code: "invalid_input"},
		{name: "create with a long title", method: "POST", path: "/api/sessions", body: `{"title":"` + long + `"}`, status: 400, code: "invalid_input"},
		{name: "patch with a long title", method: "PATCH", path: "/api/sessions/" + s.ID, body: `{"title":"` + long + `"}`, status: 400, code: "invalid_input"},
		{name: "patch with unknown field", method: "PATCH", path: "/api/sessions/" + s.ID, body: `{"name":"x"}`, status: 400, code: "invalid_input"},
		{name: "limit zero", method: "GET", path: "/api/sessions?limit=0", status: 400, code: "invalid_input"},
		{name: "limit too large", method: "GET", path: "/api/sessions?limit=201", status: 400, code: "invalid_input"},
		{name: "limit not a number", method: "GET", path: "/api/sessions?limit=ten", status: 400, code: "invalid_input"},
		{name: "bad page cursor", method: "GET", path: "/api/sessions?cursor=garbage", status: 400, code: "invalid_cursor"},
		{name: "empty message", method: "POST", path: "/api/sessions/" + s.ID + "/messages", body: `{"content":"  "}`, status: 400, code: "invalid_input"},
		{name: "message too long", method: "POST", path: "/api/sessions/" + s.ID + "/messages", body: `{"content":"` + strings.Repeat("a", control.MaxMessageBytes+1) + `"}`, status: 400, code: "invalid_input"},
		{name: "bad if_busy", method: "POST", path: "/api/sessions/" + s.ID + "/messages", body: `{"content":"hi","if_busy":"maybe"}`, status: 400, code: "invalid_input"},
		{name: "busy, reject", method: "POST", path: "/api/sessions/" + busy.ID + "/messages", body: `{"content":"hi","if_busy":"reject"}`, status: 409, code: "session_busy"},
		{name: "delete busy", method: "DELETE", path: "/api/sessions/" + busy.ID, status: 409, code: "session_busy"},
		{name: "compact busy", method: "POST", path: "/api/sessions/" + busy.ID + "/compact", status: 409, code: "session_busy"},
	})
}

// Create, read, rename, change model, delete; a created session is idle
// and lists first.
func TestSessionCRUD(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		name, body string
		want       sessionJSON
	}{
		{"no body", "", sessionJSON{Title: "", Workspace: e.ws, Status: "idle"}},
		{"empty object", "{}", sessionJSON{Workspace: e.ws, Status: "idle"}},
		{"title, trimmed", `{"title":"  Port change  "}`, sessionJSON{Title: "Port change", Workspace: e.ws, Status: "idle"}},
		{"workspace and model", fmt.Sprintf(`{"workspace":%q,"model":" demo/demo "}`, e.ws+"/."), sessionJSON{Workspace: e.ws, Model: "demo/demo", Status: "idle"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.req("POST", "/api/sessions", tc.body)
			r.want(t, http.StatusCreated, "")
			var got sessionJSON
			r.decode(t, &got)
			if !strings.HasPrefix(got.ID, "ses_") {
				t.Fatalf("id %q", got.ID)
			}
			tc.want.ID = got.ID
			if got != tc.want {
				t.Fatalf("created %+v, want %+v", got, tc.want)
			}
			var read sessionJSON
			g := e.req("GET", "/api/sessions/"+got.ID, "")
			g.want(t, 200, "")
			g.decode(t, &read)
			if read != got {
				t.Fatalf("read %+v, created %+v", read, got)
			}
		})
	}

	s := e.session(t)
	patch := func(body string) sessionJSON {
		t.Helper()
		r := e.req("PATCH", "/api/sessions/"+s.ID, body)
		r.want(t, 200, "")
		var out sessionJSON
		r.decode(t, &out)
		return out
	}
	if got := patch(`{"title":"Renamed"}`); got.Title != "Renamed" || got.Model != "" {
		t.Fatalf("after rename: %+v", got)
	}
	if got := patch(`{"model":"demo/other"}`); got.Title != "Renamed" || got.Model != "demo/other" {
		t.Fatalf("a patch of the model changed the title: %+v", got)
	}
	if got := patch(`{}`); got.Title != "Renamed" || got.Model != "demo/other" {
		t.Fatalf("an empty patch changed something: %+v", got)
	}
	e.req("DELETE", "/api/sessions/"+s.ID, "").want(t, http.StatusNoContent, "")
	e.req("GET", "/api/sessions/"+s.ID, "").want(t, 404, "not_found")
	e.req("DELETE", "/api/sessions/"+s.ID, "").want(t, 404, "not_found")
}

// Sessions list newest first in pages that join up without gaps or
// repeats, and a title search narrows the list; the list carries the
// cursor to stream from.
func TestSessionPaging(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const n = 7
	var made []string
	for i := range n {
		r := e.req("POST", "/api/sessions", fmt.Sprintf(`{"title":"session %d %s"}`, i, map[bool]string{true: "even", false: "odd"}[i%2 == 0]))
		r.want(t, 201, "")
		var s sessionJSON
		r.decode(t, &s)
		made = append(made, s.ID)
		// The list orders by time, then by id; ids of one millisecond
		// are random among themselves, so "newest first" is only defined
		// between sessions a millisecond apart.
		time.Sleep(2 * time.Millisecond)
	}
	type page struct {
		Sessions    []sessionJSON `json:"sessions"`
		NextCursor  string        `json:"next_cursor"`
		LastEventID *int64        `json:"last_event_id"`
	}
	var seen []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > n {
			t.Fatal("paging does not end")
		}
		r := e.req("GET", "/api/sessions?limit=3&cursor="+cursor, "")
		r.want(t, 200, "")
		var p page
		r.decode(t, &p)
		if p.LastEventID == nil {
			t.Fatalf("no last_event_id: %s", r.body)
		}
		if len(p.Sessions) > 3 {
			t.Fatalf("page of %d with limit 3", len(p.Sessions))
		}
		for _, s := range p.Sessions {
			seen = append(seen, s.ID)
		}
		if p.NextCursor == "" {
			break
		}
		cursor = p.NextCursor
	}
	if len(seen) != n {
		t.Fatalf("pages hold %d sessions, want %d: %v", len(seen), n, seen)
	}
	for i := range n {
		if seen[i] != made[n-1-i] {
			t.Fatalf("order %v, want newest first %v", seen, made)
		}
	}

	for _, tc := range []struct {
		q    string
		want int
	}{{"EVEN", 4}, {"odd", 3}, {"session 3", 1}, {"nothing like it", 0}} {
		var p page
		r := e.req("GET", "/api/sessions?q="+strings.ReplaceAll(tc.q, " ", "+"), "")
		r.want(t, 200, "")
		r.decode(t, &p)
		if len(p.Sessions) != tc.want || p.Sessions == nil {
			t.Errorf("q=%q: %d sessions (%s), want %d", tc.q, len(p.Sessions), r.body, tc.want)
		}
	}
}

// A message queues a run (202) with the run's view; the session shows it
// as queued, and a first message names an untitled session.
func TestSendMessage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.session(t)
	r := e.req("POST", "/api/sessions/"+s.ID+"/messages", `{"content":"Fix the port clash\nand more"}`)
	r.want(t, http.StatusAccepted, "")
	var ru runJSON
	r.decode(t, &ru)
	if !strings.HasPrefix(ru.ID, "run_") || ru.SessionID != s.ID || ru.Status != "queued" || ru.Terminal ||
		ru.Input != "Fix the port clash\nand more" || ru.LastEventID == 0 {
		t.Fatalf("run = %s", r.body)
	}
	var got sessionJSON
	e.req("GET", "/api/sessions/"+s.ID, "").decode(t, &got)
	if got.Title != "Fix the port clash" || got.Status != "queued" || got.QueuedRuns != 1 {
		t.Fatalf("session after send: %+v", got)
	}

	// Later messages queue behind it; interrupt cancels only a run that
	// has started, so with none started it queues too.
	second := e.send(t, s.ID, "second")
	var third runJSON
	r = e.req("POST", "/api/sessions/"+s.ID+"/messages", `{"content":"third","if_busy":"interrupt","model":"demo/demo"}`)
	r.want(t, http.StatusAccepted, "")
	r.decode(t, &third)
	runs := e.runsOf(t, s.ID)
	if len(runs) != 3 || runs[0].ID != ru.ID || runs[1].ID != second.ID || runs[2].ID != third.ID {
		t.Fatalf("runs %+v", runs)
	}
	e.req("GET", "/api/sessions/"+s.ID, "").decode(t, &got)
	if got.QueuedRuns != 3 {
		t.Fatalf("queued_runs %d, want 3", got.QueuedRuns)
	}
}

// With a runner, a message is answered and the transcript holds the user
// message and the answer; the session is idle again and can be compacted
// and deleted.
func TestMessagesAndCompact(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withRunner(script(turn(text("Hello from the demo.")), turn(text("Summary.")))))
	s := e.session(t)
	var empty struct {
		Items       []json.RawMessage `json:"items"`
		LastEventID int64             `json:"last_event_id"`
	}
	e.req("GET", "/api/sessions/"+s.ID+"/messages", "").decode(t, &empty)
	if empty.Items == nil || len(empty.Items) != 0 {
		t.Fatalf("a new session's transcript: %+v", empty)
	}

	ru := e.send(t, s.ID, "hello")
	e.waitRun(t, ru.ID, "completed", status("completed"))
	r := e.req("GET", "/api/sessions/"+s.ID+"/messages", "")
	r.want(t, 200, "")
	var tr struct {
		Items       []json.RawMessage `json:"items"`
		LastEventID int64             `json:"last_event_id"`
	}
	r.decode(t, &tr)
	if len(tr.Items) < 2 || tr.LastEventID < e.lastID() {
		t.Fatalf("transcript %s (last id %d)", r.body, e.lastID())
	}
	if !strings.Contains(string(r.body), "Hello from the demo.") || !strings.Contains(string(r.body), "hello") {
		t.Fatalf("transcript lacks the messages: %s", r.body)
	}
	var got sessionJSON
	e.req("GET", "/api/sessions/"+s.ID, "").decode(t, &got)
	if got.Status != "idle" || got.ActiveRunID != "" {
		t.Fatalf("session after the run: %+v", got)
	}

	var c runJSON
	cr := e.req("POST", "/api/sessions/"+s.ID+"/compact", "")
	cr.want(t, http.StatusAccepted, "")
	cr.decode(t, &c)
	// The answer shows the run as it is when read: a runner may have taken
	// it already.
	if c.ID == "" || c.SessionID != s.ID || (c.Status != "queued" && c.Status != "running" && c.Status != "completed") {
		t.Fatalf("compact run %s", cr.body)
	}
	e.waitRun(t, c.ID, "the compaction to end", func(r runJSON) bool { return r.Terminal })
	e.req("DELETE", "/api/sessions/"+s.ID, "").want(t, http.StatusNoContent, "")
	e.req("GET", "/api/sessions/"+s.ID+"/messages", "").want(t, 404, "not_found")
}

// A search is bounded in length: a longer one is refused as bad input
// rather than reaching SQLite, whose LIKE refuses patterns over 50,000
// bytes with an internal error. The bound counts characters, not bytes.
func TestSearchLength(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.session(t)
	for _, tc := range []struct {
		name   string
		q      string
		status int
	}{
		{"at the bound", strings.Repeat("a", 500), 200},
		{"at the bound, four-byte characters", strings.Repeat("\U0001F600", 500), 200},
		{"at the bound, all wildcards", strings.Repeat("%", 500), 200},
		{"one over", strings.Repeat("a", 501), 400},
		{"50,000 characters", strings.Repeat("x", 50000), 400},
		{"50,000 wildcards", strings.Repeat("_", 50000), 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.req("GET", "/api/sessions?q="+url.QueryEscape(tc.q), "")
			if tc.status == 200 {
				r.want(t, 200, "")
				return
			}
			r.want(t, tc.status, "invalid_input")
		})
	}
}
