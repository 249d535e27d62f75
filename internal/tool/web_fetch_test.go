package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
)

const testPage = `<!DOCTYPE html>
<html><head><title>Test &amp; Page</title>
<style>body { color: red }</style>
<script>var secret = "<p>not text</p>";</script>
</head>
<body>
<!-- a comment -->
<nav><a href="/">Home</a> | <a href="#top">Top</a></nav>
<h1>Main   heading</h1>
<p>First    paragraph with
a <a href="docs/intro.html">relative link</a> and <b>bold</b>&nbsp;text.</p>
<ul><li>one</li><li>two <a href="https://example.org/x">ext</a></li></ul>
<ol start="3"><li>three</li><li>four</li></ol>
<pre>  keep
    indent</pre>
<table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>
<p>x &lt; y &#8212; done<br>next line</p>
</body></html>`

func fetchTool(t *testing.T, srv *httptest.Server, cfg Config) Tool {
	t.Helper()
	if srv != nil {
		cfg.HTTPClient = srv.Client()
	}
	return NewWebFetch(cfg)
}

func fetch(t *testing.T, tl Tool, rawURL string, extra string) Result {
	t.Helper()
	return callEnv(t, context.Background(), tl, Env{}, `{"url": `+strconv.Quote(rawURL)+extra+`}`)
}

func TestWebFetchHTML(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("User-Agent") != fetchUserAgent {
			http.Error(w, "no user agent", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, testPage)
	}))
	defer srv.Close()

	res := fetch(t, fetchTool(t, srv, Config{}), srv.URL+"/page/index.html", "")
	if res.Status != event.ToolOK {
		t.Fatalf("status %s: %s", res.Status, res.Output)
	}
	d := res.Data.(WebFetchData)
	want := "Test & Page\n\n" +
		"[Home](" + srv.URL + "/) | Top\n\n" +
		"# Main heading\n\n" +
		"First paragraph with a [relative link](" + srv.URL + "/page/docs/intro.html) and bold text.\n\n" +
		"- one\n- two [ext](https://example.org/x)\n\n" +
		"3. three\n4. four\n\n" +
		"  keep\n    indent\n\n" +
		"k | v\na | 1\n\n" +
		"x < y — done\nnext line"
	if d.Text != want {
		t.Errorf("text:\n%s\n\nwant:\n%s", d.Text, want)
	}
	if !d.OK || d.Status != 200 || d.ContentType != "text/html" || d.Bytes != len(testPage) || d.Truncated ||
		d.URL != srv.URL+"/page/index.html" || d.FinalURL != d.URL {
		t.Errorf("data %+v", d)
	}
	if res.Output != "["+d.URL+": HTTP 200, text/html, "+strconv.Itoa(len(testPage))+" bytes]\n\n"+want {
		t.Errorf("output:\n%s", res.Output)
	}
}

