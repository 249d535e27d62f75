package identity

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/auth"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

const testToken = "s3cret-Token_value"

// testStore is a fresh SQLite store.
func testStore(t testing.TB) store.Store {
	t.Helper()
	st, _ := storetest.SQLite(t)
	return st
}

// clock is a settable test clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time               { return c.t }
func (c *clock) advance(d time.Duration)      { c.t = c.t.Add(d) }
func newClock() *clock                        { return &clock{t: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)} }
func resolver(st Store, cfg Config) *Resolver { return New(st, cfg) }

// addUser stores an account (the hash is never checked here).
func addUser(t testing.TB, st store.Store, id, name string, role auth.Role, disabled bool) store.User {
	t.Helper()
	now := time.Now()
	u := store.User{ID: id, Name: name, Role: string(role), PasswordHash: "$argon2id$unused", Disabled: disabled, CreatedAt: now, UpdatedAt: now}
	if err := st.Write(context.Background(), func(tx store.Tx) error { return tx.InsertUser(context.Background(), u) }); err != nil {
		t.Fatal(err)
	}
	return u
}

// addToken stores a token of userID and returns its secret.
func addToken(t testing.TB, st store.Store, id, userID string, scope auth.Scope) string {
	t.Helper()
	k, err := auth.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	row := store.APIToken{ID: id, UserID: userID, Name: id, Scope: string(scope), Hash: k.Hash, Prefix: k.Prefix, CreatedAt: time.Now()}
	if err := st.Write(context.Background(), func(tx store.Tx) error { return tx.InsertToken(context.Background(), row) }); err != nil {
		t.Fatal(err)
	}
	return k.Plain
}

// request describes one test request.
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

// seen records what the handler behind Wrap got.
type seen struct {
	req *http.Request
	res Result
}

func okHandler(s *seen) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s != nil {
			s.req = r
			s.res, _ = From(r.Context())
		}
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "ok")
	})
}

func serve(rs *Resolver, h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	rs.Wrap(h).ServeHTTP(rec, r)
	return rec
}

// checkStatus asserts the status and, for errors, the error code.
func checkStatus(t *testing.T, rec *httptest.ResponseRecorder, status int, code string) {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status = %d, want %d; body %s", rec.Code, status, rec.Body)
	}
	if code == "" {
		return
	}
	var env struct {
		Error struct{ Code, Message string }
	}
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
