package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/auth"
	"github.com/caduceus-dev/caduceus/internal/event"
)

// person is one client of the sign-in test: a browser session (cookie and
// CSRF token) or a bearer token, or nobody. Every answer it reads that
// creates no secret is kept for the leak scan.
type person struct {
	t            *testing.T
	base         string
	cookie, csrf string
	bearer       string
	answers      *strings.Builder
	noCSRF       bool
}

// do sends a JSON request and returns the status, headers and body;
// keep says whether the answer goes into the leak scan.
func (p person) do(method, path string, body any, keep bool) (int, http.Header, []byte) {
	p.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, p.base+path, rd)
	if err != nil {
		p.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if p.cookie != "" {
		req.Header.Set("Cookie", "caduceus_session="+p.cookie)
		if !p.noCSRF {
			req.Header.Set("X-CSRF-Token", p.csrf)
		}
	}
	if p.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+p.bearer)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if keep {
		fmt.Fprintf(p.answers, "%s %s %d %v %s\n", method, path, res.StatusCode, res.Header, b)
	}
	return res.StatusCode, res.Header, b
}

// want sends and fails unless the status (and error code, when given)
// match; it decodes a JSON answer into out when non-nil.
func (p person) want(method, path string, body any, status int, code string, out any) {
	p.t.Helper()
	got, _, b := p.do(method, path, body, true)
	var e e2etest.ErrorJSON
	_ = json.Unmarshal(b, &e)
	if got != status || e.Error.Code != code {
		p.t.Fatalf("%s %s: %d %q, want %d %q; body %s", method, path, got, e.Error.Code, status, code, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			p.t.Fatalf("%s %s: decode %s: %v", method, path, b, err)
		}
	}
}

// login signs name in; the answer (it creates the CSRF token) is not kept.
func (p person) login(name, password string) person {
	p.t.Helper()
	code, h, b := p.do("POST", "/api/auth/login", map[string]string{"name": name, "password": password}, false)
	if code != http.StatusOK {
		p.t.Fatalf("login %s: %d %s", name, code, b)
	}
	var out struct {
		CSRF string `json:"csrf_token"`
	}
	_ = json.Unmarshal(b, &out)
	q := p
	q.csrf = out.CSRF
	for _, c := range (&http.Response{Header: h}).Cookies() {
		if c.Name == "caduceus_session" {
			q.cookie = c.Value
		}
	}
	if q.cookie == "" || q.csrf == "" {
		p.t.Fatalf("login %s: no cookie or CSRF token in %v %s", name, h, b)
	}
	return q
}