func TestHTMLToText(t *testing.T) {
	base, _ := url.Parse("https://example.com/a/b.html")
	tests := []struct{ name, html, want string }{
		{"plain", "hello   <i>world</i>", "hello world"},
		{"entities", "&quot;a&quot; &amp;&amp; &#x41; &eacute;", `"a" && A é`},
		{"script skipped", "a<script type=x>if (a<b) { document.write('</p>') }</script>b", "ab"},
		{"script end tag case", "a<SCRIPT>x</Script >b", "ab"},
		{"unterminated script", "a<script>forever", "a"},
		{"unterminated comment", "a<!-- b", "a"},
		{"style and noscript", "<style>p{}</style><noscript>enable js</noscript>ok", "ok"},
		{"svg dropped", "a<svg><text>label</text></svg>b", "ab"},
		{"lone less-than", "1 < 2 and 3<4", "1 < 2 and 3<4"},
		{"attribute with >", `<a href="/x?a=1&amp;b=>">go</a>`, "[go](https://example.com/x?a=1&b=>)"},
		{"unquoted href", `<a href=c.html title='t'>c</a>`, "[c](https://example.com/a/c.html)"},
		{"link text equals url", `<a href="https://e.org/">https://e.org</a>`, "https://e.org"},
		{"empty link", `x<a href="/i"><img src=i.png></a>y`, "xy"},
		{"javascript link", `<a href="javascript:void(0)">js</a>`, "js"},
		{"fragment link", `<a href="#s">s</a>`, "s"},
		{"mailto kept", `<a href="mailto:a@b.c">mail</a>`, "[mail](mailto:a@b.c)"},
		{"space before link", `see <a href="/d">docs</a>.`, "see [docs](https://example.com/d)."},
		{"block link", `<a href="/d"><div>one</div><div>two</div></a>`, "one\ntwo (https://example.com/d)"},
		{"nested lists", "<ul><li>a<ul><li>b</li></ul></li><li>c</li></ul>", "- a\n  - b\n- c"},
		{"headings", "<h2>Two</h2><p>text</p><h3>Three</h3>", "## Two\n\ntext\n\n### Three"},
		{"hr", "a<hr/>b", "a\n---\nb"},
		{"blank lines collapse", "<p>a</p><p></p><div></div><p>b</p>", "a\n\nb"},
		{"cdata", "<![CDATA[x < y]]>", "x < y"},
		{"processing instruction", `<?xml version="1.0"?>doc`, "doc"},
		{"textarea shown", "<textarea><b>raw</b></textarea>", "<b>raw</b>"},
		{"crlf in pre", "<pre>a\r\nb</pre>", "a\nb"},
		{"nbsp collapses", "a&nbsp;&nbsp; b", "a b"},
		{"unterminated tag", "text <a href='x", "text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := htmlToText(tt.html, base); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestWebFetchContentTypes(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"a": [1, 2], "b": "<p>"}`)
	})
	mux.HandleFunc("/problem", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		fmt.Fprint(w, `{"title": "x"}`)
	})
	mux.HandleFunc("/text", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "line <b>1</b>\n  line 2\n")
	})
	mux.HandleFunc("/untyped", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil // stops net/http sniffing for us
		fmt.Fprint(w, "just text")
	})
	mux.HandleFunc("/untyped-binary", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil
		w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00"))
	})
	mux.HandleFunc("/png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\n"))
	})
	mux.HandleFunc("/latin1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=ISO-8859-1")
		w.Write([]byte("caf\xe9"))
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such page", http.StatusNotFound)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	tl := fetchTool(t, srv, Config{})

	tests := []struct {
		path, status, ctype, text, output string
		httpStatus                        int
	}{
		{"/json", event.ToolOK, "application/json", `{"a": [1, 2], "b": "<p>"}`, "", 200},
		{"/problem", event.ToolOK, "application/problem+json", `{"title": "x"}`, "", 200},
		{"/text", event.ToolOK, "text/plain", "line <b>1</b>\n  line 2\n", "", 200},
		{"/untyped", event.ToolOK, "text/plain", "just text", "", 200},
		{"/latin1", event.ToolOK, "text/plain", "café", "", 200},
		{"/png", event.ToolError, "image/png", "", "content type image/png is not text", 200},
		{"/untyped-binary", event.ToolError, "image/png", "", "declares no content type and looks like image/png", 200},
		{"/missing", event.ToolError, "text/plain", "no such page\n", "HTTP 404", 404},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			res := fetch(t, tl, srv.URL+tt.path, "")
			d := res.Data.(WebFetchData)
			if res.Status != tt.status || d.ContentType != tt.ctype || d.Text != tt.text || d.Status != tt.httpStatus ||
				d.OK != (tt.status == event.ToolOK) {
				t.Errorf("status %s data %+v", res.Status, d)
			}
			if !strings.Contains(res.Output, tt.output) {
				t.Errorf("output lacks %q:\n%s", tt.output, res.Output)
			}
		})
	}
}

