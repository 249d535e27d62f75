package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/caduceus-dev/caduceus/internal/auth"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/secret"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/terminal"
)

// withTerminals turns terminals on: /bin/sh shells, extra origins.
func withTerminals(origins ...string) envOpt {
	return func(c *envConfig) {
		c.terms = terminal.New(terminal.Config{Shell: "/bin/sh", Environ: []string{"PATH=" + os.Getenv("PATH"), "HOME=/tmp"}})
		c.origins = origins
	}
}

// termEnv is an env with terminals whose manager is closed (and its ends
// journaled) before the env stops.
func termEnv(t *testing.T, opts ...envOpt) (*env, *terminal.Manager) {
	var cfg envConfig
	all := append([]envOpt{withTerminals()}, opts...)
	for _, o := range all {
		o(&cfg)
	}
	m := cfg.terms
	all = append(all, func(c *envConfig) { c.terms = m })
	e := newEnv(t, all...)
	t.Cleanup(m.Close)
	return e, m
}

// termConn is a client of a terminal's WebSocket.
type termConn struct {
	t    *testing.T
	c    *websocket.Conn
	mu   sync.Mutex
	out  bytes.Buffer
	msgs []map[string]any
	done chan struct{}
}

func (e *env) dialTerminal(t *testing.T, sessionID, query string, header http.Header) (*termConn, *http.Response, error) {
	t.Helper()
	if header == nil {
		header = http.Header{}
	}
	if header.Get("Origin") == "" {
		header.Set("Origin", e.srv.URL)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	u := "ws" + strings.TrimPrefix(e.srv.URL, "http") + "/api/sessions/" + sessionID + "/terminal" + query
	c, res, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: header})
	if err != nil {
		return nil, res, err
	}
	tc := &termConn{t: t, c: c, done: make(chan struct{})}
	go tc.read()
	t.Cleanup(func() { _ = c.CloseNow() })
	return tc, res, nil
}

func (tc *termConn) read() {
	defer close(tc.done)
	for {
		typ, b, err := tc.c.Read(context.Background())
		if err != nil {
			return
		}
		tc.mu.Lock()
		if typ == websocket.MessageBinary {
			tc.out.Write(b)
		} else {
			var m map[string]any
			_ = json.Unmarshal(b, &m)
			tc.msgs = append(tc.msgs, m)
		}
		tc.mu.Unlock()
	}
}

func (tc *termConn) send(s string) {
	tc.t.Helper()
	if err := tc.c.Write(context.Background(), websocket.MessageBinary, []byte(s)); err != nil {
		tc.t.Fatal(err)
	}
}

func (tc *termConn) control(v any) {
	tc.t.Helper()
	b, _ := json.Marshal(v)
	if err := tc.c.Write(context.Background(), websocket.MessageText, b); err != nil {
		tc.t.Fatal(err)
	}
}

