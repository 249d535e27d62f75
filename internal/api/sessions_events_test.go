package api_test

// Session lifecycle on the streams, at the handler level: POST, PATCH and
// DELETE /api/sessions journal session.created/updated/deleted, the tab
// stream and the session stream carry them, and a deleted session's stream
// still delivers its session.deleted to a client that had not seen it.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/api"
	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/journal"
	"github.com/caduceus-dev/caduceus/internal/store/sqlite"
)

// newLifecycleServer serves the API on a fresh SQLite file with a live Hub.
func newLifecycleServer(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	log := slog.New(slog.DiscardHandler)
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "caduceus.db"))
	if err != nil {
		t.Fatal(err)
	}
	hub := journal.NewHub(st, 50*time.Millisecond, log)
	w := journal.NewWriter(st, hub.Poke, log)
	w.Start()
	hubDone := make(chan struct{})
	go func() {
		defer close(hubDone)
		_ = hub.Run(ctx)
	}()
	svc := control.NewService(st, w, t.TempDir(), control.RetryPolicy{})
	srv := httptest.NewServer(api.New(st, svc, hub, api.Info{Version: "test"}, api.Options{}, log).Handler())
	t.Cleanup(func() {
		cancel() // ends the streams
		<-hubDone
		srv.Close()
		w.Close()
		st.Close()
	})
	return srv.URL
}

func lcCall(t *testing.T, method, url string, body any, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, url, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("%s %s: decode: %v", method, url, err)
		}
	}
	return resp.StatusCode
}

