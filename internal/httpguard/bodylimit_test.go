package httpguard

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BodyLimit raises the cap of the requests it names and of no other; a
// body of unknown length is cut at the same cap as a declared one.
func TestBodyLimitPerRoute(t *testing.T) {
	g := mustGuard(t, Config{Addr: "127.0.0.1:7420", MaxBodyBytes: 10, BodyLimit: func(r *http.Request) int64 {
		if r.Method == http.MethodPost && r.URL.Path == "/up" {
			return 100
		}
		return 0
	}})
	read := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			WriteError(w, http.StatusRequestEntityTooLarge, CodeBodyTooLarge, "cut", nil)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	for _, tc := range []struct {
		name, method, path string
		size               int
		chunked            bool
		status             int
	}{
		{"the named route, within its cap", "POST", "/up", 100, false, 200},
		{"the named route, over its cap", "POST", "/up", 101, false, 413},
		{"the named route, chunked over its cap", "POST", "/up", 101, true, 413},
		{"the named route, chunked within", "POST", "/up", 60, true, 200},
		{"another route keeps the default", "POST", "/other", 11, false, 413},
		{"another route, chunked", "POST", "/other", 11, true, 413},
		{"another method on the path", "PUT", "/up", 11, false, 413},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader = strings.NewReader(strings.Repeat("x", tc.size))
			if tc.chunked {
				body = io.MultiReader(body) // unknown length
			}
			r := httptest.NewRequest(tc.method, "http://127.0.0.1:7420"+tc.path, body)
			if tc.chunked {
				r.ContentLength = -1
			}
			if rec := serve(g, read, r); rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
		})
	}
}
