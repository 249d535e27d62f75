package api

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/identity"
	"github.com/caduceus-dev/caduceus/internal/secret"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/terminal"
)

// Terminal error codes.
const (
	CodeTerminalsOff     = "terminals_off"      // the server runs no terminals
	CodeTerminalNotFound = "terminal_not_found" // ?id= names no running terminal of the caller's in the session
	CodeNoWorkspace      = "no_workspace"       // the session's workspace is not a directory here
	CodeTooManyTerminals = "too_many_terminals" // the caller holds the most terminals allowed in the session
)

// Terminal WebSocket bounds.
const (
	// maxTerminalMessage bounds one client message: typed input and
	// pastes arrive in pieces far smaller.
	maxTerminalMessage = 64 << 10
	// maxTerminalFrame bounds the output sent in one frame.
	maxTerminalFrame = 64 << 10
	// terminalPing keeps idle connections through proxies open and finds
	// dead ones.
	terminalPing = 30 * time.Second
	// maxLoggedLine bounds a typed line in the log.
	maxLoggedLine = 512
)

// terminals is the API's share of the terminals' lifecycle: the watchers
// that log and journal a terminal's end.
type terminals struct {
	mu      sync.Mutex
	closing bool // no watcher is added once CloseTerminals began
	wg      sync.WaitGroup
}

// CloseTerminals closes every terminal and waits until their ends are
// journaled; call it before the journal writer stops.
func (a *API) CloseTerminals() {
	if a.opt.Terminals == nil {
		return
	}
	a.terms.mu.Lock()
	a.terms.closing = true
	a.terms.mu.Unlock()
	a.opt.Terminals.Close()
	a.terms.wg.Wait()
}

// termMsg is a control message (a WebSocket text frame), both ways.
type termMsg struct {
	Type       string `json:"type"` // hello, resize, exit, detached, error, close
	ID         string `json:"id,omitempty"`
	Cols       int    `json:"cols,omitempty"`
	Rows       int    `json:"rows,omitempty"`
	Reattached bool   `json:"reattached,omitempty"`
	Shell      string `json:"shell,omitempty"`
	Code       *int   `json:"code,omitempty"`
	Reason     string `json:"reason,omitempty"`
	Error      string `json:"error,omitempty"` // a stable code
	Message    string `json:"message,omitempty"`
}

