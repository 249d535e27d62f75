package api_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/config"
	"github.com/caduceus-dev/caduceus/internal/event"
)

// withConn sets the server's connection bounds.
func withConn(set func(c *config.Config)) e2etest.ServerOpt { return set }

func hostOf(s *e2etest.Server) string { return strings.TrimPrefix(s.URL, "http://") }

// waitClosed reads c until the server closes it (EOF or reset) and
// returns when that happened and what the server sent, failing if it is
// still open after d.
func waitClosed(c net.Conn, d time.Duration) (time.Time, string, error) {
	_ = c.SetReadDeadline(time.Now().Add(d))
	var got strings.Builder
	_, err := io.Copy(&got, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return time.Time{}, got.String(), fmt.Errorf("still open after %s", d)
	}
	return time.Now(), got.String(), nil
}

// 200 clients that send a request's headers and a few bytes of its body,
// then nothing, and 50 that stop halfway through their headers, are all
// disconnected by the server once the read timeout has passed (a stalled
// body is told 408 request_timeout first), while a normal client is
// served throughout. None of the cut requests changes anything.
func TestStalledRequestsAreClosed(t *testing.T) {
	t.Parallel()
	const readTimeout = 2 * time.Second
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("hi"))),
		withConn(func(c *config.Config) { c.ReadTimeout = readTimeout }))
	host := hostOf(s)
	before := len(s.Sessions(t))

	const bodies, headers = 200, 50
	type result struct {
		body   bool // the request stalled in its body
		after  time.Duration
		answer string
		err    error
	}
	results := make(chan result, bodies+headers)
	var wg sync.WaitGroup
	for i := range bodies + headers {
		c, err := e2etest.DialFrom(host, e2etest.LoopbackClient(i), 0)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		req := "POST /api/sessions HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"title\":\"st"
		if i >= bodies {
			req = "GET /api/health HTTP/1.1\r\nHost: " + host + "\r\nAccept: "
		}
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
		sent := time.Now()
		wg.Add(1)
		go func() {
			defer wg.Done()
			at, answer, err := waitClosed(c, readTimeout+10*time.Second)
			results <- result{i < bodies, at.Sub(sent), answer, err}
		}()
	}

	// Meanwhile the server answers a normal client, more than once.
	served := 0
	for deadline := time.Now().Add(readTimeout); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if h, _ := s.Health(t); h.Status == "" {
			t.Fatal("health without a status")
		}
		s.NewSession(t)
		served++
	}
	wg.Wait()
	close(results)
	var slowest time.Duration
	for r := range results {
		if r.err != nil {
			t.Fatalf("a stalled connection: %v", r.err)
		}
		// Not refused at once: cut by the timeout (whose clock starts at
		// accept, a moment before the write).
		if r.after < readTimeout/2 {
			t.Fatalf("a stalled connection was closed after %s, before the read timeout of %s", r.after, readTimeout)
		}
		if r.body && (!strings.HasPrefix(r.answer, "HTTP/1.1 408 ") || !strings.Contains(r.answer, `"code":"request_timeout"`)) {
			t.Fatalf("a stalled body was answered %q, want 408 request_timeout", r.answer)
		}
		slowest = max(slowest, r.after)
	}
	t.Logf("%d stalled connections closed, the last %s after its write; %d normal requests served meanwhile", bodies+headers, slowest.Round(time.Millisecond), 2*served)
	if got := len(s.Sessions(t)); got != before+served {
		t.Fatalf("%d sessions, want %d: a cut request created one", got, before+served)
	}
}

