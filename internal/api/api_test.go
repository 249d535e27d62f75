package api_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/httpguard"
)

// Routing and body decoding: every answer, including the mux's own 404 and
// 405, speaks the JSON error shape with a stable code, and a body the API
// cannot read whole changes nothing.
func TestRoutingAndDecoding(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.session(t)
	msgs := "/api/sessions/" + s.ID + "/messages"
	e.runErrCases(t, []errCase{
		{name: "unknown route", method: "GET", path: "/api/nope", status: 404, code: "not_found"},
		{name: "unknown nested route", method: "GET", path: "/api/sessions/" + s.ID + "/nope", status: 404, code: "not_found"},
		{name: "wrong method", method: "PUT", path: "/api/sessions", body: "{}", status: 405, code: "method_not_allowed"},
		{name: "wrong method on an item", method: "POST", path: "/api/runs/run_x", body: "{}", status: 405, code: "method_not_allowed"},
		{name: "malformed JSON", method: "POST", path: msgs, body: `{"content":`, status: 400, code: "invalid_input"},
		{name: "not an object", method: "POST", path: msgs, body: `["hi"]`, status: 400, code: "invalid_input"},
		{name: "wrong field type", method: "POST", path: msgs, body: `{"content":42}`, status: 400, code: "invalid_input"},
		{name: "unknown field", method: "POST", path: msgs, body: `{"content":"hi","contnet":"x"}`, status: 400, code: "invalid_input"},
		{name: "trailing data", method: "POST", path: msgs, body: `{"content":"hi"} {}`, status: 400, code: "invalid_input"},
		{name: "trailing garbage", method: "POST", path: msgs, body: `{"content":"hi"}x`, status: 400, code: "invalid_input"},
		{name: "empty body", method: "POST", path: msgs, status: 400, code: "invalid_input"},
		{name: "text/plain", method: "POST", path: msgs, body: `{"content":"hi"}`, header: []string{"Content-Type", "text/plain"}, status: 415, code: "unsupported_media_type"},
		{name: "bad media type", method: "POST", path: msgs, body: `{"content":"hi"}`, header: []string{"Content-Type", "application/"}, status: 415, code: "unsupported_media_type"},
		{name: "body over the limit", method: "POST", path: msgs, body: `{"content":"` + strings.Repeat("a", int(httpguard.DefaultMaxBodyBytes)) + `"}`, status: 413, code: httpguard.CodeBodyTooLarge},
	})
}

// A body of unknown length is cut off at the limit while it is read, and
// the answer says so rather than "invalid JSON".
func TestBodyLimitChunked(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.session(t)
	body := `{"content":"` + strings.Repeat("a", int(httpguard.DefaultMaxBodyBytes)) + `"}`
	req, err := http.NewRequest("POST", e.srv.URL+"/api/sessions/"+s.ID+"/messages", struct{ *strings.Reader }{strings.NewReader(body)})
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.ContentLength = -1 // chunked: the guard cannot refuse it up front
	res, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.NewDecoder(res.Body).Decode(&out)
	if res.StatusCode != http.StatusRequestEntityTooLarge || out.Error.Code != httpguard.CodeBodyTooLarge {
		t.Fatalf("status %d code %q, want 413 %s", res.StatusCode, out.Error.Code, httpguard.CodeBodyTooLarge)
	}
	if n := len(e.runsOf(t, s.ID)); n != 0 {
		t.Fatalf("%d runs after a refused message", n)
	}
}

// The JSON answers are not cached and say they are JSON; errors carry a
// message besides the code.
func TestAnswerHeaders(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, path := range []string{"/api/sessions", "/api/meta", "/api/nope"} {
		r := e.req("GET", path, "")
		if cc := r.hdr.Get("Cache-Control"); r.code == 200 && cc != "no-store" {
			t.Errorf("%s: Cache-Control %q, want no-store", path, cc)
		}
		if ct := r.hdr.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s: Content-Type %q", path, ct)
		}
		if r.hdr.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: no nosniff header", path)
		}
	}
	var e404 struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	e.req("GET", "/api/nope", "").decode(t, &e404)
	if e404.Error.Message == "" {
		t.Errorf("404 without a message: %+v", e404)
	}
}

// /api/meta describes the server and its contract.
func TestMeta(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.req("GET", "/api/meta", "")
	r.want(t, 200, "")
	var m struct {
		Product       string `json:"product"`
		Version       string `json:"version"`
		SchemaVersion int    `json:"schema_version"`
		StoreSchema   int    `json:"store_schema"`
		DefaultModel  string `json:"default_model"`
		DemoModel     bool   `json:"demo_model"`
		Capabilities  struct {
			EventTypes      []string `json:"event_types"`
			IfBusy          []string `json:"if_busy"`
			ApprovalChoices []string `json:"approval_choices"`
			StreamResume    []string `json:"stream_resume"`
			RunStatuses     []string `json:"run_statuses"`
		} `json:"capabilities"`
	}
	r.decode(t, &m)
	if m.Product != "caduceus" || m.Version != "test" || m.SchemaVersion < 1 || m.StoreSchema < 1 || !m.DemoModel || m.DefaultModel == "" {
		t.Errorf("meta = %+v", m)
	}
	c := m.Capabilities
	if !slices.Contains(c.EventTypes, string(event.RunDone)) || !slices.Contains(c.EventTypes, string(event.MessageDelta)) {
		t.Errorf("event_types %v lack run.done or message.delta", c.EventTypes)
	}
	if !slices.Equal(c.IfBusy, []string{"enqueue", "interrupt", "reject", "steer"}) || !slices.Equal(c.StreamResume, []string{"Last-Event-ID", "after"}) ||
		!slices.Contains(c.ApprovalChoices, "once") || !slices.Contains(c.RunStatuses, "interrupted") {
		t.Errorf("capabilities = %+v", c)
	}
}

// /api/models lists the providers without keys; without a lister it lists
// none and names the default.
func TestModels(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		opts      []envOpt
		providers int
	}{
		{"no lister", nil, 0},
		{"demo registry", []envOpt{withModels()}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.opts...)
			r := e.req("GET", "/api/models", "")
			r.want(t, 200, "")
			var m struct {
				Default   string            `json:"default"`
				Providers []json.RawMessage `json:"providers"`
			}
			r.decode(t, &m)
			if m.Default == "" || m.Providers == nil || len(m.Providers) < tc.providers {
				t.Fatalf("models = %s", r.body)
			}
		})
	}
}
