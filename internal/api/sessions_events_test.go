package api_test

// Session lifecycle on the streams, at the handler level: POST, PATCH and
// DELETE /api/sessions journal session.created/updated/deleted, the tab
// stream and the session stream carry them, and a deleted session's stream
// still delivers its session.deleted to a client that had not seen it.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
)

// lcCall sends body (marshalled unless nil) and decodes the answer into
// out (unless nil), returning the status.
func lcCall(t *testing.T, e *env, method, path string, body, out any) int {
	t.Helper()
	raw := ""
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		raw = string(b)
	}
	r := e.req(method, path, raw)
	if out != nil {
		r.decode(t, out)
	}
	return r.code
}

type lcSessionJSON struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Workspace string `json:"workspace"`
	Model     string `json:"model"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

// ended reports whether the server ends the stream without sending more.
func (s *sse) ended(t *testing.T) bool {
	t.Helper()
	return len(s.rest(t)) == 0
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
	e0 := newEnv(t)
	var list struct {
		LastEventID int64 `json:"last_event_id"`
	}
	lcCall(t, e0, "GET", "/api/sessions", nil, &list)
	tab := mustSSE(t, e0, fmt.Sprintf("/api/events?after=%d", list.LastEventID))

	var created lcSessionJSON
	if c := lcCall(t, e0, "POST", "/api/sessions", map[string]string{"title": "First"}, &created); c != http.StatusCreated {
		t.Fatalf("create: %d", c)
	}
	e := tab.next(t).ev
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
		if c := lcCall(t, e0, "PATCH", "/api/sessions/"+created.ID, tc.patch, &got); c != http.StatusOK {
			t.Fatalf("%s: patch %d", tc.name, c)
		}
		e := tab.next(t).ev
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
	if c := lcCall(t, e0, "PATCH", "/api/sessions/"+created.ID, map[string]any{"title": "a\nb"}, nil); c != http.StatusBadRequest {
		t.Fatalf("bad title: %d", c)
	}

	if c := lcCall(t, e0, "DELETE", "/api/sessions/"+created.ID, nil, nil); c != http.StatusNoContent {
		t.Fatalf("delete: %d", c)
	}
	e = tab.next(t).ev
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
	again := mustSSE(t, e0, fmt.Sprintf("/api/events?after=%d", list.LastEventID))
	if e := again.next(t).ev; e.ID != tomb {
		t.Fatalf("replay after %d: %s id %d, want only the tombstone %d", list.LastEventID, e.Type, e.ID, tomb)
	}
}

func TestSessionStreamCarriesItsLifecycle(t *testing.T) {
	e0 := newEnv(t)
	var a, b lcSessionJSON
	lcCall(t, e0, "POST", "/api/sessions", nil, &a)
	lcCall(t, e0, "POST", "/api/sessions", nil, &b)

	st := mustSSE(t, e0, "/api/sessions/"+a.ID+"/events")
	if e := st.next(t).ev; e.Type != event.SessionCreated || e.SessionID != a.ID {
		t.Fatalf("first event of a's stream: %+v", e)
	}
	lcCall(t, e0, "PATCH", "/api/sessions/"+b.ID, map[string]any{"title": "Other"}, nil)
	lcCall(t, e0, "PATCH", "/api/sessions/"+a.ID, map[string]any{"title": "Mine"}, nil)
	e := st.next(t).ev
	if e.Type != event.SessionUpdated || e.SessionID != a.ID {
		t.Fatalf("a's stream carried %s of %s", e.Type, e.SessionID)
	}
	mid := e.ID
	// A resumed stream starts after the cursor.
	resumed := mustSSE(t, e0, "/api/sessions/"+a.ID+"/events", "Last-Event-ID", fmt.Sprint(mid-1))
	if e := resumed.next(t).ev; e.ID != mid {
		t.Fatalf("resume after %d: id %d", mid-1, e.ID)
	}

	// The transcript folds runs only: lifecycle events make no items.
	var msgs struct {
		Items       []json.RawMessage `json:"items"`
		LastEventID int64             `json:"last_event_id"`
	}
	lcCall(t, e0, "GET", "/api/sessions/"+a.ID+"/messages", nil, &msgs)
	if len(msgs.Items) != 0 || msgs.LastEventID < mid {
		t.Fatalf("messages of a session without runs: %d items, cursor %d (want ≥ %d)", len(msgs.Items), msgs.LastEventID, mid)
	}

	lcCall(t, e0, "DELETE", "/api/sessions/"+a.ID, nil, nil)
	e = st.next(t).ev
	if e.Type != event.SessionDeleted {
		t.Fatalf("got %s, want session.deleted", e.Type)
	}
	if !st.ended(t) {
		t.Fatal("the session stream stayed open after session.deleted")
	}
	tomb := e.ID

	// After the delete: a cursor before the tombstone gets it, then the end;
	// one at or past it, and a session that never existed, get 404.
	late := mustSSE(t, e0, "/api/sessions/"+a.ID+"/events?after="+fmt.Sprint(mid))
	if e := late.next(t).ev; e.ID != tomb || !late.ended(t) {
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
		if _, r := e0.openSSE(t, tc.url); r.code != tc.status {
			t.Errorf("%s: %d, want %d", tc.name, r.code, tc.status)
		}
	}
	// A tab still showing the deleted session hears of it like every tab.
	tab := mustSSE(t, e0, "/api/events?session="+a.ID+"&after="+fmt.Sprint(mid))
	if e := tab.next(t).ev; e.ID != tomb {
		t.Fatalf("tab stream of the deleted session: %s id %d, want the tombstone %d", e.Type, e.ID, tomb)
	}
}

// mustSSE opens a stream that must answer 200.
func mustSSE(t *testing.T, e *env, path string, header ...string) *sse {
	t.Helper()
	s, r := e.openSSE(t, path, header...)
	if s == nil {
		t.Fatalf("GET %s: %d %s", path, r.code, r.body)
	}
	return s
}
