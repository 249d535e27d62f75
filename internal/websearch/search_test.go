package websearch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/websearch"
)

const testKey = "bsk-test-0123456789-abcdef"

// fakes speak each back-end's wire format and check the request the way
// the real service would (path, method, auth header, parameters).
func fake(t *testing.T, kind string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch kind {
		case websearch.KindSearXNG:
			if r.Method != http.MethodGet || r.URL.Path != "/search" || r.URL.Query().Get("format") != "json" {
				http.Error(w, "forbidden", http.StatusForbidden) // what SearXNG answers without format=json allowed
				return
			}
			q := r.URL.Query().Get("q")
			fmt.Fprintf(w, `{"query": %q, "number_of_results": 0, "results": [
			  {"url": "https://go.dev/doc/", "title": "Documentation - The Go Programming Language", "content": "The Go programming language is an open source project.", "engine": "duckduckgo", "engines": ["duckduckgo"], "score": 1.5, "category": "general"},
			  {"url": "javascript:alert(1)", "title": "evil", "content": "x"},
			  {"url": "https://pkg.go.dev/std", "title": "", "content": "Standard library &amp; more"}
			], "answers": [], "corrections": [], "infoboxes": [], "suggestions": [], "unresponsive_engines": []}`, q)
		case websearch.KindBrave:
			if r.Method != http.MethodGet || r.URL.Path != "/res/v1/web/search" {
				http.NotFound(w, r)
				return
			}
			if r.Header.Get("X-Subscription-Token") != testKey {
				w.WriteHeader(http.StatusUnauthorized)
				io.WriteString(w, `{"type": "ErrorResponse", "error": {"code": "SUBSCRIPTION_TOKEN_INVALID", "status": 401}}`)
				return
			}
			if r.URL.Query().Get("count") != "2" {
				http.Error(w, "count", http.StatusBadRequest)
				return
			}
			io.WriteString(w, `{"type": "search", "query": {"original": "golang"}, "web": {"type": "search", "results": [
			  {"title": "The <strong>Go</strong> Programming Language", "url": "https://go.dev/", "description": "<strong>Go</strong> is an open source programming language.", "type": "search_result"},
			  {"title": "Go (programming language) - Wikipedia", "url": "https://en.wikipedia.org/wiki/Go_(programming_language)", "description": "Go is a statically typed language."},
			  {"title": "third", "url": "https://example.com/3", "description": "beyond count"}
			]}}`)
		case websearch.KindTavily:
			var body struct {
				Query      string `json:"query"`
				MaxResults int    `json:"max_results"`
			}
			if r.Method != http.MethodPost || r.URL.Path != "/search" || r.Header.Get("Content-Type") != "application/json" ||
				json.NewDecoder(r.Body).Decode(&body) != nil || body.Query == "" || body.MaxResults != 5 {
				http.Error(w, `{"detail": {"error": "bad request"}}`, http.StatusBadRequest)
				return
			}
			if r.Header.Get("Authorization") != "Bearer "+testKey {
				w.WriteHeader(http.StatusUnauthorized)
				io.WriteString(w, `{"detail": {"error": "Unauthorized: missing or invalid API key."}}`)
				return
			}
			io.WriteString(w, `{"query": "golang", "answer": null, "images": [], "results": [
			  {"title": "The Go Programming Language", "url": "https://go.dev/", "content": "Build simple, secure, scalable systems with Go.", "score": 0.98, "raw_content": null}
			], "response_time": 1.09}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestSearchWireFormats(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		kind  string
		path  string
		key   string
		count int
		want  []websearch.Result
	}{
		{"searxng", websearch.KindSearXNG, "", "", 0, []websearch.Result{
			{Title: "Documentation - The Go Programming Language", URL: "https://go.dev/doc/", Snippet: "The Go programming language is an open source project."},
			// javascript: dropped; an empty title falls back to the host; entities decoded.
			{Title: "pkg.go.dev", URL: "https://pkg.go.dev/std", Snippet: "Standard library & more"},
		}},
		{"brave", websearch.KindBrave, "/res/v1/web/search", testKey, 2, []websearch.Result{
			{Title: "The Go Programming Language", URL: "https://go.dev/", Snippet: "Go is an open source programming language."},
			{Title: "Go (programming language) - Wikipedia", URL: "https://en.wikipedia.org/wiki/Go_(programming_language)", Snippet: "Go is a statically typed language."},
		}},
		{"tavily", websearch.KindTavily, "/search", testKey, 0, []websearch.Result{
			{Title: "The Go Programming Language", URL: "https://go.dev/", Snippet: "Build simple, secure, scalable systems with Go."},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fake(t, tc.kind)
			got, err := websearch.Search(ctx, srv.Client(), websearch.Backend{Kind: tc.kind, URL: srv.URL + tc.path, APIKey: tc.key}, " golang ", tc.count, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("results\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestSearchErrors(t *testing.T) {
	ctx := context.Background()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	t.Cleanup(slow.Close)
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "<html>not json</html>") }))
	t.Cleanup(garbage.Close)
	limited := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTooManyRequests) }))
	t.Cleanup(limited.Close)
	huge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"results": [`+strings.Repeat(`{"title": "x", "url": "https://x.example/", "content": "y"},`, websearch.MaxBody/50)+`{}]}`)
	}))
	t.Cleanup(huge.Close)
	// A redirect to another host must not carry the key there.
	var leaked atomic.Bool
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Subscription-Token") != "" || r.Header.Get("Authorization") != "" {
			leaked.Store(true)
		}
	}))
	t.Cleanup(elsewhere.Close)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/steal", http.StatusFound)
	}))
	t.Cleanup(redirect.Close)
	t.Cleanup(func() {
		if leaked.Load() {
			t.Error("a redirect carried the key to another host")
		}
	})
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	brave, tavily := fake(t, websearch.KindBrave), fake(t, websearch.KindTavily)
	const wrongKey = "wrong-key-9876543210-zyxw"
	for _, tc := range []struct {
		name  string
		b     websearch.Backend
		query string
		code  string
	}{
		{"empty query", websearch.Backend{Kind: websearch.KindSearXNG, URL: garbage.URL}, "  ", websearch.CodeInvalidInput},
		{"long query", websearch.Backend{Kind: websearch.KindSearXNG, URL: garbage.URL}, strings.Repeat("a", websearch.MaxQuery+1), websearch.CodeInvalidInput},
		{"unknown kind", websearch.Backend{Kind: "bing", URL: garbage.URL}, "q", websearch.CodeInvalidInput},
		{"bad url", websearch.Backend{Kind: websearch.KindSearXNG, URL: "ftp://x"}, "q", websearch.CodeInvalidInput},
		{"timeout", websearch.Backend{Kind: websearch.KindSearXNG, URL: slow.URL}, "q", websearch.CodeTimeout},
		{"not json", websearch.Backend{Kind: websearch.KindSearXNG, URL: garbage.URL}, "q", websearch.CodeBadResponse},
		{"too large", websearch.Backend{Kind: websearch.KindSearXNG, URL: huge.URL}, "q", websearch.CodeBadResponse},
		{"rate limited", websearch.Backend{Kind: websearch.KindSearXNG, URL: limited.URL}, "q", websearch.CodeRateLimited},
		{"unreachable", websearch.Backend{Kind: websearch.KindSearXNG, URL: closed.URL}, "q", websearch.CodeUnreachable},
		{"brave wrong key", websearch.Backend{Kind: websearch.KindBrave, URL: brave.URL + "/res/v1/web/search", APIKey: wrongKey}, "q", websearch.CodeAuth},
		{"redirect", websearch.Backend{Kind: websearch.KindBrave, URL: redirect.URL, APIKey: wrongKey}, "q", websearch.CodeFailed},
		{"tavily wrong key", websearch.Backend{Kind: websearch.KindTavily, URL: tavily.URL + "/search", APIKey: wrongKey}, "q", websearch.CodeAuth},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := websearch.Search(ctx, nil, tc.b, tc.query, 0, 200*time.Millisecond)
			var we *websearch.Error
			if !errors.As(err, &we) || we.Code != tc.code {
				t.Fatalf("err = %v, want code %s", err, tc.code)
			}
			if strings.Contains(we.Msg, wrongKey) {
				t.Fatalf("the message holds the key: %s", we.Msg)
			}
		})
	}
}

func TestSearchBounds(t *testing.T) {
	long := strings.Repeat("é", websearch.MaxSnippet+50)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var rs []string
		for i := range 40 {
			rs = append(rs, fmt.Sprintf(`{"title": %q, "url": "https://e.example/%d", "content": %q}`, long, i, long))
		}
		io.WriteString(w, `{"results": [`+strings.Join(rs, ",")+`]}`)
	}))
	t.Cleanup(srv.Close)
	got, err := websearch.Search(context.Background(), nil, websearch.Backend{Kind: websearch.KindSearXNG, URL: srv.URL}, "q", 100, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != websearch.MaxCount {
		t.Fatalf("%d results, want %d", len(got), websearch.MaxCount)
	}
	if n := len([]rune(got[0].Snippet)); n != websearch.MaxSnippet || !strings.HasSuffix(got[0].Snippet, "…") {
		t.Errorf("snippet of %d runes", n)
	}
	if n := len([]rune(got[0].Title)); n != websearch.MaxTitle {
		t.Errorf("title of %d runes", n)
	}
}
