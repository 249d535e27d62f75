package api

import (
	"net/http"
	"slices"
	"strconv"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/api"
	"github.com/caduceus-dev/caduceus/internal/event"
)

// TestTabStream checks GET /api/events, the one stream a browser tab
// holds: every event of the session on screen, only the lifecycle of the
// others, resumable from a cursor like the other streams.
func TestTabStream(t *testing.T) {
	t.Parallel()
	srv := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("hello there"))))
	var list struct {
		LastEventID int64 `json:"last_event_id"`
	}
	e2etest.Do(t, "GET", srv.URL+"/api/sessions", nil, &list)
	start := list.LastEventID

	focus, other := srv.NewSession(t), srv.NewSession(t)
	st := e2etest.OpenStream(t, srv.URL+"/api/events?session="+focus+"&after="+strconv.FormatInt(start, 10), nil)
	defer st.Close()
	r1 := srv.Send(t, other, "first")
	srv.WaitStatus(t, r1.ID, "completed")
	r2 := srv.Send(t, focus, "second")
	seen := st.Until(t, "the focused run's end", e2etest.IsDone(r2.ID))

	lifecycle := api.LifecycleTypes()
	var fromOther []event.Type
	for _, e := range seen {
		if e.ID <= start {
			t.Fatalf("event %d at or before the cursor %d", e.ID, start)
		}
		if e.SessionID == other {
			fromOther = append(fromOther, e.Type)
			if !slices.Contains(lifecycle, e.Type) {
				t.Errorf("other session's %s reached the tab stream", e.Type)
			}
		}
	}
	for _, want := range []event.Type{event.RunQueued, event.RunStarted, event.TitleUpdated, event.RunDone} {
		if !slices.Contains(fromOther, want) {
			t.Errorf("other session's %s missing from the tab stream (got %v)", want, fromOther)
		}
	}
	focused := srv.Journal(t, r2.ID) // the focused session has this one run
	var got []int64
	for _, e := range seen {
		if e.SessionID == focus && e.RunID != "" { // its session.created has no run
			got = append(got, e.ID)
		}
	}
	var want []int64
	for _, e := range focused {
		want = append(want, e.ID)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("focused session: stream ids %v, journal ids %v", got, want)
	}

	// Resume from the middle: the rest comes once, nothing before it.
	mid := seen[len(seen)/2].ID
	st2 := e2etest.OpenStream(t, srv.URL+"/api/events?session="+focus, map[string]string{"Last-Event-ID": strconv.FormatInt(mid, 10)})
	defer st2.Close()
	rest := st2.Until(t, "the focused run's end again", e2etest.IsDone(r2.ID))
	if rest[0].ID <= mid || rest[len(rest)-1].ID != seen[len(seen)-1].ID {
		t.Fatalf("resume after %d: got ids %d..%d, want up to %d", mid, rest[0].ID, rest[len(rest)-1].ID, seen[len(seen)-1].ID)
	}

	for _, tc := range []struct {
		name, query string
		status      int
	}{
		{"malformed session", "?session=nope", http.StatusNotFound},
		{"unknown session", "?session=ses_01m7xycjnkfry445nd4sfrf5m3", http.StatusNotFound},
		{"bad cursor", "?after=-1", http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if c := e2etest.Do(t, "GET", srv.URL+"/api/events"+tc.query, nil, nil); c != tc.status {
				t.Fatalf("status %d, want %d", c, tc.status)
			}
		})
	}
}
