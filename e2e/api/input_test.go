package api

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
)

// Bad input gets a clear error with a stable code and changes nothing.
func TestBadInputChangesNothing(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("hi"))))
	sid := s.NewSession(t)
	missingSession := "ses_01m7xyac7z7270rfddajtdkqvh"
	cases := []struct {
		name, method, path, ctype, body string
		status                          int
		code                            string
	}{
		{"unknown route", "GET", "/api/nope", "", "", 404, "not_found"},
		{"malformed session id", "GET", "/api/sessions/ses_bad", "", "", 404, "not_found"},
		{"missing session", "GET", "/api/sessions/" + missingSession, "", "", 404, "not_found"},
		{"send to missing session", "POST", "/api/sessions/" + missingSession + "/messages", "application/json", `{"content":"x"}`, 404, "not_found"},
		{"invalid JSON", "POST", "/api/sessions/" + sid + "/messages", "application/json", `{"content":`, 400, "invalid_input"},
		{"unknown field", "POST", "/api/sessions/" + sid + "/messages", "application/json", `{"content":"x","evil":1}`, 400, "invalid_input"},
		{"trailing data", "POST", "/api/sessions/" + sid + "/messages", "application/json", `{"content":"x"} {}`, 400, "invalid_input"},
		{"wrong type", "POST", "/api/sessions/" + sid + "/messages", "application/json", `{"content":5}`, 400, "invalid_input"},
		{"empty content", "POST", "/api/sessions/" + sid + "/messages", "application/json", `{"content":"   "}`, 400, "invalid_input"},
		{"bad if_busy", "POST", "/api/sessions/" + sid + "/messages", "application/json", `{"content":"x","if_busy":"maybe"}`, 400, "invalid_input"},
		{"form body", "POST", "/api/sessions/" + sid + "/messages", "application/x-www-form-urlencoded", `content=x`, 415, "unsupported_media_type"},
		{"empty body", "POST", "/api/sessions/" + sid + "/messages", "application/json", ``, 400, "invalid_input"},
		{"huge body", "POST", "/api/sessions/" + sid + "/messages", "application/json", `{"content":"` + strings.Repeat("a", 2<<20) + `"}`, 413, "body_too_large"},
		{"title with newline", "PATCH", "/api/sessions/" + sid, "application/json", `{"title":"a\nb"}`, 400, "invalid_input"},
		{"relative workspace", "POST", "/api/sessions", "application/json", `{"workspace":"tmp"}`, 400, "invalid_input"},
		{"bad limit", "GET", "/api/sessions?limit=0", "", "", 400, "invalid_input"},
		{"bad page cursor", "GET", "/api/sessions?cursor=zzz", "", "", 400, "invalid_cursor"},
		{"bad stream cursor", "GET", "/api/sessions/" + sid + "/events?after=-1", "", "", 400, "invalid_cursor"},
		{"bad request status", "GET", "/api/requests?status=weird", "", "", 400, "invalid_input"},
		{"respond to missing request", "POST", "/api/requests/req_01m7xyac7z7270rfddajtdkqvh/respond", "application/json", `{"choice":"once"}`, 404, "not_found"},
		{"cancel missing run", "POST", "/api/runs/run_01m7xyac7z7270rfddajtdkqvh/cancel", "", "", 404, "not_found"},
		{"wrong method", "PUT", "/api/sessions/" + sid, "application/json", `{}`, 405, "method_not_allowed"},
		{"content: invalid UTF-8", "POST", "/api/sessions/" + sid + "/messages", "application/json", "{\"content\":\"a\xffb\"}", 400, "invalid_utf8"},
		{"content: lone high surrogate", "POST", "/api/sessions/" + sid + "/messages", "application/json", `{"content":"a\ud800b"}`, 400, "invalid_utf8"},
		{"content: lone low surrogate", "POST", "/api/sessions/" + sid + "/messages", "application/json", `{"content":"a\udc00b"}`, 400, "invalid_utf8"},
		{"content: overlong UTF-8", "POST", "/api/sessions/" + sid + "/messages", "application/json", "{\"content\":\"a\xc0\xafb\"}", 400, "invalid_utf8"},
		{"title: lone surrogate", "PATCH", "/api/sessions/" + sid, "application/json", `{"title":"\udfff"}`, 400, "invalid_utf8"},
		{"new session title: invalid UTF-8", "POST", "/api/sessions", "application/json", "{\"title\":\"\xfe\"}", 400, "invalid_utf8"},
		{"rule pattern: lone surrogate", "POST", "/api/rules", "application/json", `{"tool":"run_command","pattern":"ls \ud83d"}`, 400, "invalid_utf8"},
		{"search: invalid UTF-8", "GET", "/api/sessions?q=%FF", "", "", 400, "invalid_utf8"},
		{"search: 50,000 characters", "GET", "/api/sessions?q=" + strings.Repeat("x", 50000), "", "", 400, "invalid_input"},
	}
	before := snapshot(t, s)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, s.URL+tc.path, strings.NewReader(tc.body))
			if tc.ctype != "" {
				req.Header.Set("Content-Type", tc.ctype)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, raw)
			}
			if tc.code == "" {
				return
			}
			if !bytes.Contains(raw, []byte(`"code":"`+tc.code+`"`)) || !bytes.Contains(raw, []byte(`"message":`)) {
				t.Fatalf("body %s lacks code %s", raw, tc.code)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("content type %q", ct)
			}
		})
	}
	if after := snapshot(t, s); after != before {
		t.Fatalf("bad input changed state:\nbefore %s\nafter  %s", before, after)
	}
}