// terminalSocket serves GET /api/sessions/{id}/terminal: a WebSocket to a
// new shell in the session's workspace, or with ?id= to one of the
// caller's still running (docs/API.md, "Terminal").
func (a *API) terminalSocket(w http.ResponseWriter, r *http.Request) {
	sid, ok := pathID(w, r, "ses", "session")
	if !ok {
		return
	}
	mgr := a.opt.Terminals
	if mgr == nil {
		writeError(w, http.StatusNotFound, CodeTerminalsOff, "this server runs no terminals", nil)
		return
	}
	p, _ := principal(r)
	// An open server (no sign-in) exists on loopback only; a request that
	// reached it from elsewhere gets no shell even so.
	if p.Kind == identity.KindLocal && !loopbackPeer(r.RemoteAddr) {
		writeError(w, http.StatusForbidden, CodeForbidden, "terminals need sign-in unless the server and the browser are on the same machine", nil)
		return
	}
	sess, err := a.st.GetSession(r.Context(), sid)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	owner := terminalOwner(p)
	q := r.URL.Query()
	var t *terminal.Terminal
	if tid := q.Get("id"); tid != "" {
		if t, err = mgr.Get(tid, sid, owner); err != nil {
			writeError(w, http.StatusNotFound, CodeTerminalNotFound,
				"no such terminal: it ended, or it is not yours; open a new one", map[string]any{"id": tid})
			return
		}
	}
	cols, rows, ok := terminalSize(w, q.Get("cols"), q.Get("rows"))
	if !ok {
		return
	}
	if sess.Workspace == "" {
		writeError(w, http.StatusConflict, CodeNoWorkspace, "the session has no workspace", nil)
		return
	}
	// The server's read and write timeouts bound requests, and a hijacked
	// connection keeps them: a terminal lives as long as its socket.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	// Accept refuses (403) a browser page of another origin than the
	// server's own or one the guard allows: a WebSocket is not bound by
	// CORS, and the session cookie would otherwise hand a shell to any
	// site the person visits.
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: originPatterns(a.opt.Origins)})
	if err != nil {
		a.log.Info("terminal refused", "session_id", sid, "by", p, "origin", r.Header.Get("Origin"), "err", err)
		return
	}
	defer conn.CloseNow()
	conn.SetReadLimit(maxTerminalMessage)
	// The socket ends with the terminal or the client, not with the
	// server's streams context: a stopping server ends the terminal first
	// (CloseTerminals) and the client is told why.
	ctx := context.WithoutCancel(r.Context())
	reattached := t != nil
	if t == nil {
		t, err = mgr.Open(ctx, terminal.Spec{SessionID: sid, Owner: owner, Dir: sess.Workspace, Cols: cols, Rows: rows})
		if err != nil {
			code, msg := CodeNoWorkspace, "the terminal could not start: "+err.Error()
			if errors.Is(err, terminal.ErrTooMany) {
				code, msg = CodeTooManyTerminals, "you have the most terminals allowed in this session open; close one first"
			} else {
				a.log.Warn("terminal failed to start", "session_id", sid, "by", p, "err", err)
			}
			_ = writeTermMsg(ctx, conn, termMsg{Type: "error", Error: code, Message: msg})
			_ = conn.Close(websocket.StatusPolicyViolation, code)
			return
		}
		a.terminalOpened(p, t)
	} else if cols > 0 {
		_ = t.Resize(cols, rows)
	}
	a.serveTerminal(ctx, conn, t, p, reattached)
}

// closeSessionTerminals ends the terminals of a deleted session. Their
// terminal.closed is not journaled: session.deleted is the session's last
// event (the store refuses anything after it).
func (a *API) closeSessionTerminals(sid string) {
	if a.opt.Terminals == nil {
		return
	}
	if n := a.opt.Terminals.CloseSession(sid, "session deleted"); n > 0 {
		a.log.Info("terminals of a deleted session closed", "session_id", sid, "terminals", n)
	}
}

// terminalSize reads the optional initial size.
func terminalSize(w http.ResponseWriter, c, r string) (cols, rows int, ok bool) {
	if c == "" && r == "" {
		return 0, 0, true
	}
	cols, err1 := strconv.Atoi(c)
	rows, err2 := strconv.Atoi(r)
	if err1 != nil || err2 != nil || cols < 1 || rows < 1 || cols > 1000 || rows > 1000 {
		writeError(w, http.StatusBadRequest, control.CodeInvalidInput, "cols and rows are whole numbers from 1 to 1000, given together", nil)
		return 0, 0, false
	}
	return cols, rows, true
}

// terminalOwner is who a terminal belongs to: the person, whichever of
// their credentials they come with, else the kind of principal.
func terminalOwner(p identity.Principal) string {
	if p.UserID != "" {
		return "user:" + p.UserID
	}
	return string(p.Kind)
}

