package api_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/account"
	"github.com/caduceus-dev/caduceus/internal/auth"
)

// person is an account made for a test, with its password.
type person struct {
	account.User
	password string
}

// addPerson adds an account named name with role.
func (e *env) addPerson(name string, role auth.Role) person {
	e.t.Helper()
	pw := "pw-of-" + name + "-long"
	u, err := e.accounts.Add(e.ctx, name, role, pw)
	if err != nil {
		e.t.Fatal(err)
	}
	e.ident.Forget()
	return person{User: u, password: pw}
}

// browser is a signed-in cookie session.
type browser struct {
	e      *env
	cookie string
	csrf   string
}

// login signs p in and returns the session.
func (e *env) login(p person) browser {
	e.t.Helper()
	r := e.req("POST", "/api/auth/login", fmt.Sprintf(`{"name":%q,"password":%q}`, p.Name, p.password))
	r.want(e.t, http.StatusOK, "")
	var out struct {
		CSRF string `json:"csrf_token"`
	}
	r.decode(e.t, &out)
	return browser{e: e, cookie: sessionCookie(e.t, r), csrf: out.CSRF}
}

// sessionCookie is the session cookie value a response sets.
func sessionCookie(t *testing.T, r resp) string {
	t.Helper()
	for _, c := range (&http.Response{Header: r.hdr}).Cookies() {
		if c.Name == "caduceus_session" {
			return c.Value
		}
	}
	t.Fatalf("no session cookie in %v", r.hdr)
	return ""
}

// req sends a request of the browser: cookie and CSRF header.
func (b browser) req(method, path, body string, header ...string) resp {
	b.e.t.Helper()
	h := append([]string{"Cookie", "caduceus_session=" + b.cookie, "X-CSRF-Token", b.csrf}, header...)
	return b.e.req(method, path, body, h...)
}

// bare sends a request with the cookie but without the CSRF header.
func (b browser) bare(method, path, body string) resp {
	b.e.t.Helper()
	return b.e.req(method, path, body, "Cookie", "caduceus_session="+b.cookie)
}

type meJSON struct {
	SignedIn       bool `json:"signed_in"`
	SignInRequired bool `json:"sign_in_required"`
	Accounts       bool `json:"accounts"`
	Principal      *struct {
		Kind   string `json:"kind"`
		UserID string `json:"user_id"`
		Name   string `json:"name"`
		Role   string `json:"role"`
		Scope  string `json:"scope"`
	} `json:"principal"`
	Permissions struct{ Read, Operate, Admin bool } `json:"permissions"`
	CSRF        string                              `json:"csrf_token"`
}

func (e *env) me(header ...string) meJSON {
	e.t.Helper()
	r := e.req("GET", "/api/auth/me", "", header...)
	r.want(e.t, http.StatusOK, "")
	var m meJSON
	r.decode(e.t, &m)
	return m
}

func TestMeOpenServer(t *testing.T) {
	e := newEnv(t)
	m := e.me()
	if m.SignedIn || m.SignInRequired || m.Accounts || m.Principal == nil || m.Principal.Kind != "local" ||
		m.Principal.Role != "admin" || !m.Permissions.Admin || m.CSRF != "" {
		t.Fatalf("me on an open server: %+v", m)
	}
	e.addPerson("ann", auth.RoleViewer)
	m = e.me()
	if m.SignedIn || !m.SignInRequired || !m.Accounts || m.Principal != nil || m.Permissions.Read {
		t.Fatalf("me without credentials once an account exists: %+v", m)
	}
	// A wrong credential on me is no principal, not an error.
	m = e.me("Authorization", "Bearer cad_nope")
	if m.Principal != nil {
		t.Fatalf("me with a wrong token: %+v", m)
	}
}

func TestServerTokenPrincipal(t *testing.T) {
	e := newEnv(t, withServerToken("srv-token-123"))
	e.req("GET", "/api/sessions", "").want(t, http.StatusUnauthorized, "unauthorized")
	m := e.me("Authorization", "Bearer srv-token-123")
	if !m.SignedIn || !m.SignInRequired || m.Accounts || m.Principal.Kind != "server_token" || m.Principal.Name != "server token" || !m.Permissions.Admin {
		t.Fatalf("me with the server token: %+v", m)
	}
	e.req("POST", "/api/sessions", "{}", "Authorization", "Bearer srv-token-123").want(t, http.StatusCreated, "")
}