// snapshot summarises everything a client can see of the server's state.
func snapshot(t *testing.T, s *e2etest.Server) string {
	t.Helper()
	var b strings.Builder
	for _, p := range []string{"/api/sessions", "/api/requests", "/api/rules"} {
		req, _ := http.NewRequest("GET", s.URL+p, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		b.Write(raw)
	}
	var sessions struct {
		Sessions []struct {
			ID string `json:"id"`
		} `json:"sessions"`
	}
	e2etest.Do(t, "GET", s.URL+"/api/sessions", nil, &sessions)
	for _, ss := range sessions.Sessions {
		var m struct {
			Last int64 `json:"last_event_id"`
		}
		e2etest.Do(t, "GET", s.URL+"/api/sessions/"+ss.ID+"/messages", nil, &m)
		b.WriteString(ss.ID)
	}
	return b.String()
}

// Sessions: create, rename, list newest first with cursor pagination and
// title search, delete (refused while busy).
func TestSessionsLifecycle(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.SlowText(50, 20))))
	var ids []string
	// Activity is ordered by millisecond timestamps, and ids made in the
	// same millisecond do not sort by creation: keep the steps apart.
	for range 5 {
		ids = append(ids, s.NewSession(t))
		time.Sleep(2 * time.Millisecond)
	}
	title := "Deploy 100% of the_thing"
	var patched e2etest.SessionJSON
	if c := e2etest.Do(t, "PATCH", s.URL+"/api/sessions/"+ids[1], map[string]string{"title": title}, &patched); c != 200 || patched.Title != title {
		t.Fatalf("rename: %d %+v", c, patched)
	}
	type page struct {
		Sessions []e2etest.SessionJSON `json:"sessions"`
		Next     string                `json:"next_cursor"`
	}
	var p1, p2, p3 page
	e2etest.Do(t, "GET", s.URL+"/api/sessions?limit=2", nil, &p1)
	e2etest.Do(t, "GET", s.URL+"/api/sessions?limit=2&cursor="+p1.Next, nil, &p2)
	e2etest.Do(t, "GET", s.URL+"/api/sessions?limit=2&cursor="+p2.Next, nil, &p3)
	var got []string
	for _, pg := range []page{p1, p2, p3} {
		for _, ss := range pg.Sessions {
			got = append(got, ss.ID)
		}
	}
	want := []string{ids[1], ids[4], ids[3], ids[2], ids[0]} // renamed one is most recently active
	if strings.Join(got, ",") != strings.Join(want, ",") || p3.Next != "" {
		t.Fatalf("pages = %v (next %q), want %v", got, p3.Next, want)
	}
	var found page
	e2etest.Do(t, "GET", s.URL+"/api/sessions?q=100%25+of+the_", nil, &found)
	if len(found.Sessions) != 1 || found.Sessions[0].ID != ids[1] {
		t.Fatalf("search found %+v", found.Sessions)
	}

	st := e2etest.OpenStream(t, s.URL+"/api/sessions/"+ids[0]+"/events", nil)
	r := s.Send(t, ids[0], "work")
	st.Until(t, "delta", e2etest.IsType(event.MessageDelta))
	var e e2etest.ErrorJSON
	if c := e2etest.Do(t, "DELETE", s.URL+"/api/sessions/"+ids[0], nil, &e); c != http.StatusConflict || e.Error.Code != "session_busy" {
		t.Fatalf("delete busy: %d %s", c, e.Error.Code)
	}
	e2etest.Do(t, "POST", s.URL+"/api/runs/"+r.ID+"/cancel", nil, nil)
	st.Until(t, "done", e2etest.IsDone(r.ID))
	if c := e2etest.Do(t, "DELETE", s.URL+"/api/sessions/"+ids[0], nil, nil); c != http.StatusNoContent {
		t.Fatalf("delete: %d", c)
	}
	if c := e2etest.Do(t, "GET", s.URL+"/api/sessions/"+ids[0], nil, nil); c != http.StatusNotFound {
		t.Fatalf("deleted session: %d", c)
	}
	if c := e2etest.Do(t, "GET", s.URL+"/api/runs/"+r.ID, nil, nil); c != http.StatusNotFound {
		t.Fatalf("run of deleted session: %d", c)
	}
}