func TestWebFetchSizeCap(t *testing.T) {
	body := strings.Repeat("0123456789", 100_000) // 1 MB
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, body)
	}))
	defer srv.Close()
	tl := fetchTool(t, srv, Config{})

	tests := []struct {
		extra     string
		bytes     int
		truncated bool
		note      string
	}{
		{"", DefaultFetchBytes, true, "max_bytes can be raised to 2097152"},
		{`, "max_bytes": 1000`, 1000, true, "only the first 1000 bytes"},
		{`, "max_bytes": 1000000`, 1000000, false, ""},
		{`, "max_bytes": 99999999`, 1000000, false, ""}, // capped at MaxFetchBytes, above the body
	}
	for _, tt := range tests {
		t.Run(tt.extra, func(t *testing.T) {
			res := fetch(t, tl, srv.URL, tt.extra)
			d := res.Data.(WebFetchData)
			if res.Status != event.ToolOK || d.Bytes != tt.bytes || len(d.Text) != tt.bytes || d.Truncated != tt.truncated {
				t.Fatalf("status %s bytes %d truncated %v", res.Status, d.Bytes, d.Truncated)
			}
			if tt.note != "" && !strings.Contains(res.Output, tt.note) {
				t.Errorf("output lacks %q: …%s", tt.note, res.Output[max(0, len(res.Output)-200):])
			}
		})
	}

	// A cut inside a character drops the partial character.
	srv2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, "abcé")
	}))
	defer srv2.Close()
	res := fetch(t, fetchTool(t, srv2, Config{}), srv2.URL, `, "max_bytes": 4`)
	if d := res.Data.(WebFetchData); d.Text != "abc" || !d.Truncated || d.Bytes != 4 {
		t.Errorf("cut rune: %+v", d)
	}
}

func TestWebFetchTimeout(t *testing.T) {
	stall := make(chan struct{})
	defer close(stall)
	mux := http.NewServeMux()
	mux.HandleFunc("/headers", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stall:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/body", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "partial")
		w.(http.Flusher).Flush()
		select {
		case <-stall:
		case <-r.Context().Done():
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	for _, injected := range []bool{true, false} {
		for _, path := range []string{"/headers", "/body"} {
			t.Run(fmt.Sprintf("%s injected=%v", path, injected), func(t *testing.T) {
				cfg := Config{FetchTimeout: 300 * time.Millisecond}
				var tl Tool
				if injected {
					tl = fetchTool(t, srv, cfg)
				} else {
					tl = NewWebFetch(cfg)
				}
				start := time.Now()
				res := fetch(t, tl, srv.URL+path, "")
				if el := time.Since(start); el > 2*time.Second {
					t.Errorf("took %s", el)
				}
				want := "fetch failed: " + strings.TrimPrefix(srv.URL, "http://") + " did not answer within 0.3s"
				if res.Status != event.ToolTimeout || res.Output != want {
					t.Errorf("status %s output %q", res.Status, res.Output)
				}
			})
		}
	}
}

func TestWebFetchCancel(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	res := callEnv(t, ctx, fetchTool(t, srv, Config{}), Env{}, `{"url": "`+srv.URL+`"}`)
	if res.Status != event.ToolCancelled || time.Since(start) > 2*time.Second {
		t.Errorf("status %s after %s: %s", res.Status, time.Since(start), res.Output)
	}
}

func TestWebFetchRedirects(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/r/"))
		switch {
		case r.URL.Path == "/ftp":
			http.Redirect(w, r, "ftp://example.com/file", http.StatusFound)
		case n > 0:
			http.Redirect(w, r, "/r/"+strconv.Itoa(n-1), http.StatusFound)
		default:
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, "arrived")
		}
	}))
	defer srv.Close()
	tl := fetchTool(t, srv, Config{})

	res := fetch(t, tl, srv.URL+"/r/5", "")
	if d := res.Data.(WebFetchData); res.Status != event.ToolOK || d.Text != "arrived" || d.FinalURL != srv.URL+"/r/0" || d.URL != srv.URL+"/r/5" {
		t.Errorf("5 redirects: status %s data %+v", res.Status, d)
	}
	hits.Store(0)
	res = fetch(t, tl, srv.URL+"/r/6", "")
	if res.Status != event.ToolError || res.Output != "fetch failed: stopped after 5 redirects" || hits.Load() != 6 {
		t.Errorf("6 redirects: status %s output %q after %d requests", res.Status, res.Output, hits.Load())
	}
	res = fetch(t, tl, srv.URL+"/ftp", "")
	if res.Status != event.ToolError || !strings.Contains(res.Output, `redirected to "ftp://example.com/file", which is not http or https`) {
		t.Errorf("redirect to ftp: %s %q", res.Status, res.Output)
	}
	// The injected client is left as it was.
	if srv.Client().CheckRedirect != nil {
		t.Error("the configured client was changed")
	}
}