func TestLogin(t *testing.T) {
	e := newEnv(t)
	ann := e.addPerson("ann", auth.RoleOperator)
	off := e.addPerson("off", auth.RoleAdmin)
	if _, err := e.accounts.SetDisabled(e.ctx, "off", true); err != nil {
		t.Fatal(err)
	}
	e.ident.Forget()

	e.runErrCases(t, []errCase{
		{name: "unknown name", method: "POST", path: "/api/auth/login", body: `{"name":"zed","password":"whatever-long"}`, status: 401, code: "bad_credentials"},
		{name: "wrong password", method: "POST", path: "/api/auth/login", body: `{"name":"ann","password":"wrong-password"}`, status: 401, code: "bad_credentials"},
		{name: "disabled account", method: "POST", path: "/api/auth/login", body: fmt.Sprintf(`{"name":"off","password":%q}`, off.password), status: 401, code: "bad_credentials"},
		{name: "no password", method: "POST", path: "/api/auth/login", body: `{"name":"ann"}`, status: 400, code: "invalid_input"},
		{name: "unknown field", method: "POST", path: "/api/auth/login", body: `{"name":"ann","password":"x","remember":true}`, status: 400, code: "invalid_input"},
		{name: "not JSON", method: "POST", path: "/api/auth/login", body: `name=ann`, status: 400, code: "invalid_input"},
	})
	// One message for the three refusals (on a fresh server: the limiter
	// already counts three failures here).
	e2 := newEnv(t)
	e2.addPerson("ann", auth.RoleOperator)
	e2.addPerson("off", auth.RoleAdmin)
	if _, err := e2.accounts.SetDisabled(e2.ctx, "off", true); err != nil {
		t.Fatal(err)
	}
	msgs := map[string]bool{}
	for _, body := range []string{`{"name":"zed","password":"whatever-long"}`, `{"name":"ann","password":"wrong-password"}`,
		fmt.Sprintf(`{"name":"off","password":%q}`, off.password)} {
		r := e2.req("POST", "/api/auth/login", body)
		var out struct{ Error struct{ Message string } }
		r.decode(t, &out)
		msgs[out.Error.Message] = true
	}
	if len(msgs) != 1 || !msgs["wrong name or password"] {
		t.Fatalf("refusal messages: %v", msgs)
	}

	r := e.req("POST", "/api/auth/login", fmt.Sprintf(`{"name":"ANN","password":%q}`, ann.password))
	r.want(t, http.StatusOK, "")
	sc := r.hdr.Get("Set-Cookie")
	for _, want := range []string{"caduceus_session=", "Path=/", "HttpOnly", "SameSite=Strict"} {
		if !strings.Contains(sc, want) {
			t.Errorf("Set-Cookie %q lacks %s", sc, want)
		}
	}
	if strings.Contains(sc, "Secure") {
		t.Errorf("Secure cookie over plain HTTP without --secure-cookies: %q", sc)
	}
	var out struct {
		Principal   struct{ Kind, Name, Role, UserID string } `json:"principal"`
		Permissions struct{ Read, Operate, Admin bool }       `json:"permissions"`
		CSRF        string                                    `json:"csrf_token"`
	}
	r.decode(t, &out)
	if out.Principal.Kind != "user" || out.Principal.Name != "ann" || out.Principal.Role != "operator" || !out.Permissions.Operate || out.Permissions.Admin || out.CSRF == "" {
		t.Fatalf("login answer: %s", r.body)
	}
	b := browser{e: e, cookie: sessionCookie(t, r), csrf: out.CSRF}
	m := e.me("Cookie", "caduceus_session="+b.cookie)
	if !m.SignedIn || m.Principal.Kind != "user" || m.Principal.UserID != ann.ID || m.CSRF != b.csrf {
		t.Fatalf("me with the cookie: %+v", m)
	}
}

func TestSecureCookieFlag(t *testing.T) {
	e := newEnv(t, withSecureCookies())
	ann := e.addPerson("ann", auth.RoleViewer)
	r := e.req("POST", "/api/auth/login", fmt.Sprintf(`{"name":"ann","password":%q}`, ann.password))
	if sc := r.hdr.Get("Set-Cookie"); !strings.Contains(sc, "Secure") {
		t.Fatalf("Set-Cookie %q without Secure", sc)
	}
}

func TestCSRF(t *testing.T) {
	e := newEnv(t)
	b := e.login(e.addPerson("ann", auth.RoleOperator))
	before := e.lastID()
	b.bare("POST", "/api/sessions", "{}").want(t, http.StatusForbidden, "csrf_failed")
	b.e.req("POST", "/api/sessions", "{}", "Cookie", "caduceus_session="+b.cookie, "X-CSRF-Token", b.csrf+"x").want(t, http.StatusForbidden, "csrf_failed")
	if e.lastID() != before {
		t.Fatal("a refused write changed the journal")
	}
	b.bare("GET", "/api/sessions", "").want(t, http.StatusOK, "")
	b.req("POST", "/api/sessions", "{}").want(t, http.StatusCreated, "")
}