// A keep-alive connection serves several requests, then the server closes
// it once it has been idle for the idle timeout.
func TestIdleConnectionsAreClosed(t *testing.T) {
	t.Parallel()
	const idle = time.Second
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("hi"))),
		withConn(func(c *config.Config) { c.IdleTimeout = idle }))
	c, err := e2etest.DialFrom(hostOf(s), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	for i := range 2 {
		req, _ := http.NewRequest("GET", s.URL+"/api/health", nil)
		if err := req.Write(c); err != nil {
			t.Fatalf("request %d on the connection: %v", i+1, err)
		}
		res, err := http.ReadResponse(br, req)
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("request %d on the connection: %v %v", i+1, res, err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.Close {
			t.Fatal("the server did not keep the connection alive")
		}
	}
	idleFrom := time.Now()
	at, _, err := waitClosed(c, idle+10*time.Second)
	if err != nil {
		t.Fatalf("idle connection: %v", err)
	}
	if d := at.Sub(idleFrom); d < idle/2 {
		t.Fatalf("closed %s after the last answer, before the idle timeout of %s", d, idle)
	}
}

// One client address holds at most MaxConnsPerAddr connections: the next
// is closed at once, before a byte is read or written, while other
// addresses are served; closing one frees its place.
func TestConnectionsPerAddress(t *testing.T) {
	t.Parallel()
	const limit = 8
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("hi"))),
		withConn(func(c *config.Config) { c.MaxConnsPerAddr = limit }))
	host, from := hostOf(s), e2etest.LoopbackClient(0)
	health := func(c net.Conn) error {
		req, _ := http.NewRequest("GET", s.URL+"/api/health", nil)
		if err := req.Write(c); err != nil {
			return err
		}
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		res, err := http.ReadResponse(bufio.NewReader(c), req)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", res.StatusCode)
		}
		_, err = io.Copy(io.Discard, res.Body)
		return err
	}
	var held []net.Conn
	for i := range limit {
		c, err := e2etest.DialFrom(host, from, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := health(c); err != nil {
			t.Fatalf("connection %d of %d: %v", i+1, limit, err)
		}
		held = append(held, c)
	}

	over, err := e2etest.DialFrom(host, from, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer over.Close()
	// Closed without reading the request: nothing comes back.
	_ = over.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := over.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Fatalf("connection %d: read %d bytes, %v; want it closed", limit+1, n, err)
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("connection %d is still open", limit+1)
	}

	if h, _ := s.Health(t); h.Status == "" { // from 127.0.0.1
		t.Fatal("another address was not served")
	}

	held[0].Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := e2etest.DialFrom(host, from, 0)
		if err != nil {
			t.Fatal(err)
		}
		err = health(c)
		c.Close()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a closed connection did not free its place: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// An event stream is a long-lived GET: it outlives the read timeout that
// bounds every other request (net/http would cancel its context when the
// connection's read deadline passes) and carries events committed after.
func TestStreamOutlivesReadTimeout(t *testing.T) {
	t.Parallel()
	const readTimeout = time.Second
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("hi"))),
		withConn(func(c *config.Config) { c.ReadTimeout = readTimeout }))
	sid := s.NewSession(t)
	st := e2etest.OpenStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
	st.Until(t, "session.created", e2etest.IsType(event.SessionCreated))
	time.Sleep(readTimeout + 1500*time.Millisecond)
	r := s.Send(t, sid, "hello")
	st.Until(t, "the run's end", e2etest.IsDone(r.ID))
}

// The server's per-address limit on event streams (--max-streams-per-addr)
// reaches the API: one stream more than it allows is refused with 429
// too_many_streams, and the client's other requests are still served.
func TestStreamsPerAddressLimit(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("hi"))),
		withConn(func(c *config.Config) { c.MaxStreamsPerAddr = 2 }))
	sid := s.NewSession(t)
	e2etest.OpenStream(t, s.URL+"/api/events", nil)
	e2etest.OpenStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
	req, _ := http.NewRequest("GET", s.URL+"/api/events?session="+sid, nil)
	req.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var e e2etest.ErrorJSON
	b, _ := io.ReadAll(res.Body)
	_ = json.Unmarshal(b, &e)
	if res.StatusCode != http.StatusTooManyRequests || e.Error.Code != "too_many_streams" || e.Error.Details["limit"] != float64(2) {
		t.Fatalf("third stream: %d %s", res.StatusCode, b)
	}
	s.NewSession(t)
}