func TestWebFetchRefusedAndUnreachable(t *testing.T) {
	tl := NewWebFetch(Config{FetchTimeout: 5 * time.Second})
	tests := []struct{ name, args, status, output string }{
		{"file scheme", `{"url": "file:///etc/passwd"}`, event.ToolError, `invalid arguments: only http and https URLs can be fetched, not "file:///etc/passwd"`},
		{"ftp scheme", `{"url": "ftp://example.com/x"}`, event.ToolError, "invalid arguments: only http and https URLs can be fetched"},
		{"no scheme", `{"url": "example.com"}`, event.ToolError, `invalid arguments: url "example.com" has no scheme; did you mean "https://example.com"?`},
		{"no host", `{"url": "http:///path"}`, event.ToolError, `invalid arguments: url "http:///path" has no host`},
		{"bad url", `{"url": "http://a b"}`, event.ToolError, "invalid arguments: url: invalid character"},
		{"empty", `{"url": " "}`, event.ToolError, "invalid arguments: url is required"},
		{"negative max", `{"url": "http://x", "max_bytes": -1}`, event.ToolError, "invalid arguments: max_bytes must be at least 1"},
		{"unknown field", `{"url": "http://x", "method": "POST"}`, event.ToolError, `invalid arguments: unknown field "method"`},
		{"unreachable", `{"url": "http://127.0.0.1:1/"}`, event.ToolError, "fetch failed: cannot reach 127.0.0.1:1 (no network?): dial tcp 127.0.0.1:1: connect: connection refused"},
		{"unresolvable", `{"url": "http://no-such-host.invalid/"}`, event.ToolError, "fetch failed: cannot reach no-such-host.invalid (no network?): "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			res := callEnv(t, context.Background(), tl, Env{}, tt.args)
			if res.Status != tt.status || !strings.HasPrefix(res.Output, tt.output) {
				t.Errorf("status %s output %q, want %q", res.Status, res.Output, tt.output)
			}
			if time.Since(start) > 6*time.Second {
				t.Errorf("took %s", time.Since(start))
			}
		})
	}
}

func TestWebFetchLabelAndIntent(t *testing.T) {
	tl := NewWebFetch(Config{})
	args := json.RawMessage(`{"url": " https://example.com/a?b=1 "}`)
	if l := tl.Label(args); l != "fetch https://example.com/a?b=1" {
		t.Errorf("label %q", l)
	}
	in := tl.Intent(args)
	if in.Effect != EffectNetwork || in.URL != "https://example.com/a?b=1" || in.Action != "fetch https://example.com/a?b=1" || in.Invalid {
		t.Errorf("intent %+v", in)
	}
	for _, bad := range []string{`{"url": "file:///x"}`, `{}`, `nope`} {
		if in := tl.Intent(json.RawMessage(bad)); !in.Invalid || in.Effect != EffectNetwork {
			t.Errorf("intent of %s: %+v", bad, in)
		}
		if l := tl.Label(json.RawMessage(bad)); l != "fetch (invalid arguments)" {
			t.Errorf("label of %s: %q", bad, l)
		}
	}
	if !json.Valid(tl.Spec().Parameters) {
		t.Error("schema is not JSON")
	}
}
