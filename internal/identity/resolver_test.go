package identity

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/auth"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// TestPrincipals walks the resolution order of the contract: server token,
// personal token, session cookie, nobody; and that a wrong credential is
// 401 even where nobody would be local.
func TestPrincipals(t *testing.T) {
	ctx := context.Background()
	st := testStore(t)
	clk := newClock()
	open := resolver(st, Config{Loopback: true, Now: clk.now})
	// No accounts yet: an open loopback server.
	var s seen
	checkStatus(t, serve(open, okHandler(&s), request{}.build()), 200, "")
	if s.res.Principal.Kind != KindLocal || s.res.Principal.Role != auth.RoleAdmin {
		t.Fatalf("no credential on an open server: %+v", s.res)
	}

	addUser(t, st, "usr_ann", "ann", auth.RoleOperator, false)
	addUser(t, st, "usr_off", "off", auth.RoleAdmin, true)
	annRead := addToken(t, st, "tok_annr", "usr_ann", auth.ScopeRead)
	annAdmin := addToken(t, st, "tok_anna", "usr_ann", auth.ScopeAdmin)
	offTok := addToken(t, st, "tok_off", "usr_off", auth.ScopeAdmin)
	sess, err := open.StartSession(ctx, "usr_ann")
	if err != nil {
		t.Fatal(err)
	}
	offSess, err := open.StartSession(ctx, "usr_off")
	if err != nil {
		t.Fatal(err)
	}
	open.Forget()
	cookie := CookieName + "=" + sess.Cookie
	unknown, _ := auth.NewToken()

	tests := []struct {
		name    string
		req     request
		status  int
		code    string
		kind    Kind
		role    auth.Role // effective
		tokenID string
	}{
		{"nobody, now that an account exists", request{}, 401, CodeUnauthorized, "", "", ""},
		{"nobody on an exempt route", request{target: "/api/auth/me"}, 200, "", "", "", ""},
		{"read token", request{header: hdr("Authorization", "Bearer "+annRead)}, 200, "", KindToken, auth.RoleViewer, "tok_annr"},
		{"admin-scoped token of an operator", request{header: hdr("Authorization", "Bearer "+annAdmin)}, 200, "", KindToken, auth.RoleOperator, "tok_anna"},
		{"token on a stream query", request{target: "/api/events?access_token=" + annRead, header: hdr("Accept", "text/event-stream")}, 200, "", KindToken, auth.RoleViewer, "tok_annr"},
		{"unknown token", request{header: hdr("Authorization", "Bearer "+unknown.Plain)}, 401, CodeUnauthorized, "", "", ""},
		{"unknown token on an exempt route", request{target: "/api/auth/me", header: hdr("Authorization", "Bearer "+unknown.Plain)}, 200, "", "", "", ""},
		{"token of a disabled account", request{header: hdr("Authorization", "Bearer "+offTok)}, 401, CodeUnauthorized, "", "", ""},
		{"malformed authorization", request{header: hdr("Authorization", "Basic abc")}, 401, CodeUnauthorized, "", "", ""},
		{"session", request{header: hdr("Cookie", cookie)}, 200, "", KindUser, auth.RoleOperator, ""},
		{"session among other cookies", request{header: hdr("Cookie", "a=1; "+cookie+"; b=2")}, 200, "", KindUser, auth.RoleOperator, ""},
		{"session of a disabled account", request{header: hdr("Cookie", CookieName+"="+offSess.Cookie)}, 401, CodeUnauthorized, "", "", ""},
		{"unknown session", request{header: hdr("Cookie", CookieName+"=nope")}, 401, CodeUnauthorized, "", "", ""},
		{"bearer wins over the cookie", request{header: hdr("Cookie", cookie, "Authorization", "Bearer "+annRead)}, 200, "", KindToken, auth.RoleViewer, "tok_annr"},
		{"session write without CSRF", request{method: "POST", header: hdr("Cookie", cookie)}, 403, CodeCSRFFailed, "", "", ""},
		{"session write with a wrong CSRF", request{method: "POST", header: hdr("Cookie", cookie, CSRFHeader, sess.CSRF+"x")}, 403, CodeCSRFFailed, "", "", ""},
		{"session write with CSRF", request{method: "POST", header: hdr("Cookie", cookie, CSRFHeader, sess.CSRF)}, 200, "", KindUser, auth.RoleOperator, ""},
		{"logout needs CSRF too", request{method: "POST", target: "/api/auth/logout", header: hdr("Cookie", cookie)}, 403, CodeCSRFFailed, "", "", ""},
		{"login ignores the old cookie", request{method: "POST", target: "/api/auth/login", header: hdr("Cookie", cookie)}, 200, "", KindLocal, "", ""},
		{"token write needs no CSRF", request{method: "POST", header: hdr("Authorization", "Bearer "+annAdmin)}, 200, "", KindToken, auth.RoleOperator, "tok_anna"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s seen
			rec := serve(open, okHandler(&s), tt.req.build())
			checkStatus(t, rec, tt.status, tt.code)
			if tt.status != 200 {
				if s.req != nil {
					t.Fatal("handler ran")
				}
				return
			}
			p := s.res.Principal
			if tt.kind == "" {
				if s.res.Outcome == Resolved && tt.kind == "" && p.Kind != "" {
					t.Fatalf("principal %+v, want none", p)
				}
				return
			}
			if tt.kind == KindLocal {
				// login: the cookie was not looked at; nobody with accounts is Missing.
				if s.res.Outcome != Missing {
					t.Fatalf("login request resolved to %+v", s.res)
				}
				return
			}
			if s.res.Outcome != Resolved || p.Kind != tt.kind || p.EffectiveRole() != tt.role || p.TokenID != tt.tokenID || p.UserID != "usr_ann" || p.Name != "ann" {
				t.Fatalf("principal %+v (effective %s), want %s %s %s", p, p.EffectiveRole(), tt.kind, tt.role, tt.tokenID)
			}
			if h := s.req.Header; h.Get("Authorization") != "" || h.Get(CSRFHeader) != "" || strings.Contains(h.Get("Cookie"), sess.Cookie) {
				t.Fatalf("credentials reached the handler: %v", h)
			}
			if strings.Contains(s.req.URL.String(), annRead) {
				t.Fatalf("query token reached the handler: %s", s.req.URL)
			}
		})
	}

	t.Run("other cookies survive the scrub", func(t *testing.T) {
		var s seen
		serve(open, okHandler(&s), request{header: hdr("Cookie", "a=1; "+cookie+"; b=2")}.build())
		if got := s.req.Header.Get("Cookie"); got != "a=1; b=2" {
			t.Fatalf("Cookie = %q", got)
		}
	})
	t.Run("bad cookie is cleared", func(t *testing.T) {
		rec := serve(open, okHandler(nil), request{header: hdr("Cookie", CookieName+"=nope")}.build())
		if sc := rec.Header().Get("Set-Cookie"); !strings.Contains(sc, CookieName+"=;") || !strings.Contains(sc, "Max-Age=0") {
			t.Fatalf("Set-Cookie = %q", sc)
		}
	})
}

