package tool

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/websearch"
)

// fakeSearcher is a back-end configured or not, searching a real HTTP server
// speaking SearXNG's format.
type fakeSearcher struct {
	b  *websearch.Backend
	to time.Duration
}

func (s fakeSearcher) Configured(context.Context) bool { return s.b != nil }
func (s fakeSearcher) Endpoint(context.Context) string {
	if s.b == nil {
		return ""
	}
	return s.b.URL
}
func (s fakeSearcher) Search(ctx context.Context, q string, n int) ([]websearch.Result, error) {
	if s.b == nil {
		return nil, &websearch.Error{Code: websearch.CodeNotConfigured, Msg: "none"}
	}
	return websearch.Search(ctx, nil, *s.b, q, n, s.to)
}

func TestWebSearch(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("q") {
		case "slow":
			<-r.Context().Done()
		case "none":
			w.Write([]byte(`{"results": []}`))
		default:
			w.Write([]byte(`{"results": [{"title": "Go", "url": "https://go.dev/", "content": "The Go language"},
			  {"title": "Pkg", "url": "https://pkg.go.dev/", "content": ""}]}`))
		}
	}))
	t.Cleanup(srv.Close)
	ok := fakeSearcher{b: &websearch.Backend{Kind: websearch.KindSearXNG, URL: srv.URL}, to: 300 * time.Millisecond}
	ctx := context.Background()

	// Gating: absent without a back-end, present with one.
	if slices.Contains(Builtin(Config{}).Available(ctx).Names(), NameWebSearch) {
		t.Error("web_search offered with no fakeSearcher")
	}
	if slices.Contains(Builtin(Config{WebSearch: fakeSearcher{}}).Available(ctx).Names(), NameWebSearch) {
		t.Error("web_search offered with no back-end configured")
	}
	r := Builtin(Config{WebSearch: ok}).Available(ctx)
	ws, found := r.Get(NameWebSearch)
	if !found {
		t.Fatal("web_search not offered with a back-end")
	}
	if it := ws.Intent(json.RawMessage(`{"query": "go"}`)); it.Effect != EffectNetwork || it.URL != srv.URL || it.Invalid {
		t.Errorf("intent %+v", it)
	}

	for _, tc := range []struct {
		args, status, output, code string
		results                    int
	}{
		{`{"query": "golang"}`, event.ToolOK, "1. Go\nhttps://go.dev/\nThe Go language\n\n2. Pkg\nhttps://pkg.go.dev/", "", 2},
		{`{"query": "golang", "count": 1}`, event.ToolOK, "1. Go\nhttps://go.dev/\nThe Go language", "", 1},
		{`{"query": "none"}`, event.ToolOK, `No results for "none".`, "", 0},
		{`{"query": "slow"}`, event.ToolTimeout, "search failed: ", websearch.CodeTimeout, 0},
		{`{"query": ""}`, event.ToolError, "invalid arguments: query is required", "", -1},
		{`{"query": "a", "count": 21}`, event.ToolError, "invalid arguments: count must be", "", -1},
	} {
		res, err := ws.Run(ctx, Env{}, json.RawMessage(tc.args))
		if err != nil {
			t.Fatalf("%s: %v", tc.args, err)
		}
		if res.Status != tc.status || !strings.HasPrefix(res.Output, tc.output) {
			t.Errorf("%s: %s %q", tc.args, res.Status, res.Output)
		}
		if tc.results < 0 {
			continue
		}
		d := res.Data.(WebSearchData)
		if len(d.Results) != tc.results || d.Code != tc.code || d.OK != (tc.status == event.ToolOK) {
			t.Errorf("%s: data %+v", tc.args, d)
		}
	}
	// Without a back-end a call (from an old transcript, say) fails clearly.
	res, _ := NewWebSearch(nil).Run(ctx, Env{}, json.RawMessage(`{"query": "x"}`))
	if res.Status != event.ToolError || res.Data.(WebSearchData).Code != websearch.CodeNotConfigured {
		t.Errorf("unconfigured: %+v", res)
	}
}
