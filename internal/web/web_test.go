package web

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
)

func testHandler(t *testing.T) *http.ServeMux {
	t.Helper()
	big := strings.Repeat("console.log('caduceus');\n", 200)
	h, err := newFromFS(fstest.MapFS{
		"dist/index.html":        {Data: []byte("<!doctype html><title>x</title>")},
		"dist/app.js":            {Data: []byte(big)},
		"dist/chunks/math-AB.js": {Data: []byte("export{}")},
		"dist/.gitkeep":          {Data: nil},
		"dist/assets/f-1.woff2":  {Data: []byte{0x77, 0x4f, 0x46, 0x32}},
	}, "dist")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux)
	return mux
}

func TestRoutes(t *testing.T) {
	mux := testHandler(t)
	cases := []struct {
		name, path string
		status     int
		ctype      string
	}{
		{"root page", "/", 200, "text/html; charset=utf-8"},
		{"session page", "/s/ses_01m7xycjnkfry445nd4sfrf5m3", 200, "text/html; charset=utf-8"},
		{"bundle", "/assets/app.js", 200, "text/javascript; charset=utf-8"},
		{"lazy chunk", "/assets/chunks/math-AB.js", 200, "text/javascript; charset=utf-8"},
		{"font", "/assets/assets/f-1.woff2", 200, "font/woff2"},
		{"index is not an asset", "/assets/index.html", 404, ""},
		{"hidden files are not served", "/assets/.gitkeep", 404, ""},
		{"unknown asset", "/assets/nope.js", 404, ""},
		{"traversal is cleaned away by the mux", "/assets/../web.go", 307, ""},
		{"unknown page", "/settings", 404, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, httptest.NewRequest("GET", c.path, nil))
			if rec.Code != c.status {
				t.Fatalf("status %d, want %d", rec.Code, c.status)
			}
			if c.status != http.StatusOK {
				return
			}
			if got := rec.Header().Get("Content-Type"); got != c.ctype {
				t.Errorf("Content-Type %q, want %q", got, c.ctype)
			}
			if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
				t.Errorf("CSP %q lacks script-src 'self'", csp)
			}
			if rec.Header().Get("ETag") == "" {
				t.Error("no ETag")
			}
		})
	}
}

func TestRevalidationAndGzip(t *testing.T) {
	mux := testHandler(t)
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/assets/app.js", nil))
	plain, etag := rec.Body.String(), rec.Header().Get("ETag")

	req := httptest.NewRequest("GET", "/assets/app.js", nil)
	req.Header.Set("If-None-Match", etag)
	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	if rec.Code != http.StatusNotModified {
		t.Fatalf("revalidation: status %d, want 304", rec.Code)
	}

	req = httptest.NewRequest("GET", "/assets/app.js", nil)
	req.Header.Set("Accept-Encoding", "br, gzip")
	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	if rec.Header().Get("Content-Encoding") != "gzip" || rec.Header().Get("ETag") == etag {
		t.Fatalf("gzip: encoding %q, etag %q (plain %q)", rec.Header().Get("Content-Encoding"), rec.Header().Get("ETag"), etag)
	}
	zr, err := gzip.NewReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(zr)
	if string(got) != plain || rec.Body.Len() > len(plain)/4 {
		t.Fatalf("gzip body differs or did not shrink (%d of %d bytes)", rec.Body.Len(), len(plain))
	}

	req = httptest.NewRequest("GET", "/assets/app.js", nil)
	req.Header.Set("Accept-Encoding", "gzip;q=0")
	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	if rec.Header().Get("Content-Encoding") != "" {
		t.Fatal("gzip sent although refused with q=0")
	}
}

func TestEmbeddedBundle(t *testing.T) {
	h, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(h.index.body), "/assets/app.js") {
		t.Fatal("embedded index.html does not load /assets/app.js")
	}
}

func TestMissingIndex(t *testing.T) {
	if _, err := newFromFS(fstest.MapFS{"dist/app.js": {Data: []byte("x")}}, "dist"); err == nil {
		t.Fatal("a bundle without index.html was accepted")
	}
}