// The Host check and the Origin check work on the real server.
func TestLocalSafety(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("hi"))))
	cases := []struct {
		name, method, host, origin string
		status                     int
	}{
		{"loopback host", "GET", "", "", 200},
		{"rebinding host", "GET", "evil.example:7420", "", 403},
		{"same origin post", "POST", "", "same", 201},
		{"foreign origin post", "POST", "", "http://evil.example", 403},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := io.Reader(nil)
			if tc.method == "POST" {
				body = strings.NewReader(`{}`)
			}
			req, _ := http.NewRequest(tc.method, s.URL+"/api/sessions", body)
			if tc.host != "" {
				req.Host = tc.host
			}
			switch tc.origin {
			case "same":
				req.Header.Set("Origin", s.URL)
			case "":
			default:
				req.Header.Set("Origin", tc.origin)
			}
			if body != nil {
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
		})
	}
}

// With a token configured every route but health needs it, and the token
// appears in no response, log line or journal row.
func TestTokenRequiredAndNeverLeaked(t *testing.T) {
	t.Parallel()
	const tok = "tok-7f3a9c1e-distinctive-secret"
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("hello"))), e2etest.WithToken(tok))
	get := func(path, bearer string) (int, string) {
		req, _ := http.NewRequest("GET", s.URL+path, nil)
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if c, _ := get("/api/sessions", ""); c != http.StatusUnauthorized {
		t.Fatalf("no token: %d", c)
	}
	if c, _ := get("/api/sessions", "wrong"); c != http.StatusUnauthorized {
		t.Fatalf("wrong token: %d", c)
	}
	if c, _ := get("/api/health", ""); c != http.StatusOK {
		t.Fatalf("health: %d", c)
	}
	var all strings.Builder
	post := func(path, body string) string {
		req, _ := http.NewRequest("POST", s.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		all.Write(b)
		return string(b)
	}
	sess := post("/api/sessions", `{}`)
	sid := sess[strings.Index(sess, "ses_") : strings.Index(sess, "ses_")+30]
	post("/api/sessions/"+sid+"/messages", `{"content":"hi"}`)
	for _, p := range []string{"/api/sessions", "/api/sessions/" + sid + "/messages", "/api/meta", "/api/health", "/api/requests"} {
		c, b := get(p, tok)
		if c != http.StatusOK {
			t.Fatalf("%s: %d", p, c)
		}
		all.WriteString(b)
	}
	// A token in the URL opens event streams only: a JSON route refuses it
	// even when the request asks for an event stream.
	for _, p := range []string{"/api/sessions", "/api/sessions/" + sid, "/api/sessions/" + sid + "/messages", "/api/requests", "/api/meta"} {
		req, _ := http.NewRequest("GET", s.URL+p+"?access_token="+tok, nil)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("%s with access_token and Accept: text/event-stream: %d, want 401", p, resp.StatusCode)
		}
	}
	// The journal, through the stream (token in the query, as EventSource sends it).
	evs := e2etest.OpenStream(t, s.URL+"/api/sessions/"+sid+"/events?access_token="+tok, nil).Until(t, "run.done", e2etest.IsType(event.RunDone))
	for _, e := range evs {
		all.Write(e.Payload)
	}
	s.Stop()
	if strings.Contains(all.String(), tok) {
		t.Fatal("the token appears in a response or journal row")
	}
	if strings.Contains(s.Logs.String(), tok) {
		t.Fatal("the token appears in the server log")
	}
	if s.Logs.String() == "" {
		t.Fatal("no log captured: the scan proves nothing")
	}
}