func loopbackPeer(remote string) bool {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// originPatterns turns the guard's canonical origins into the library's
// patterns, matched against scheme://host, with path.Match's special
// characters ([ in an IPv6 host) taken literally.
func originPatterns(origins []string) []string {
	esc := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`, `]`, `\]`)
	out := make([]string, 0, len(origins))
	for _, o := range origins {
		out = append(out, esc.Replace(o))
	}
	return out
}

// terminalOpened logs and journals a new terminal and watches for its end.
func (a *API) terminalOpened(p identity.Principal, t *terminal.Terminal) {
	a.log.Info("terminal opened", "terminal_id", t.ID, "session_id", t.SessionID, "by", p, "shell", t.Shell, "dir", t.Dir)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	if err := a.svc.TerminalOpened(ctx, t.SessionID, event.TerminalOpenedPayload{TerminalID: t.ID, Shell: t.Shell, By: p.Actor()}); err != nil {
		a.log.Warn("terminal.opened not journaled", "terminal_id", t.ID, "err", err)
	}
	cancel()
	a.terms.mu.Lock()
	defer a.terms.mu.Unlock()
	if a.terms.closing {
		// Opened as the server stops: Terminals.Close kills it; nobody
		// waits to journal its end.
		t.Close("server stopping")
		return
	}
	a.terms.wg.Add(1)
	go func() {
		defer a.terms.wg.Done()
		<-t.Done()
		code, reason := t.Exit()
		a.log.Info("terminal closed", "terminal_id", t.ID, "session_id", t.SessionID, "by", p, "reason", reason, "code", code)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err := a.svc.TerminalClosed(ctx, t.SessionID, event.TerminalClosedPayload{TerminalID: t.ID, Reason: reason, Code: code, By: p.Actor()})
		switch {
		case errors.Is(err, store.ErrNotFound):
			// The session was deleted: nothing may follow session.deleted.
		case err != nil:
			a.log.Warn("terminal.closed not journaled", "terminal_id", t.ID, "err", err)
		}
	}()
}

// serveTerminal connects a socket to a terminal until either ends.
func (a *API) serveTerminal(ctx context.Context, conn *websocket.Conn, t *terminal.Terminal, p identity.Principal, reattached bool) {
	snap, client := t.Attach()
	defer client.Detach()
	cols, rows, _ := t.Size()
	if err := writeTermMsg(ctx, conn, termMsg{Type: "hello", ID: t.ID, Cols: cols, Rows: rows, Reattached: reattached, Shell: t.Shell}); err != nil {
		return
	}
	if len(snap) > 0 {
		if err := a.writeTermBytes(ctx, conn, snap); err != nil {
			return
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		defer cancel()
		a.readTerminal(ctx, conn, t, p)
	}()
	ping := time.NewTicker(terminalPing)
	defer ping.Stop()
	for {
		select {
		case b, ok := <-client.Out:
			if !ok {
				a.endTerminalSocket(ctx, conn, t, client)
				return
			}
			// What is ready goes in one frame.
		more:
			for len(b) < maxTerminalFrame {
				select {
				case c, ok := <-client.Out:
					if !ok {
						break more
					}
					b = append(b, c...)
				default:
					break more
				}
			}
			if err := a.writeTermBytes(ctx, conn, b); err != nil {
				return
			}
		case <-ctx.Done():
			return
		case <-ping.C:
			go func() {
				pctx, cancel := context.WithTimeout(ctx, terminalPing)
				defer cancel()
				if err := conn.Ping(pctx); err != nil && ctx.Err() == nil {
					_ = conn.CloseNow()
				}
			}()
		}
	}
}

// endTerminalSocket tells the client why its output ended: the terminal
// ended (exit), or another client took it over or it fell behind
// (detached; it may reattach).
func (a *API) endTerminalSocket(ctx context.Context, conn *websocket.Conn, t *terminal.Terminal, c *terminal.Client) {
	if why := c.Taken(); why != "" {
		_ = writeTermMsg(ctx, conn, termMsg{Type: "detached", ID: t.ID, Reason: why})
		_ = conn.Close(websocket.StatusNormalClosure, "detached")
		return
	}
	select {
	case <-t.Done():
	case <-ctx.Done():
		return
	}
	code, reason := t.Exit()
	_ = writeTermMsg(ctx, conn, termMsg{Type: "exit", ID: t.ID, Code: &code, Reason: reason})
	_ = conn.Close(websocket.StatusNormalClosure, "terminal ended")
}

// readTerminal hands the client's input to the terminal and obeys its
// control messages until the socket ends.
func (a *API) readTerminal(ctx context.Context, conn *websocket.Conn, t *terminal.Terminal, p identity.Principal) {
	lines := &lineLog{t: t, p: p, log: a.log, red: a.opt.Redactor}
	for {
		typ, data, err := conn.Read(ctx)
		if err != nil {
			return
		}
		switch typ {
		case websocket.MessageBinary:
			lines.feed(data)
			// Input to a terminal that just ended is dropped: the writer
			// is about to tell the client (exit), which it could not if
			// this returned and ended the socket first.
			_, _ = t.Write(data)
		case websocket.MessageText:
			var m termMsg
			if err := json.Unmarshal(data, &m); err != nil {
				_ = writeTermMsg(ctx, conn, termMsg{Type: "error", Error: control.CodeInvalidInput, Message: "a text frame is a JSON control message"})
				continue
			}
			switch m.Type {
			case "resize":
				if err := t.Resize(m.Cols, m.Rows); err != nil {
					_ = writeTermMsg(ctx, conn, termMsg{Type: "error", Error: control.CodeInvalidInput, Message: "resize needs cols and rows from 1 to 1000"})
				}
			case "close":
				a.log.Info("terminal closed by its owner", "terminal_id", t.ID, "session_id", t.SessionID, "by", p)
				t.Close("closed")
			default:
				_ = writeTermMsg(ctx, conn, termMsg{Type: "error", Error: control.CodeInvalidInput, Message: "unknown control message " + strconv.Quote(m.Type)})
			}
		}
	}
}

func writeTermMsg(ctx context.Context, conn *websocket.Conn, m termMsg) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return conn.Write(wctx, websocket.MessageText, b)
}

// writeTermBytes sends output; a client that does not take it within the
// stream write timeout is dropped (it may reattach).
func (a *API) writeTermBytes(ctx context.Context, conn *websocket.Conn, b []byte) error {
	wctx, cancel := context.WithTimeout(ctx, a.opt.StreamWriteTimeout)
	defer cancel()
	return conn.Write(wctx, websocket.MessageBinary, b)
}

// lineLog logs each line a person types into a terminal, as far as the
// keys tell it (a line recalled from history or completed by the shell is
// logged as the keys typed). Lines typed at a prompt that hides them (a
// password: terminal.InputHidden) are not logged; the others pass the redactor, which
// masks the server's known secrets, and are capped.
type lineLog struct {
	t   *terminal.Terminal
	p   identity.Principal
	log interface {
		Info(msg string, args ...any)
	}
	red  *secret.Redactor
	buf  []byte
	esc  int // 0: text; 1: after ESC; 2: inside a CSI/SS3 sequence
	over bool
}

func (l *lineLog) feed(data []byte) {
	for _, c := range data {
		switch {
		case l.esc == 1:
			l.esc = 0
			if c == '[' || c == 'O' {
				l.esc = 2
			}
		case l.esc == 2:
			if c >= 0x40 && c <= 0x7e {
				l.esc = 0
			}
		case c == 0x1b:
			l.esc = 1
		case c == '\r' || c == '\n':
			l.flush()
		case c == 0x7f || c == 0x08: // erase the last character
			if len(l.buf) > 0 {
				_, size := utf8.DecodeLastRune(l.buf)
				l.buf = l.buf[:len(l.buf)-size]
			}
		case c == 0x15 || c == 0x03: // ^U, ^C: the line is dropped
			l.buf, l.over = l.buf[:0], false
		case c < 0x20 && c != '\t':
		default:
			if len(l.buf) < maxLoggedLine {
				l.buf = append(l.buf, c)
			} else {
				l.over = true
			}
		}
	}
}

func (l *lineLog) flush() {
	defer func() { l.buf, l.over = l.buf[:0], false }()
	if len(strings.TrimSpace(string(l.buf))) == 0 {
		return
	}
	if l.t.InputHidden() {
		l.log.Info("terminal input not logged: typed at a prompt that hides it (a password)", "terminal_id", l.t.ID, "session_id", l.t.SessionID, "by", l.p)
		return
	}
	line := strings.ToValidUTF8(string(l.buf), "?")
	line = l.red.String(line)
	l.log.Info("terminal input", "terminal_id", l.t.ID, "session_id", l.t.SessionID, "by", l.p, "line", line, "truncated", l.over)
}