func TestLoginRateLimit(t *testing.T) {
	e := newEnv(t)
	ann := e.addPerson("ann", auth.RoleViewer)
	var codes []int
	var last resp
	for range 10 {
		last = e.req("POST", "/api/auth/login", `{"name":"ann","password":"wrong-password"}`)
		codes = append(codes, last.code)
	}
	for i, c := range codes {
		want := http.StatusUnauthorized
		if i >= 5 {
			want = http.StatusTooManyRequests
		}
		if c != want {
			t.Fatalf("attempt %d: %d, want %d (all: %v)", i+1, c, want, codes)
		}
	}
	last.want(t, http.StatusTooManyRequests, "too_many_attempts")
	secs, err := strconv.Atoi(last.hdr.Get("Retry-After"))
	if err != nil || secs < 1 {
		t.Fatalf("Retry-After %q", last.hdr.Get("Retry-After"))
	}
	var out struct {
		Error struct {
			Message string
			Details struct {
				RetryAfter int `json:"retry_after_seconds"`
			}
		}
	}
	last.decode(t, &out)
	if out.Error.Details.RetryAfter != secs || !strings.Contains(out.Error.Message, "try again in "+strconv.Itoa(secs)+" seconds") {
		t.Fatalf("429 body: %s", last.body)
	}
	// The right password waits too: the limit is on attempts, not failures.
	e.req("POST", "/api/auth/login", fmt.Sprintf(`{"name":"ann","password":%q}`, ann.password)).want(t, http.StatusTooManyRequests, "too_many_attempts")
}

func TestLogout(t *testing.T) {
	e := newEnv(t)
	b := e.login(e.addPerson("ann", auth.RoleViewer))
	b.bare("POST", "/api/auth/logout", "").want(t, http.StatusForbidden, "csrf_failed")
	r := b.req("POST", "/api/auth/logout", "")
	if r.code != http.StatusNoContent || !strings.Contains(r.hdr.Get("Set-Cookie"), "Max-Age=0") {
		t.Fatalf("logout: %d %v", r.code, r.hdr)
	}
	b.req("GET", "/api/sessions", "").want(t, http.StatusUnauthorized, "unauthorized")
	// Signing out again, or with no session, is fine.
	if r := b.req("POST", "/api/auth/logout", ""); r.code != http.StatusNoContent {
		t.Fatalf("second logout: %d %s", r.code, r.body)
	}
}

func TestChangePassword(t *testing.T) {
	e := newEnv(t)
	ann := e.addPerson("ann", auth.RoleViewer)
	b1, b2 := e.login(ann), e.login(ann)
	b1.req("POST", "/api/auth/password", `{"current":"wrong-password","new":"brand-new-pw"}`).want(t, http.StatusUnauthorized, "bad_credentials")
	b1.req("POST", "/api/auth/password", fmt.Sprintf(`{"current":%q,"new":"short"}`, ann.password)).want(t, http.StatusBadRequest, "bad_password")
	b1.bare("POST", "/api/auth/password", fmt.Sprintf(`{"current":%q,"new":"brand-new-pw"}`, ann.password)).want(t, http.StatusForbidden, "csrf_failed")
	if r := b1.req("POST", "/api/auth/password", fmt.Sprintf(`{"current":%q,"new":"brand-new-pw"}`, ann.password)); r.code != http.StatusNoContent {
		t.Fatalf("change: %d %s", r.code, r.body)
	}
	b1.req("GET", "/api/sessions", "").want(t, http.StatusOK, "")
	b2.req("GET", "/api/sessions", "").want(t, http.StatusUnauthorized, "unauthorized")
	e.req("POST", "/api/auth/login", fmt.Sprintf(`{"name":"ann","password":%q}`, ann.password)).want(t, http.StatusUnauthorized, "bad_credentials")
	e.login(person{User: ann.User, password: "brand-new-pw"})
	// Not for the local principal or a token.
	e2 := newEnv(t)
	e2.req("POST", "/api/auth/password", `{"current":"x","new":"brand-new-pw"}`).want(t, http.StatusBadRequest, "no_user")
}

// accountOf finds the account named name.
func (e *env) accountOf(t *testing.T, name string) account.User {
	t.Helper()
	us, err := e.accounts.List(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range us {
		if u.Name == name {
			return u
		}
	}
	t.Fatalf("no account %q", name)
	return account.User{}
}