// waitOut waits until the output holds want.
func (tc *termConn) waitOut(want string) {
	tc.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		tc.mu.Lock()
		got := tc.out.String()
		tc.mu.Unlock()
		if strings.Contains(got, want) {
			return
		}
		if time.Now().After(deadline) {
			tc.t.Fatalf("the terminal never showed %q; it shows:\n%s", want, got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitMsg waits for a control message of type typ.
func (tc *termConn) waitMsg(typ string) map[string]any {
	tc.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		tc.mu.Lock()
		for _, m := range tc.msgs {
			if m["type"] == typ {
				tc.mu.Unlock()
				return m
			}
		}
		tc.mu.Unlock()
		if time.Now().After(deadline) {
			tc.t.Fatalf("no %q message; got %v", typ, tc.msgs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func cookieHeader(b browser) http.Header {
	return http.Header{"Cookie": {"caduceus_session=" + b.cookie}}
}

// TestTerminalRoundTrip: an operator opens a terminal, types, resizes,
// reloads (reattaches with ?id=) and sees the same screen, then closes
// it; the journal has terminal.opened and terminal.closed by the person.
func TestTerminalRoundTrip(t *testing.T) {
	e, m := termEnv(t)
	s := e.session(t)
	op := e.login(e.addPerson("ops", auth.RoleOperator))

	tc, _, err := e.dialTerminal(t, s.ID, "?cols=90&rows=20", cookieHeader(op))
	if err != nil {
		t.Fatal(err)
	}
	hello := tc.waitMsg("hello")
	tid, _ := hello["id"].(string)
	if !strings.HasPrefix(tid, "term_") || hello["cols"] != 90.0 || hello["rows"] != 20.0 || hello["reattached"] == true {
		t.Fatalf("hello = %v", hello)
	}
	tc.send("echo hi-$((1+2)); stty size\n")
	tc.waitOut("hi-3")
	tc.waitOut("20 90")
	tc.control(map[string]any{"type": "resize", "cols": 120, "rows": 33})
	tc.send("stty size\n")
	tc.waitOut("33 120")

	// A reload: the page goes away, the terminal stays.
	_ = tc.c.Close(websocket.StatusGoingAway, "reload")
	<-tc.done
	again, _, err := e.dialTerminal(t, s.ID, "?id="+tid, cookieHeader(op))
	if err != nil {
		t.Fatal(err)
	}
	if h := again.waitMsg("hello"); h["id"] != tid || h["reattached"] != true {
		t.Fatalf("reattach hello = %v", h)
	}
	again.waitOut("hi-3") // the scrollback
	again.send("echo back-$((2*21))\n")
	again.waitOut("back-42")

	// Someone else, or the same id in another session, finds nothing.
	other := e.login(e.addPerson("oli", auth.RoleOperator))
	if _, res, err := e.dialTerminal(t, s.ID, "?id="+tid, cookieHeader(other)); err == nil || res == nil || res.StatusCode != http.StatusNotFound {
		t.Fatalf("another person reattached: err %v, res %v", err, res)
	}
	r := op.req("POST", "/api/sessions", "{}")
	r.want(t, http.StatusCreated, "")
	var s2 sessionJSON
	r.decode(t, &s2)
	if _, res, err := e.dialTerminal(t, s2.ID, "?id="+tid, cookieHeader(op)); err == nil || res == nil || res.StatusCode != http.StatusNotFound {
		t.Fatalf("reattached through another session: err %v, res %v", err, res)
	}

	again.control(map[string]any{"type": "close"})
	exit := again.waitMsg("exit")
	if exit["reason"] != "closed" || exit["code"] != -1.0 {
		t.Fatalf("exit = %v", exit)
	}
	<-again.done
	if got := m.List(s.ID, "user:"+e.accountOf(t, "ops").ID); len(got) != 0 {
		t.Fatalf("terminals left: %d", len(got))
	}
	opened, closed := terminalEvents(t, e, s.ID)
	if len(opened) != 1 || opened[0]["terminal_id"] != tid || byName(opened[0]) != "ops" {
		t.Fatalf("terminal.opened events: %v", opened)
	}
	if len(closed) != 1 || closed[0]["terminal_id"] != tid || closed[0]["reason"] != "closed" || byName(closed[0]) != "ops" {
		t.Fatalf("terminal.closed events: %v", closed)
	}
}

func byName(p map[string]any) string {
	by, _ := p["by"].(map[string]any)
	name, _ := by["name"].(string)
	return name
}

// terminalEvents returns the payloads of the session's terminal events,
// waiting a moment for terminal.closed (journaled when the shell is gone).
func terminalEvents(t *testing.T, e *env, sid string) (opened, closed []map[string]any) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		evs, err := e.st.Events(e.ctx, store.EventQuery{SessionID: sid, Types: []event.Type{event.TerminalOpened, event.TerminalClosed}})
		if err != nil {
			t.Fatal(err)
		}
		opened, closed = nil, nil
		for _, ev := range evs {
			if ev.RunID != "" {
				t.Fatalf("a terminal event with run %q", ev.RunID)
			}
			var p map[string]any
			if err := json.Unmarshal(ev.Payload, &p); err != nil {
				t.Fatal(err)
			}
			if ev.Type == event.TerminalOpened {
				opened = append(opened, p)
			} else {
				closed = append(closed, p)
			}
		}
		if len(closed) >= len(opened) || time.Now().After(deadline) {
			return opened, closed
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTerminalRefusals: viewers, read tokens, foreign pages and unknown
// ids get no shell, and nothing is started for them.
func TestTerminalRefusals(t *testing.T) {
	e, m := termEnv(t, func(c *envConfig) { c.origins = []string{"http://localhost:5173"} })
	s := e.session(t)
	viewer := e.login(e.addPerson("vic", auth.RoleViewer))
	op := e.addPerson("ops", auth.RoleOperator)
	opRead := e.addToken(op, auth.ScopeRead)
	opOperate := e.addToken(op, auth.ScopeOperate)
	opSess := e.login(op)

	tests := []struct {
		name   string
		query  string
		header http.Header
		status int
		code   string
	}{
		{"viewer", "", cookieHeader(viewer), http.StatusForbidden, "forbidden"},
		{"read token", "", http.Header{"Authorization": {"Bearer " + opRead}}, http.StatusForbidden, "forbidden"},
		{"nobody", "", nil, http.StatusUnauthorized, "unauthorized"},
		{"cross-origin page", "", http.Header{"Cookie": cookieHeader(opSess)["Cookie"], "Origin": {"http://evil.example"}}, http.StatusForbidden, ""},
		{"cross-origin look-alike", "", http.Header{"Cookie": cookieHeader(opSess)["Cookie"], "Origin": {"http://localhost:5174"}}, http.StatusForbidden, ""},
		{"unknown id", "?id=term_0000", cookieHeader(opSess), http.StatusNotFound, "terminal_not_found"},
		{"bad size", "?cols=0&rows=5", cookieHeader(opSess), http.StatusBadRequest, "invalid_input"},
		{"unknown session", "", cookieHeader(opSess), http.StatusNotFound, "not_found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sid := s.ID
			if tc.name == "unknown session" {
				sid = "ses_01m7xycjnkfry445nd4sfrf5m3"
			}
			_, res, err := e.dialTerminal(t, sid, tc.query, tc.header)
			if err == nil || res == nil {
				t.Fatalf("connected: err %v", err)
			}
			if res.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", res.StatusCode, tc.status)
			}
			if tc.code != "" {
				var body struct {
					Error struct{ Code string } `json:"error"`
				}
				_ = json.NewDecoder(res.Body).Decode(&body)
				if body.Error.Code != tc.code {
					t.Fatalf("code %q, want %q", body.Error.Code, tc.code)
				}
			}
		})
	}
	if n := len(m.List(s.ID, "user:"+op.ID)) + len(m.List(s.ID, "user:"+e.accountOf(t, "vic").ID)); n != 0 {
		t.Fatalf("refused requests started %d terminals", n)
	}
	// The origin the guard allows, and a token (no browser, no Origin),
	// get one.
	tc, _, err := e.dialTerminal(t, s.ID, "", http.Header{"Cookie": cookieHeader(opSess)["Cookie"], "Origin": {"http://localhost:5173"}})
	if err != nil {
		t.Fatalf("allowed origin: %v", err)
	}
	tc.waitMsg("hello")
	tok, _, err := e.dialTerminal(t, s.ID, "", http.Header{"Authorization": {"Bearer " + opOperate}, "Origin": {""}})
	if err != nil {
		t.Fatalf("operate token: %v", err)
	}
	tok.waitMsg("hello")
}

func TestTerminalsOff(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	_, res, err := e.dialTerminal(t, s.ID, "", nil)
	if err == nil || res == nil || res.StatusCode != http.StatusNotFound {
		t.Fatalf("terminals off: err %v res %v", err, res)
	}
}

func TestTerminalTooMany(t *testing.T) {
	e, _ := termEnv(t, func(c *envConfig) {
		c.terms = terminal.New(terminal.Config{Shell: "/bin/sh", MaxPerOwner: 1})
	})
	s := e.session(t)
	first, _, err := e.dialTerminal(t, s.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	first.waitMsg("hello")
	second, _, err := e.dialTerminal(t, s.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if m := second.waitMsg("error"); m["error"] != "too_many_terminals" {
		t.Fatalf("second terminal: %v", m)
	}
	<-second.done
	if got := websocket.CloseStatus(second.c.CloseNow()); got != -1 && got != websocket.StatusPolicyViolation {
		t.Fatalf("close status %v", got)
	}
}

// TestTerminalInputLogged: each typed line is logged with the person,
// known secrets masked; a line typed with echo off is not.
func TestTerminalInputLogged(t *testing.T) {
	var mu sync.Mutex
	var logBuf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(lockedWriter{&mu, &logBuf}, nil))
	const key = "sk-test-key-0123456789"
	e, _ := termEnv(t, withLog(log), func(c *envConfig) { c.red = secret.NewRedactor(key) })
	s := e.session(t)
	op := e.login(e.addPerson("ops", auth.RoleOperator))
	tc, _, err := e.dialTerminal(t, s.ID, "", cookieHeader(op))
	if err != nil {
		t.Fatal(err)
	}
	tc.waitMsg("hello")
	tc.send("echo visible-$((5*5)) " + key + "\r")
	tc.waitOut("visible-25")
	// A password prompt: echo off while the line is typed.
	tc.send("stty -echo; echo prompt-$((7*7))\r")
	tc.waitOut("prompt-49")
	tc.send("hunter2-password\r")
	tc.send("stty echo; echo after-$((8*8))\r")
	tc.waitOut("after-64")
	mu.Lock()
	logged := logBuf.String()
	mu.Unlock()
	for _, want := range []string{`"msg":"terminal opened"`, `"line":"echo visible-$((5*5)) [redacted]"`, `"name":"ops"`,
		`"msg":"terminal input not logged: typed at a prompt that hides it (a password)"`} {
		if !strings.Contains(logged, want) {
			t.Errorf("the log lacks %s:\n%s", want, logged)
		}
	}
	for _, leak := range []string{key, "hunter2"} {
		if strings.Contains(logged, leak) {
			t.Errorf("the log holds %q:\n%s", leak, logged)
		}
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestTerminalSessionDeleted: deleting a session ends its terminals; the
// client is told, and nothing is journaled after session.deleted.
func TestTerminalSessionDeleted(t *testing.T) {
	e, m := termEnv(t)
	s := e.session(t)
	tc, _, err := e.dialTerminal(t, s.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	tc.waitMsg("hello")
	e.req("DELETE", "/api/sessions/"+s.ID, "").want(t, http.StatusNoContent, "")
	if exit := tc.waitMsg("exit"); exit["reason"] != "session deleted" {
		t.Fatalf("exit = %v", exit)
	}
	if n := len(m.List(s.ID, "local")); n != 0 {
		t.Fatalf("%d terminals of the deleted session run", n)
	}
	evs, err := e.st.Events(e.ctx, store.EventQuery{SessionID: s.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Type != event.SessionDeleted {
		t.Fatalf("after the delete the session's journal holds %d events: %v", len(evs), evs)
	}
}

// TestTerminalShellExit: the shell's exit ends the terminal; the client
// gets its status, and a reattach finds nothing.
func TestTerminalShellExit(t *testing.T) {
	e, _ := termEnv(t)
	s := e.session(t)
	tc, _, err := e.dialTerminal(t, s.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	tid, _ := tc.waitMsg("hello")["id"].(string)
	tc.send("exit 5\n")
	if exit := tc.waitMsg("exit"); exit["reason"] != "exited" || exit["code"] != 5.0 {
		t.Fatalf("exit = %v", exit)
	}
	<-tc.done
	if _, res, err := e.dialTerminal(t, s.ID, "?id="+tid, nil); err == nil || res == nil || res.StatusCode != http.StatusNotFound {
		t.Fatalf("reattached to an ended terminal: err %v res %v", err, res)
	}
	_, closed := terminalEvents(t, e, s.ID)
	if len(closed) != 1 || closed[0]["reason"] != "exited" || closed[0]["code"] != 5.0 {
		t.Fatalf("terminal.closed = %v", closed)
	}
}