type lcSessionJSON struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Workspace string `json:"workspace"`
	Model     string `json:"model"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

// lcStream is an open event stream; events arrive on a channel that closes when
// the server ends the stream.
type lcStream struct {
	status int
	events chan event.Event
	close  func()
}

func openLifecycle(t *testing.T, url string, header map[string]string) *lcStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	s := &lcStream{status: resp.StatusCode, events: make(chan event.Event, 1000), close: func() { cancel(); resp.Body.Close() }}
	t.Cleanup(s.close)
	if resp.StatusCode != http.StatusOK {
		close(s.events)
		return s
	}
	go func() {
		defer close(s.events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var e event.Event
				if json.Unmarshal([]byte(data), &e) == nil {
					s.events <- e
				}
			}
		}
	}()
	return s
}

// next returns the next event, failing after a few seconds: the promise is
// that every tab hears of a change within one; the margin is for a loaded
// machine running the whole suite.
func (s *lcStream) next(t *testing.T, what string) event.Event {
	t.Helper()
	select {
	case e, ok := <-s.events:
		if !ok {
			t.Fatalf("stream ended while waiting for %s", what)
		}
		return e
	case <-time.After(5 * time.Second):
		t.Fatalf("no %s within 5s", what)
	}
	return event.Event{}
}

// ended reports whether the server closes the stream within a second
// without sending anything more.
func (s *lcStream) ended(t *testing.T) bool {
	t.Helper()
	select {
	case e, ok := <-s.events:
		if ok {
			t.Fatalf("unexpected %s (id %d)", e.Type, e.ID)
		}
		return true
	case <-time.After(time.Second):
		return false
	}
}

func decodeAs[T any](t *testing.T, e event.Event) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(bytes.NewReader(e.Payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s payload %s: %v", e.Type, e.Payload, err)
	}
	return v
}

func TestSessionLifecycleEvents(t *testing.T) {
	base := newLifecycleServer(t)
	var list struct {
		LastEventID int64 `json:"last_event_id"`
	}
	lcCall(t, "GET", base+"/api/sessions", nil, &list)
	tab := openLifecycle(t, fmt.Sprintf("%s/api/events?after=%d", base, list.LastEventID), nil)

	var created lcSessionJSON
	if c := lcCall(t, "POST", base+"/api/sessions", map[string]string{"title": "First"}, &created); c != http.StatusCreated {
		t.Fatalf("create: %d", c)
	}
	e := tab.next(t, "session.created")
	if e.Type != event.SessionCreated || e.RunID != "" || e.SessionID != created.ID || e.Seq != 1 || e.Terminal {
		t.Fatalf("created envelope: %+v", e)
	}
	p := decodeAs[struct {
		Session lcSessionJSON `json:"session"`
	}](t, e)
	if p.Session != created {
		t.Fatalf("session.created carries %+v, POST answered %+v", p.Session, created)
	}

	type updated struct {
		ID        string  `json:"id"`
		Title     *string `json:"title"`
		Model     *string `json:"model"`
		UpdatedAt string  `json:"updated_at"`
	}
	str := func(s string) *string { return &s }
	tests := []struct {
		name         string
		patch        map[string]any
		title, model *string // the fields the event must carry
	}{
		{"rename", map[string]any{"title": "Renamed"}, str("Renamed"), nil},
		{"model", map[string]any{"model": "demo"}, nil, str("demo")},
		{"both", map[string]any{"title": "Both", "model": ""}, str("Both"), str("")},
		{"same title", map[string]any{"title": "Both"}, nil, nil},
		{"clear the title", map[string]any{"title": ""}, str(""), nil},
		{"nothing", map[string]any{}, nil, nil},
	}
	seq := e.Seq
	for _, tc := range tests {
		var got lcSessionJSON
		if c := lcCall(t, "PATCH", base+"/api/sessions/"+created.ID, tc.patch, &got); c != http.StatusOK {
			t.Fatalf("%s: patch %d", tc.name, c)
		}
		e := tab.next(t, "session.updated after "+tc.name)
		if e.Type != event.SessionUpdated || e.RunID != "" || e.SessionID != created.ID || e.Seq != seq+1 {
			t.Fatalf("%s: envelope %+v (seq after %d)", tc.name, e, seq)
		}
		seq = e.Seq
		u := decodeAs[updated](t, e)
		if u.ID != created.ID || u.UpdatedAt != got.UpdatedAt {
			t.Errorf("%s: id %q updated_at %q, want %q %q", tc.name, u.ID, u.UpdatedAt, created.ID, got.UpdatedAt)
		}
		if (u.Title == nil) != (tc.title == nil) || (u.Title != nil && *u.Title != *tc.title) {
			t.Errorf("%s: title %v, want %v (payload %s)", tc.name, u.Title, tc.title, e.Payload)
		}
		if (u.Model == nil) != (tc.model == nil) || (u.Model != nil && *u.Model != *tc.model) {
			t.Errorf("%s: model %v, want %v (payload %s)", tc.name, u.Model, tc.model, e.Payload)
		}
	}
	// A refused patch changes nothing and announces nothing.
	if c := lcCall(t, "PATCH", base+"/api/sessions/"+created.ID, map[string]any{"title": "a\nb"}, nil); c != http.StatusBadRequest {
		t.Fatalf("bad title: %d", c)
	}

	if c := lcCall(t, "DELETE", base+"/api/sessions/"+created.ID, nil, nil); c != http.StatusNoContent {
		t.Fatalf("delete: %d", c)
	}
	e = tab.next(t, "session.deleted")
	if e.Type != event.SessionDeleted || e.RunID != "" || e.SessionID != created.ID || e.Seq != seq+1 {
		t.Fatalf("deleted envelope: %+v (seq after %d)", e, seq)
	}
	if d := decodeAs[struct {
		ID string `json:"id"`
	}](t, e); d.ID != created.ID {
		t.Fatalf("session.deleted id %q", d.ID)
	}
	tomb := e.ID

	// Reconnecting from the list's cursor replays what is left: the
	// deleted session's tombstone, nothing of what it erased.
	again := openLifecycle(t, fmt.Sprintf("%s/api/events?after=%d", base, list.LastEventID), nil)
	if e := again.next(t, "the replayed tombstone"); e.ID != tomb {
		t.Fatalf("replay after %d: %s id %d, want only the tombstone %d", list.LastEventID, e.Type, e.ID, tomb)
	}
}

func TestSessionStreamCarriesItsLifecycle(t *testing.T) {
	base := newLifecycleServer(t)
	var a, b lcSessionJSON
	lcCall(t, "POST", base+"/api/sessions", nil, &a)
	lcCall(t, "POST", base+"/api/sessions", nil, &b)

	st := openLifecycle(t, base+"/api/sessions/"+a.ID+"/events", nil)
	if e := st.next(t, "session.created"); e.Type != event.SessionCreated || e.SessionID != a.ID {
		t.Fatalf("first event of a's stream: %+v", e)
	}
	lcCall(t, "PATCH", base+"/api/sessions/"+b.ID, map[string]any{"title": "Other"}, nil)
	lcCall(t, "PATCH", base+"/api/sessions/"+a.ID, map[string]any{"title": "Mine"}, nil)
	e := st.next(t, "a's session.updated")
	if e.Type != event.SessionUpdated || e.SessionID != a.ID {
		t.Fatalf("a's stream carried %s of %s", e.Type, e.SessionID)
	}
	mid := e.ID
	// A resumed stream starts after the cursor.
	resumed := openLifecycle(t, base+"/api/sessions/"+a.ID+"/events", map[string]string{"Last-Event-ID": fmt.Sprint(mid - 1)})
	if e := resumed.next(t, "the event after the cursor"); e.ID != mid {
		t.Fatalf("resume after %d: id %d", mid-1, e.ID)
	}

	// The transcript folds runs only: lifecycle events make no items.
	var msgs struct {
		Items       []json.RawMessage `json:"items"`
		LastEventID int64             `json:"last_event_id"`
	}
	lcCall(t, "GET", base+"/api/sessions/"+a.ID+"/messages", nil, &msgs)
	if len(msgs.Items) != 0 || msgs.LastEventID < mid {
		t.Fatalf("messages of a session without runs: %d items, cursor %d (want ≥ %d)", len(msgs.Items), msgs.LastEventID, mid)
	}

	lcCall(t, "DELETE", base+"/api/sessions/"+a.ID, nil, nil)
	e = st.next(t, "session.deleted")
	if e.Type != event.SessionDeleted {
		t.Fatalf("got %s, want session.deleted", e.Type)
	}
	if !st.ended(t) {
		t.Fatal("the session stream stayed open after session.deleted")
	}
	tomb := e.ID

	// After the delete: a cursor before the tombstone gets it, then the end;
	// one at or past it, and a session that never existed, get 404.
	late := openLifecycle(t, base+"/api/sessions/"+a.ID+"/events?after="+fmt.Sprint(mid), nil)
	if e := late.next(t, "the tombstone"); e.ID != tomb || !late.ended(t) {
		t.Fatalf("late stream: %+v", e)
	}
	for _, tc := range []struct {
		name, url string
		status    int
	}{
		{"session stream at the tombstone", "/api/sessions/" + a.ID + "/events?after=" + fmt.Sprint(tomb), http.StatusNotFound},
		{"session stream of an unknown session", "/api/sessions/ses_01m7xycjnkfry445nd4sfrf5m3/events", http.StatusNotFound},
		{"tab stream of a deleted session", "/api/events?session=" + a.ID, http.StatusOK},
		{"tab stream of an unknown session", "/api/events?session=ses_01m7xycjnkfry445nd4sfrf5m3", http.StatusNotFound},
		{"the other session", "/api/sessions/" + b.ID + "/events", http.StatusOK},
	} {
		if s := openLifecycle(t, base+tc.url, nil); s.status != tc.status {
			t.Errorf("%s: %d, want %d", tc.name, s.status, tc.status)
		} else {
			s.close()
		}
	}
	// A tab still showing the deleted session hears of it like every tab.
	tab := openLifecycle(t, base+"/api/events?session="+a.ID+"&after="+fmt.Sprint(mid), nil)
	if e := tab.next(t, "the tombstone on the tab stream"); e.ID != tomb {
		t.Fatalf("tab stream of the deleted session: %s id %d, want the tombstone %d", e.Type, e.ID, tomb)
	}
}