// TestSessionLifetime: idle expiry slides with use, the absolute one does
// not; an expired session is a wrong credential.
func TestSessionLifetime(t *testing.T) {
	ctx := context.Background()
	st := testStore(t)
	clk := newClock()
	rs := resolver(st, Config{Loopback: true, Now: clk.now})
	addUser(t, st, "usr_ann", "ann", auth.RoleViewer, false)
	get := func(cookie string) int {
		return serve(rs, okHandler(nil), request{header: hdr("Cookie", CookieName+"="+cookie)}.build()).Code
	}
	idle, err := rs.StartSession(ctx, "usr_ann")
	if err != nil {
		t.Fatal(err)
	}
	busy, _ := rs.StartSession(ctx, "usr_ann")
	steps := []struct {
		advance    time.Duration
		idle, busy int
	}{
		{6 * 24 * time.Hour, 0, 200}, // busy used on day 6
		{2 * 24 * time.Hour, 401, 200},
		{6 * 24 * time.Hour, 401, 200},
		{6 * 24 * time.Hour, 401, 200},
		{6 * 24 * time.Hour, 401, 200}, // day 26
		{5 * 24 * time.Hour, 401, 401}, // day 31: past the absolute lifetime
	}
	for i, s := range steps {
		clk.advance(s.advance)
		if s.idle != 0 {
			if got := get(idle.Cookie); got != s.idle {
				t.Fatalf("step %d: idle session answered %d, want %d", i, got, s.idle)
			}
		}
		if got := get(busy.Cookie); got != s.busy {
			t.Fatalf("step %d: busy session answered %d, want %d", i, got, s.busy)
		}
	}
	// Signing in again sweeps the expired rows.
	if _, err := rs.StartSession(ctx, "usr_ann"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.GetWebSession(ctx, hashHex(idle.Cookie)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("expired session kept: %v", err)
	}
}

// TestRecheck: what ends a stream.
func TestRecheck(t *testing.T) {
	ctx := context.Background()
	st := testStore(t)
	rs := resolver(st, Config{Loopback: true})
	addUser(t, st, "usr_ann", "ann", auth.RoleOperator, false)
	tok := addToken(t, st, "tok_1", "usr_ann", auth.ScopeOperate)
	sess, _ := rs.StartSession(ctx, "usr_ann")
	var byTok, bySess seen
	serve(rs, okHandler(&byTok), request{header: hdr("Authorization", "Bearer "+tok)}.build())
	serve(rs, okHandler(&bySess), request{header: hdr("Cookie", CookieName+"="+sess.Cookie)}.build())
	for _, p := range []Principal{byTok.res.Principal, bySess.res.Principal, serverPrincipal} {
		if _, err := rs.Recheck(ctx, p); err != nil {
			t.Fatalf("Recheck(%s) of a live credential: %v", p.Kind, err)
		}
	}
	if _, err := rs.Recheck(ctx, localPrincipal); !errors.Is(err, ErrEnded) {
		t.Fatalf("local principal once accounts exist: %v", err)
	}
	// Revoke the token; end the session.
	_ = st.Write(ctx, func(tx store.Tx) error { return tx.RevokeToken(ctx, "tok_1", time.Now()) })
	if err := rs.EndSession(ctx, bySess.res.Principal.SessionID); err != nil {
		t.Fatal(err)
	}
	for _, p := range []Principal{byTok.res.Principal, bySess.res.Principal} {
		if _, err := rs.Recheck(ctx, p); !errors.Is(err, ErrEnded) {
			t.Fatalf("Recheck(%s) after revoke/sign-out: %v", p.Kind, err)
		}
	}
	// Disabling the account ends a fresh session too.
	sess2, _ := rs.StartSession(ctx, "usr_ann")
	var s2 seen
	serve(rs, okHandler(&s2), request{header: hdr("Cookie", CookieName+"="+sess2.Cookie)}.build())
	u, _ := st.GetUser(ctx, "usr_ann")
	u.Disabled = true
	_ = st.Write(ctx, func(tx store.Tx) error { return tx.UpdateUser(ctx, u) })
	if _, err := rs.Recheck(ctx, s2.res.Principal); !errors.Is(err, ErrEnded) {
		t.Fatalf("Recheck after disabling: %v", err)
	}
}

// TestAccountsCache: "sign-in required" is cached for AccountsTTL, and
// Forget drops it.
func TestAccountsCache(t *testing.T) {
	ctx := context.Background()
	st := testStore(t)
	clk := newClock()
	rs := resolver(st, Config{Loopback: true, Now: clk.now})
	code := func() int { return serve(rs, okHandler(nil), request{}.build()).Code }
	if code() != 200 {
		t.Fatal("open server refused")
	}
	addUser(t, st, "usr_ann", "ann", auth.RoleAdmin, false)
	if code() != 200 {
		t.Fatal("cache not used")
	}
	clk.advance(AccountsTTL)
	if code() != http.StatusUnauthorized {
		t.Fatal("new account not noticed after the TTL")
	}
	if ok, _ := rs.Accounts(ctx); !ok {
		t.Fatal("Accounts = false with an enabled account")
	}
	if req, _ := resolver(st, Config{}).SignInRequired(ctx); !req {
		t.Fatal("sign-in not required off loopback")
	}
}
