package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// clientFrom is an HTTP client whose connections come from the loopback
// address ip (all of 127.0.0.0/8 is local on Linux): another client
// address as far as the server can tell.
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
}

// streamStatus opens url with client and returns the status, error code
// and details of the answer; a stream that opened stays open until the
// test ends when keep is set, else it is closed at once.
func streamStatus(t *testing.T, c *http.Client, url string, keep bool) (int, string, map[string]any) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header.Set("Accept", "text/event-stream")
	res, err := c.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if res.StatusCode == http.StatusOK {
		if keep {
			t.Cleanup(func() { cancel(); res.Body.Close() })
		} else {
			cancel()
			res.Body.Close()
		}
		return res.StatusCode, "", nil
	}
	defer cancel()
	defer res.Body.Close()
	var e struct {
		Error struct {
			Code    string         `json:"code"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	b, _ := io.ReadAll(res.Body)
	_ = json.Unmarshal(b, &e)
	return res.StatusCode, e.Error.Code, e.Error.Details
}

// One client address holds at most MaxStreamsPerAddr event streams, of
// every kind together; one more is refused with 429 too_many_streams
// (before anything is streamed), other addresses are not affected, and a
// stream that closes frees its place.
func TestStreamsPerAddress(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withMaxStreams(2))
	s := e.session(t)
	r := e.send(t, s.ID, "hi")
	first, _ := e.openSSE(t, "/api/sessions/"+s.ID+"/events")
	if first == nil {
		t.Fatal("first stream refused")
	}
	if st, _ := e.openSSE(t, "/api/events?session="+s.ID); st == nil {
		t.Fatal("second stream refused")
	}
	for _, path := range []string{"/api/runs/" + r.ID + "/events", "/api/events", "/api/sessions/" + s.ID + "/events"} {
		code, errCode, details := streamStatus(t, e.srv.Client(), e.srv.URL+path, true)
		if code != http.StatusTooManyRequests || errCode != "too_many_streams" || details["limit"] != float64(2) {
			t.Fatalf("third stream %s: %d %s %v, want 429 too_many_streams with limit 2", path, code, errCode, details)
		}
	}
	if code, errCode, _ := streamStatus(t, clientFrom("127.0.0.2"), e.srv.URL+"/api/events", true); code != http.StatusOK {
		t.Fatalf("another address: %d %s", code, errCode)
	}
	// Requests that are not streams are not counted.
	e.req("GET", "/api/sessions/"+s.ID, "").want(t, http.StatusOK, "")

	first.cancel()
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, _, _ := streamStatus(t, e.srv.Client(), e.srv.URL+"/api/events", true)
		if code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a closed stream did not free its place: still %d", code)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A client that stops reading is dropped once the server's write to it has
// waited StreamWriteTimeout, holding neither a handler nor a stream place;
// reconnecting with Last-Event-ID it gets the rest of the history: every
// event exactly once across the two connections.
func TestStalledStreamReaderIsDroppedAndResumes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withStreamWriteTimeout(300*time.Millisecond), withMaxStreams(1))
	s := e.session(t)
	r := e.send(t, s.ID, "hi")
	// 8 MiB of history: more than the kernel buffers on both ends hold,
	// so the server's writes must block once the client stops reading.
	payload := json.RawMessage(`{"output":"` + strings.Repeat("x", 32<<10) + `"}`)
	for range 16 {
		err := e.st.Write(context.Background(), func(tx store.Tx) error {
			drafts := make([]event.Draft, 16)
			for i := range drafts {
				drafts[i] = event.Draft{RunID: r.ID, SessionID: s.ID, Type: event.ToolDone, Payload: payload}
			}
			_, err := tx.AppendEvents(context.Background(), "", drafts...)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	all, err := e.st.Events(context.Background(), store.EventQuery{SessionID: s.ID})
	if err != nil {
		t.Fatal(err)
	}

	// A raw client with a 4 KiB receive buffer reads the headers and a
	// little of the stream, then stops.
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	conn, err := d.Dial("tcp", e.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	path := "/api/sessions/" + s.ID + "/events"
	req, _ := http.NewRequest("GET", e.srv.URL+path, nil)
	req.Header.Set("Accept", "text/event-stream")
	if err := req.Write(conn); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReaderSize(conn, 4<<10)
	res, err := http.ReadResponse(br, req)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("stream: %v %v", res, err)
	}
	var got bytes.Buffer
	if _, err := io.CopyN(&got, res.Body, 16<<10); err != nil {
		t.Fatal(err)
	}

	// Dropped: its place is free again (the limit is one stream).
	deadline := time.Now().Add(15 * time.Second)
	for {
		code, _, _ := streamStatus(t, e.srv.Client(), e.srv.URL+"/api/runs/"+r.ID+"/events?after="+strconv.FormatInt(all[len(all)-1].ID, 10), false)
		if code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stalled client still holds its stream (%d)", code)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// What was sent before the drop is still readable; then the stream
	// ends short of the history (a cut chunk: unexpected EOF).
	if _, err := io.Copy(&got, res.Body); err == nil {
		t.Fatal("the stream ended cleanly: it was not cut")
	}
	first := completeEvents(t, got.String())
	if len(first) == 0 || len(first) >= len(all) {
		t.Fatalf("the dropped stream delivered %d of %d events", len(first), len(all))
	}
	t.Logf("dropped after %d of %d events (%d bytes)", len(first), len(all), got.Len())

	// The place the check above took is free again once the server has
	// seen that probe close; reconnect then.
	var rest []frame
	deadline = time.Now().Add(10 * time.Second)
	for {
		st, resp := e.openSSE(t, path, "Last-Event-ID", strconv.FormatInt(first[len(first)-1].ID, 10))
		if st != nil {
			for len(first)+len(rest) < len(all) {
				rest = append(rest, st.next(t))
			}
			st.quiet(t, 100*time.Millisecond)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("reconnect refused: %d %s", resp.code, resp.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var ids []int64
	for _, ev := range first {
		ids = append(ids, ev.ID)
	}
	for _, f := range rest {
		ids = append(ids, f.ev.ID)
	}
	for i, ev := range all {
		if ids[i] != ev.ID {
			t.Fatalf("event %d: id %d, want %d (dropped stream %d events, resumed %d)", i, ids[i], ev.ID, len(first), len(rest))
		}
	}
}

// completeEvents parses the SSE text a cut stream delivered, keeping only
// the events whose message ended (a blank line) before the cut.
func completeEvents(t *testing.T, raw string) []event.Event {
	t.Helper()
	var out []event.Event
	for {
		msg, rest, ok := strings.Cut(raw, "\n\n")
		if !ok {
			return out
		}
		raw = rest
		for line := range strings.Lines(msg) {
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				var ev event.Event
				if err := json.Unmarshal([]byte(data), &ev); err != nil {
					t.Fatalf("event %q: %v", data, err)
				}
				out = append(out, ev)
			}
		}
	}
}