func (p person) waitStatus(runID, status string) e2etest.RunJSON {
	p.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var ru e2etest.RunJSON
		p.want("GET", "/api/runs/"+runID, nil, http.StatusOK, "", &ru)
		if ru.Status == status {
			return ru
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("run %s is %s, waited for %s", runID, ru.Status, status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSignInAcceptance is issue 13's list for people and roles, on a real
// server over real HTTP: a viewer cannot start, cancel or approve (403
// forbidden), an operator can; a read-scoped token cannot write; a cookie
// write without the CSRF header is refused; ten wrong passwords slow the
// next attempt; and no password, token, hash, cookie or CSRF token appears
// in any answer but the one creating it, the log, the journal or any row
// of the database.
func TestSignInAcceptance(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(
		e2etest.Turn(e2etest.Call("run_command", `{"command":"echo hi"}`)),
		e2etest.Turn(e2etest.Text("done"))))
	var answers strings.Builder
	nobody := person{t: t, base: s.URL, answers: &answers}
	const rootPW, opsPW, vicPW = "root-Secret-pw-1", "ops-Secret-pw-2", "vic-Secret-pw-3"

	// The open loopback server's local admin makes the first account; from
	// then on, sign-in is required.
	nobody.want("POST", "/api/users", map[string]string{"name": "root", "role": "admin", "password": rootPW}, http.StatusCreated, "", nil)
	nobody.want("GET", "/api/sessions", nil, http.StatusUnauthorized, "unauthorized", nil)
	var me struct {
		SignInRequired bool `json:"sign_in_required"`
		Accounts       bool `json:"accounts"`
	}
	nobody.want("GET", "/api/auth/me", nil, http.StatusOK, "", &me)
	if !me.SignInRequired || !me.Accounts {
		t.Fatalf("me: %+v", me)
	}
	root := nobody.login("root", rootPW)
	root.want("POST", "/api/users", map[string]string{"name": "ops", "role": "operator", "password": opsPW}, http.StatusCreated, "", nil)
	root.want("POST", "/api/users", map[string]string{"name": "vic", "role": "viewer", "password": vicPW}, http.StatusCreated, "", nil)
	ops, vic := nobody.login("ops", opsPW), nobody.login("vic", vicPW)

	// The operator starts two runs; both wait for approval.
	var ses e2etest.SessionJSON
	ops.want("POST", "/api/sessions", map[string]any{}, http.StatusCreated, "", &ses)
	var ses2 e2etest.SessionJSON
	ops.want("POST", "/api/sessions", map[string]any{}, http.StatusCreated, "", &ses2)
	var ru, ru2 e2etest.RunJSON
	ops.want("POST", "/api/sessions/"+ses.ID+"/messages", map[string]string{"content": "run it"}, http.StatusAccepted, "", &ru)
	ops.want("POST", "/api/sessions/"+ses2.ID+"/messages", map[string]string{"content": "run it too"}, http.StatusAccepted, "", &ru2)
	waiting := ops.waitStatus(ru.ID, "awaiting_approval")
	ops.waitStatus(ru2.ID, "awaiting_approval")
	q := waiting.PendingRequestIDs[0]

	// A read-scoped token of the operator.
	code, _, b := ops.do("POST", "/api/tokens", map[string]string{"name": "ci", "scope": "read"}, false)
	var created struct{ Secret string }
	if err := json.Unmarshal(b, &created); code != http.StatusCreated || err != nil {
		t.Fatalf("token: %d %s", code, b)
	}
	reader := person{t: t, base: s.URL, answers: &answers, bearer: created.Secret}

	writes := []struct {
		name, method, path string
		body               any
	}{
		{"start", "POST", "/api/sessions/" + ses.ID + "/messages", map[string]string{"content": "more"}},
		{"cancel", "POST", "/api/runs/" + ru2.ID + "/cancel", nil},
		{"approve", "POST", "/api/requests/" + q + "/respond", map[string]string{"choice": "once"}},
	}
	for _, w := range writes {
		for who, p := range map[string]person{"viewer": vic, "read token": reader} {
			code, _, b := p.do(w.method, w.path, w.body, true)
			var e e2etest.ErrorJSON
			_ = json.Unmarshal(b, &e)
			if code != http.StatusForbidden || e.Error.Code != "forbidden" || e.Error.Details["need"] != "operate" || e.Error.Details["role"] != "viewer" {
				t.Fatalf("%s may %s: %d %s", who, w.name, code, b)
			}
		}
	}
	vic.want("GET", "/api/runs/"+ru.ID, nil, http.StatusOK, "", nil)
	reader.want("GET", "/api/runs/"+ru.ID, nil, http.StatusOK, "", nil)

	// CSRF: the operator's cookie without the header is refused.
	bare := ops
	bare.noCSRF = true
	bare.want("POST", "/api/requests/"+q+"/respond", map[string]string{"choice": "once"}, http.StatusForbidden, "csrf_failed", nil)

	// The operator approves one run and cancels the other.
	ops.want("POST", "/api/requests/"+q+"/respond", map[string]string{"choice": "once"}, http.StatusOK, "", nil)
	ops.waitStatus(ru.ID, "completed")
	// 200 when the waiting run is parked (finished at once), 202 when its
	// runner still holds it.
	if code, _, b := ops.do("POST", "/api/runs/"+ru2.ID+"/cancel", nil, true); code != http.StatusOK && code != http.StatusAccepted {
		t.Fatalf("operator's cancel: %d %s", code, b)
	}
	ops.waitStatus(ru2.ID, "cancelled")
	// The read token opens the run's stream in the URL, as EventSource
	// sends it.
	for _, e := range e2etest.OpenStream(t, s.URL+"/api/runs/"+ru.ID+"/events?access_token="+created.Secret, nil).Drain(t) {
		if e.Type == event.ApprovalResolved {
			p := e2etest.Payload[event.ResolvedPayload](t, e)
			if p.By == nil || p.By.Kind != "user" || p.By.Name != "ops" {
				t.Fatalf("approval.resolved by %+v", p.By)
			}
		}
	}

	// Ten wrong passwords: the sixth and later attempts wait.
	var last struct {
		code int
		h    http.Header
	}
	for i := range 10 {
		code, h, _ := nobody.do("POST", "/api/auth/login", map[string]string{"name": "vic", "password": "wrong-" + strconv.Itoa(i)}, true)
		want := http.StatusUnauthorized
		if i >= 5 {
			want = http.StatusTooManyRequests
		}
		if code != want {
			t.Fatalf("wrong password %d: %d, want %d", i+1, code, want)
		}
		last.code, last.h = code, h
	}
	if secs, err := strconv.Atoi(last.h.Get("Retry-After")); err != nil || secs < 1 {
		t.Fatalf("Retry-After %q", last.h.Get("Retry-After"))
	}
	code, _, _ = nobody.do("POST", "/api/auth/login", map[string]string{"name": "vic", "password": vicPW}, true)
	if code != http.StatusTooManyRequests {
		t.Fatalf("the right password right after: %d, want 429", code)
	}

	root.want("POST", "/api/auth/logout", nil, http.StatusNoContent, "", nil)
	root.want("GET", "/api/sessions", nil, http.StatusUnauthorized, "unauthorized", nil)
	s.Stop()

	secrets := []string{rootPW, opsPW, vicPW, created.Secret, root.cookie, root.csrf, ops.cookie, ops.csrf, vic.cookie, vic.csrf}
	hash := sha256hex(created.Secret)
	if leaks := e2etest.SecretLeaks(answers.String(), append(secrets, hash)); len(leaks) > 0 {
		t.Errorf("answers show secrets: %v", leaks)
	}
	if leaks := e2etest.SecretLeaks(s.Logs.String(), append(secrets, hash)); len(leaks) > 0 {
		t.Errorf("the log shows secrets: %v", leaks)
	}
	// The database keeps the token's hash and its display prefix by
	// design (the contract's "prefix"): the token is checked whole there;
	// every other secret, even in part, is absent from every row.
	rows, dump := e2etest.ScanDB(t, filepath.Join(s.DataDir, "caduceus.db"), secrets[:3])
	rows2, _ := e2etest.ScanDB(t, filepath.Join(s.DataDir, "caduceus.db"), secrets[4:])
	if rows == 0 || rows2 != rows || !strings.Contains(dump, "ops") || !strings.Contains(dump, hash) {
		t.Fatalf("the database scan read %d rows", rows)
	}
	if strings.Contains(dump, created.Secret) {
		t.Error("a database row holds the token")
	}
}

func sha256hex(s string) string { return auth.HashToken(s) }
