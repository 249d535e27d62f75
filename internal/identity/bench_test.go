package identity

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/auth"
)

// BenchmarkResolve is the cost sign-in adds to a request, per kind of
// credential, on a real SQLite store: nobody on an open server (the
// account check is cached) is the baseline; the server token is a hash
// comparison; a personal token and a session each read the store twice
// (the credential and its account). Uses are written at most once a
// minute, so the loop measures reads. docs/BENCHMARKS.md records the
// numbers.
func BenchmarkResolve(b *testing.B) {
	ctx := context.Background()
	openSt, st := testStore(b), testStore(b)
	open := New(openSt, Config{Loopback: true})
	rs := New(st, Config{Token: testToken, Loopback: true})
	addUser(b, st, "usr_ann", "ann", auth.RoleOperator, false)
	tok := addToken(b, st, "tok_1", "usr_ann", auth.ScopeOperate)
	sess, err := rs.StartSession(ctx, "usr_ann")
	if err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		name string
		rs   *Resolver
		req  request
	}{
		{"local_open_server", open, request{}},
		{"server_token", rs, request{header: hdr("Authorization", "Bearer "+testToken)}},
		{"personal_token", rs, request{header: hdr("Authorization", "Bearer "+tok)}},
		{"session_cookie", rs, request{header: hdr("Cookie", CookieName+"="+sess.Cookie)}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			h := c.rs.Wrap(okHandler(nil))
			r := c.req.build()
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, r)
				if rec.Code != 200 {
					b.Fatalf("status %d", rec.Code)
				}
			}
		})
	}
}
