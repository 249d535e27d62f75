package cli

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
)

// A stream that drops after each event is resumed with Last-Event-ID
// from the last event seen; an event replayed twice is delivered once.
func TestStreamResumesAfterDrop(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var cursors []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		cursors = append(cursors, r.Header.Get("Last-Event-ID"))
		n := len(cursors)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "retry: 1000\n: connected\n\n")
		// Each connection replays the event before its cursor (as an
		// at-least-once stream may) and one new one, then drops.
		for id := n; id <= n+1; id++ {
			typ := event.MessageDelta
			if id == 4 {
				typ = event.RunDone
			}
			fmt.Fprintf(w, "id: %d\ndata: {\"id\":%d,\"run_id\":\"run_1\",\"type\":%q,\"payload\":{}}\n\n", id, id, typ)
		}
	}))
	defer srv.Close()
	s := &streamer{c: &client{base: srv.URL, http: srv.Client()}, retry: time.Millisecond, attempts: 3}
	var got []int64
	err := s.follow(context.Background(), "/events", 0, func(e event.Event) error {
		got = append(got, e.ID)
		if e.Type == event.RunDone {
			return errStop
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{1, 2, 3, 4}; !slices.Equal(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
	if want := []string{"", "2", "3"}; !slices.Equal(cursors, want) {
		t.Errorf("Last-Event-ID %q, want %q", cursors, want)
	}
}

// A server that keeps refusing connections ends the stream with an
// unreachable error (exit 4) after the allowed attempts; a refusal by the
// server (401) ends it at once.
func TestStreamGivesUp(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"error":{"code":"unauthorized","message":"sign in","details":{}}}`)
	}))
	url := srv.URL
	s := &streamer{c: &client{base: url, http: srv.Client()}, retry: time.Millisecond, attempts: 2}
	err := s.follow(context.Background(), "/events", 0, func(event.Event) error { return nil })
	if exitCode(err) != ExitUnreachable || describe(err) == err.Error() {
		t.Errorf("401: err %v, code %d", err, exitCode(err))
	}
	srv.Close()
	reconnects := 0
	s.onReconnect = func(error) { reconnects++ }
	err = s.follow(context.Background(), "/events", 0, func(event.Event) error { return nil })
	if exitCode(err) != ExitUnreachable || reconnects != 2 {
		t.Errorf("closed server: err %v, code %d, reconnects %d", err, exitCode(err), reconnects)
	}
}
