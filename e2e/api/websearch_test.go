package api

// Web search (issue 18, h18-web), acceptance: with no back-end the model
// is not offered web_search; with a (fake, local) SearXNG configured in
// Settings, a model calls it and its results (titles, URLs, snippets)
// land in the transcript for the card, and in the tool result the model
// reads.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// fakeSearXNG answers GET /search?format=json as SearXNG does, and 403
// without format=json (SearXNG's answer when the format is not enabled).
func fakeSearXNG(t *testing.T, hits *atomic.Int32) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/search" || r.URL.Query().Get("format") != "json" {
			http.Error(w, "Forbidden", http.StatusForbidden)
			return
		}
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"query": %q, "number_of_results": 0, "results": [
		  {"url": "https://en.wikipedia.org/wiki/Caduceus", "title": "Caduceus - Wikipedia", "content": "The caduceus is the staff carried by Hermes.", "engine": "wikipedia", "engines": ["wikipedia"], "score": 3.0, "category": "general"},
		  {"url": "https://example.org/hermes", "title": "Hermes <b>staff</b>", "content": "Two snakes &amp; wings.", "engine": "duckduckgo", "engines": ["duckduckgo"], "score": 1.0, "category": "general"}
		], "answers": [], "corrections": [], "infoboxes": [], "suggestions": [], "unresponsive_engines": []}`, r.URL.Query().Get("q"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func toolNames(t *testing.T, body []byte) []string {
	t.Helper()
	var req modelRequest
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range req.Tools {
		names = append(names, tl.Function.Name)
	}
	return names
}

func TestWebSearchThroughSearXNG(t *testing.T) {
	var hits atomic.Int32
	searx := fakeSearXNG(t, &hits)
	oa := newOpenAIFake(t, openaiTestKey, openaiTestKey)
	// Off: the fake SearXNG is on loopback, which the smart mode asks about.
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("unused"))),
		e2etest.WithEnv(mergeEnv(oa)), e2etest.WithWorkspace(newWorkspace(t)), e2etest.WithApprovalMode("off"))
	sid := s.NewSession(t)

	// No back-end: the tool list the model receives has no web_search.
	oa.stream(oa.fixture("text"))
	r := sendModel(t, s, sid, "hello", oa.ref())
	s.WaitStatus(t, r.ID, "completed")
	bodies := oa.bodies()
	if names := toolNames(t, bodies[len(bodies)-1]); slices.Contains(names, tool.NameWebSearch) || !slices.Contains(names, tool.NameWebFetch) {
		t.Fatalf("tools without a back-end: %v", names)
	}

	// Configure SearXNG in Settings.
	var view struct {
		Configured bool   `json:"configured"`
		Kind       string `json:"kind"`
	}
	if c := e2etest.Do(t, "PUT", s.URL+"/api/settings/web-search", map[string]any{"kind": "searxng", "url": searx.URL}, &view); c != http.StatusOK || !view.Configured {
		t.Fatalf("configure: %d %+v", c, view)
	}

	oa.stream(oa.tools(fakeCall{id: "call_ws1", name: tool.NameWebSearch, args: `{"query":"caduceus staff","count":5}`}))
	oa.stream(oa.text("The caduceus is Hermes's staff."))
	st := e2etest.OpenStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
	r = sendModel(t, s, sid, "what is a caduceus?", oa.ref())
	got := summarise(t, st.Until(t, "run.done", e2etest.IsDone(r.ID)), r.ID)
	if got.done.Status != "completed" {
		t.Fatalf("run.done %+v", got.done)
	}
	bodies = oa.bodies()
	first := bodies[len(bodies)-2]
	if names := toolNames(t, first); !slices.Contains(names, tool.NameWebSearch) {
		t.Fatalf("tools with a back-end: %v", names)
	}
	if hits.Load() != 1 {
		t.Fatalf("SearXNG was asked %d times", hits.Load())
	}

	// The transcript's tool.done carries the card's data.
	done, ok := got.results["call_ws1"]
	if !ok || done.Status != event.ToolOK || done.Name != tool.NameWebSearch {
		t.Fatalf("tool.done %+v", done)
	}
	var data tool.WebSearchData
	if err := json.Unmarshal(done.Result, &data); err != nil {
		t.Fatal(err)
	}
	if !data.OK || data.Query != "caduceus staff" || len(data.Results) != 2 ||
		data.Results[0].Title != "Caduceus - Wikipedia" || data.Results[0].URL != "https://en.wikipedia.org/wiki/Caduceus" ||
		data.Results[1].Title != "Hermes staff" || data.Results[1].Snippet != "Two snakes & wings." {
		t.Fatalf("result data %s", done.Result)
	}
	// The model read the same results.
	res := oa.results(t, bodies[len(bodies)-1])
	if out := res["call_ws1"]; !strings.Contains(out, "1. Caduceus - Wikipedia\nhttps://en.wikipedia.org/wiki/Caduceus") {
		t.Fatalf("the model read %q", out)
	}

	// Removing the back-end takes the tool away again.
	if c := e2etest.Do(t, "DELETE", s.URL+"/api/settings/web-search", nil, nil); c != http.StatusNoContent {
		t.Fatalf("delete: %d", c)
	}
	oa.stream(oa.fixture("text"))
	r = sendModel(t, s, sid, "again", oa.ref())
	s.WaitStatus(t, r.ID, "completed")
	bodies = oa.bodies()
	if names := toolNames(t, bodies[len(bodies)-1]); slices.Contains(names, tool.NameWebSearch) {
		t.Fatalf("tools after removal: %v", names)
	}
}
