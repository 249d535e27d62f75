package api_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/auth"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestNoSecretsLeak walks sign-in, tokens and accounts, and checks that no
// password, token secret or hash, session cookie or CSRF token appears in
// any answer but the one that creates it, in the log (debug level), or in
// any event of the journal.
func TestNoSecretsLeak(t *testing.T) {
	var logs syncBuffer
	e := newEnv(t, withLog(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	var answers strings.Builder
	keep := func(r resp) resp {
		fmt.Fprintf(&answers, "%d %v %s\n", r.code, r.hdr, r.body)
		return r
	}
	rootPW, vicPW, vicPW2 := "root-secret-pw-1", "vic-secret-pw-2", "vic-secret-pw-3"
	keep(e.req("POST", "/api/users", `{"name":"root","role":"admin","password":"`+rootPW+`"}`)).want(t, http.StatusCreated, "")
	login := func(name, pw string) browser {
		r := e.req("POST", "/api/auth/login", `{"name":"`+name+`","password":"`+pw+`"}`) // creates: not kept
		r.want(t, http.StatusOK, "")
		var out struct {
			CSRF string `json:"csrf_token"`
		}
		r.decode(t, &out)
		return browser{e: e, cookie: sessionCookie(t, r), csrf: out.CSRF}
	}
	adm := login("root", rootPW)
	keep(adm.req("POST", "/api/users", `{"name":"vic","role":"operator","password":"`+vicPW+`"}`)).want(t, http.StatusCreated, "")
	keep(e.req("POST", "/api/auth/login", `{"name":"vic","password":"`+vicPW+`x"}`)).want(t, http.StatusUnauthorized, "bad_credentials")
	keep(e.req("POST", "/api/auth/login", `{"name":"`+vicPW+`","password":"`+vicPW+`"}`)).want(t, http.StatusUnauthorized, "bad_credentials")
	vic := login("vic", vicPW)
	r := vic.req("POST", "/api/tokens", `{"name":"cli","scope":"operate"}`) // creates: not kept
	r.want(t, http.StatusCreated, "")
	var created struct{ Secret string }
	r.decode(t, &created)
	keep(vic.req("GET", "/api/tokens", "")).want(t, http.StatusOK, "")
	keep(adm.req("GET", "/api/tokens?all=1", "")).want(t, http.StatusOK, "")
	keep(adm.req("GET", "/api/users", "")).want(t, http.StatusOK, "")
	keep(e.req("POST", "/api/sessions", `{}`, bearer(created.Secret)...)).want(t, http.StatusCreated, "")
	keep(e.req("GET", "/api/sessions", "", bearer(created.Secret)...)).want(t, http.StatusOK, "")
	keep(vic.bare("POST", "/api/sessions", `{}`)).want(t, http.StatusForbidden, "csrf_failed")
	keep(vic.req("POST", "/api/auth/password", `{"current":"`+vicPW+`","new":"`+vicPW2+`"}`))
	keep(adm.req("PATCH", "/api/users/"+e.accountOf(t, "vic").ID, `{"password":"`+vicPW+`"}`)).want(t, http.StatusOK, "")
	keep(e.req("GET", "/api/sessions", "", "Cookie", "caduceus_session="+vic.cookie)).want(t, http.StatusUnauthorized, "unauthorized")
	keep(adm.req("POST", "/api/auth/logout", ""))

	secrets := map[string]string{
		"root password": rootPW, "vic password": vicPW, "vic's new password": vicPW2,
		"token secret": created.Secret, "token hash": auth.HashToken(created.Secret),
		"admin cookie": adm.cookie, "admin CSRF": adm.csrf, "vic cookie": vic.cookie, "vic CSRF": vic.csrf,
	}
	evs, err := e.st.Events(e.ctx, store.EventQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var journal strings.Builder
	for _, ev := range evs {
		journal.Write(ev.Payload)
	}
	if !strings.Contains(logs.String(), "signed in") || answers.Len() == 0 || journal.Len() == 0 {
		t.Fatal("nothing was captured: the scan would prove nothing")
	}
	for where, text := range map[string]string{"answers": answers.String(), "log": logs.String(), "journal": journal.String()} {
		for what, secret := range secrets {
			if strings.Contains(text, secret) {
				t.Errorf("the %s show the %s", where, what)
			}
		}
	}
}
