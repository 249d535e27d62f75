package httpguard

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const testToken = "s3cret-Token_value"

func mustGuard(t *testing.T, cfg Config) *Guard {
	t.Helper()
	g, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	return g
}

// request describes one test request; Host defaults to localhost:7420.
type request struct {
	method string
	target string
	host   string
	header http.Header
	body   io.Reader
}

func (q request) build() *http.Request {
	method := q.method
	if method == "" {
		method = http.MethodGet
	}
	target := q.target
	if target == "" {
		target = "/api/runs"
	}
	r := httptest.NewRequest(method, "http://localhost:7420"+target, q.body)
	if q.host != "" {
		r.Host = q.host
	}
	for k, vs := range q.header {
		r.Header[http.CanonicalHeaderKey(k)] = vs
	}
	return r
}

// okHandler drains the body, answers 413 through the shared writer when the
// guard's limit trips, and 200 otherwise.
func okHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			if IsBodyTooLarge(err) {
				WriteError(w, http.StatusRequestEntityTooLarge, CodeBodyTooLarge, "too large", nil)
				return
			}
			WriteError(w, http.StatusBadRequest, "bad_body", err.Error(), nil)
			return
		}
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "ok")
	})
}

func serve(g *Guard, h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	g.Wrap(h).ServeHTTP(rec, r)
	return rec
}

// checkStatus asserts the status and, for errors, the error code and shape.
func checkStatus(t *testing.T, rec *httptest.ResponseRecorder, status int, code string) {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status = %d, want %d; body %s", rec.Code, status, rec.Body)
	}
	if code == "" {
		return
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	var env errorEnvelope
	if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil {
		t.Fatalf("error body %q: %v", rec.Body, err)
	}
	if env.Error.Code != code {
		t.Errorf("code = %q, want %q", env.Error.Code, code)
	}
	if env.Error.Message == "" {
		t.Error("empty error message")
	}
	if strings.Contains(rec.Body.String(), testToken) {
		t.Error("error body echoes the token")
	}
}

func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}
