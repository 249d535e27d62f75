package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/api"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// Bad cursors and unknown streams are refused with a JSON error before
// the stream starts.
func TestStreamErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.session(t)
	gone := "ses_00000000000000000000000000"
	tests := []struct {
		name, path string
		header     []string
		status     int
		code       string
	}{
		{"session: malformed id", "/api/sessions/x/events", nil, 404, "not_found"},
		{"session: unknown", "/api/sessions/" + gone + "/events", nil, 404, "not_found"},
		{"run: malformed id", "/api/runs/x/events", nil, 404, "not_found"},
		{"run: unknown", "/api/runs/" + noRun + "/events", nil, 404, "not_found"},
		{"tab: malformed session", "/api/events?session=x", nil, 404, "not_found"},
		{"tab: unknown session", "/api/events?session=" + gone, nil, 404, "not_found"},
		{"after not a number", "/api/sessions/" + s.ID + "/events?after=abc", nil, 400, "invalid_cursor"},
		{"after negative", "/api/sessions/" + s.ID + "/events?after=-1", nil, 400, "invalid_cursor"},
		{"Last-Event-ID not a number", "/api/sessions/" + s.ID + "/events", []string{"Last-Event-ID", "x1"}, 400, "invalid_cursor"},
		{"bad Last-Event-ID wins over a good after", "/api/events?after=1", []string{"Last-Event-ID", "1.5"}, 400, "invalid_cursor"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, r := e.openSSE(t, tc.path, tc.header...)
			if st != nil {
				t.Fatal("a stream opened")
			}
			r.want(t, tc.status, tc.code)
		})
	}
}

// A session stream replays what is after the cursor, in order, each event
// with its id as the SSE id, then carries live events. Last-Event-ID (what
// EventSource sends on reconnect) wins over ?after=.
func TestSessionStreamReplayAndResume(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.session(t)
	e.send(t, s.ID, "one")
	other := e.session(t)
	e.send(t, other.ID, "elsewhere")
	e.send(t, s.ID, "two")

	all, r := e.openSSE(t, "/api/sessions/"+s.ID+"/events")
	for k, want := range map[string]string{"Content-Type": "text/event-stream", "Cache-Control": "no-store", "X-Accel-Buffering": "no"} {
		if got := r.hdr.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	replay := all.until(t, func(ev event.Event) bool {
		return ev.Type == event.MessageUser && strings.Contains(string(ev.Payload), "two")
	})
	for i, f := range replay {
		if f.ev.SessionID != s.ID {
			t.Fatalf("event of another session: %+v", f.ev)
		}
		if f.id != strconv.FormatInt(f.ev.ID, 10) {
			t.Fatalf("SSE id %q for event %d", f.id, f.ev.ID)
		}
		if i > 0 && f.ev.ID <= replay[i-1].ev.ID {
			t.Fatalf("ids out of order: %d after %d", f.ev.ID, replay[i-1].ev.ID)
		}
	}
	if want := []event.Type{event.SessionCreated, event.RunQueued, event.MessageUser, event.TitleUpdated, event.RunQueued, event.MessageUser}; !slices.Equal(types(replay), want) {
		t.Fatalf("replay %v, want %v", types(replay), want)
	}
	all.quiet(t, 50*time.Millisecond)

	mid := replay[3].ev.ID // after the title
	tests := []struct {
		name   string
		query  string
		header []string
		from   int // index in replay of the first event expected
	}{
		{"after", "?after=" + fmt.Sprint(mid), nil, 4},
		{"Last-Event-ID", "", []string{"Last-Event-ID", fmt.Sprint(mid)}, 4},
		{"Last-Event-ID wins", "?after=0", []string{"Last-Event-ID", fmt.Sprint(mid)}, 4},
		{"after 0 is everything", "?after=0", nil, 0},
		{"at the end", "?after=" + fmt.Sprint(replay[len(replay)-1].ev.ID), nil, len(replay)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, _ := e.openSSE(t, "/api/sessions/"+s.ID+"/events"+tc.query, tc.header...)
			for _, want := range replay[tc.from:] {
				if got := st.next(t); got.ev.ID != want.ev.ID {
					t.Fatalf("got event %d (%s), want %d (%s)", got.ev.ID, got.ev.Type, want.ev.ID, want.ev.Type)
				}
			}
			st.quiet(t, 30*time.Millisecond)
		})
	}

	// Live: a new message reaches the open stream, the other session's not.
	e.send(t, other.ID, "still elsewhere")
	e.send(t, s.ID, "three")
	live := all.until(t, func(ev event.Event) bool { return ev.Type == event.MessageUser })
	if len(live) != 2 || live[0].ev.Type != event.RunQueued || !strings.Contains(string(live[1].ev.Payload), "three") {
		t.Fatalf("live events %v", types(live))
	}
}

// A cursor ahead of the journal (a client of another database, say) gets
// a resync event without an id, so it must not move the client's cursor.
// Every stream says so, whether it would go on live or is already
// complete (a finished run, a deleted session): after the resync it
// replays from the start, and a complete one then closes.
func TestStreamResyncOnCursorAhead(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.session(t)
	liveRun := e.send(t, s.ID, "hi")
	done := e.session(t)
	doneRun := e.send(t, done.ID, "bye")
	e.req("POST", "/api/runs/"+doneRun.ID+"/cancel", "").want(t, 200, "")
	gone := e.session(t)
	e.req("DELETE", "/api/sessions/"+gone.ID, "").want(t, 204, "")
	ahead := e.lastID() + 1000
	for _, tc := range []struct {
		path   string
		closes event.Type // the stream replays up to this event and ends; "" stays open
	}{
		{"/api/sessions/" + s.ID + "/events", ""},
		{"/api/events", ""},
		{"/api/events?session=" + s.ID, ""},
		{"/api/runs/" + liveRun.ID + "/events", ""},
		{"/api/runs/" + doneRun.ID + "/events", event.RunDone},
		{"/api/sessions/" + gone.ID + "/events", event.SessionDeleted},
	} {
		for _, how := range []string{"Last-Event-ID", "after"} {
			t.Run(tc.path+" "+how, func(t *testing.T) {
				path, hdr := tc.path, []string{"Last-Event-ID", fmt.Sprint(ahead)}
				if how == "after" {
					sep := "?"
					if strings.Contains(path, "?") {
						sep = "&"
					}
					path, hdr = path+sep+"after="+fmt.Sprint(ahead), nil
				}
				st, r := e.openSSE(t, path, hdr...)
				if st == nil {
					t.Fatalf("no stream: %d %s", r.code, r.body)
				}
				f := st.next(t)
				if f.ev.Type != event.Resync || f.id != "" {
					t.Fatalf("first frame %s with id %q, want resync without id", f.ev.Type, f.id)
				}
				var p event.ResyncPayload
				if err := json.Unmarshal(f.ev.Payload, &p); err != nil || p.Reason != "cursor_ahead" || p.Cursor != ahead || p.LastID != e.lastID() {
					t.Fatalf("resync payload %s", f.ev.Payload)
				}
				if tc.closes == "" {
					if g := st.next(t); g.id == "" || g.ev.Type == event.Resync {
						t.Fatalf("after the resync: %s with id %q, want a replayed event", g.ev.Type, g.id)
					}
					return
				}
				rest := st.rest(t)
				if len(rest) == 0 || rest[len(rest)-1].ev.Type != tc.closes {
					t.Fatalf("replay after the resync %v, want it to end with %s", types(rest), tc.closes)
				}
				if rest[0].ev.Seq != 1 && rest[0].ev.Type != event.SessionDeleted {
					t.Fatalf("replay starts at seq %d (%s), want the start", rest[0].ev.Seq, rest[0].ev.Type)
				}
			})
		}
	}
}

// /api/events carries every session's lifecycle events, and everything of
// the session named by ?session=.
func TestTabStreamFilter(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a, b := e.session(t), e.session(t)
	e.send(t, a.ID, "to a")
	e.send(t, b.ID, "to b")
	isLifecycle := func(typ event.Type) bool { return slices.Contains(api.LifecycleTypes(), typ) }

	tests := []struct {
		name  string
		query string
		keep  func(event.Event) bool
	}{
		{"no session", "", func(ev event.Event) bool { return isLifecycle(ev.Type) }},
		{"session a", "?session=" + a.ID, func(ev event.Event) bool { return ev.SessionID == a.ID || isLifecycle(ev.Type) }},
	}
	evs, err := e.st.Events(e.ctx, store.EventQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var want []int64
			for _, ev := range evs {
				if tc.keep(ev) {
					want = append(want, ev.ID)
				}
			}
			if len(want) == 0 || len(want) == len(evs) {
				t.Fatalf("the filter should keep some of %d events, keeps %d", len(evs), len(want))
			}
			st, _ := e.openSSE(t, "/api/events"+tc.query)
			var got []int64
			for range want {
				got = append(got, st.next(t).ev.ID)
			}
			st.quiet(t, 30*time.Millisecond)
			if !slices.Equal(got, want) {
				t.Fatalf("ids %v, want %v", got, want)
			}
		})
	}
}

// A run stream replays a finished run and closes after its terminal
// event; from a cursor at its end it closes at once; a live run's stream
// ends when the run does.
func TestRunStream(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.session(t)
	ru := e.send(t, s.ID, "hi")
	live, _ := e.openSSE(t, "/api/runs/"+ru.ID+"/events")
	first := live.until(t, isType(event.MessageUser))
	if first[0].ev.Type != event.RunQueued {
		t.Fatalf("run stream starts with %s", first[0].ev.Type)
	}
	e.req("POST", "/api/runs/"+ru.ID+"/cancel", "").want(t, 200, "")
	rest := live.rest(t)
	if len(rest) == 0 || rest[len(rest)-1].ev.Type != event.RunDone || !rest[len(rest)-1].ev.Terminal {
		t.Fatalf("the live stream ended after %v", types(rest))
	}
	journal := append(first, rest...)
	for _, f := range journal {
		if f.ev.RunID != ru.ID {
			t.Fatalf("event of another run: %+v", f.ev)
		}
	}

	t.Run("replay of a finished run", func(t *testing.T) {
		st, _ := e.openSSE(t, "/api/runs/"+ru.ID+"/events")
		got := st.rest(t)
		if !slices.Equal(types(got), types(journal)) {
			t.Fatalf("replay %v, want %v", types(got), types(journal))
		}
	})
	t.Run("from the middle", func(t *testing.T) {
		st, _ := e.openSSE(t, "/api/runs/"+ru.ID+"/events", "Last-Event-ID", fmt.Sprint(journal[0].ev.ID))
		if got := st.rest(t); !slices.Equal(types(got), types(journal[1:])) {
			t.Fatalf("replay %v, want %v", types(got), types(journal[1:]))
		}
	})
	t.Run("from the end", func(t *testing.T) {
		raw := e.rawStream(t, "/api/runs/"+ru.ID+"/events?after="+fmt.Sprint(journal[len(journal)-1].ev.ID), 0)
		if !strings.Contains(raw, ": run finished") || strings.Contains(raw, "data:") {
			t.Fatalf("stream %q", raw)
		}
	})
}

// An idle stream says it is alive with a comment every heartbeat.
func TestStreamHeartbeat(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withHeartbeat(20*time.Millisecond))
	s := e.session(t)
	raw := e.rawStream(t, "/api/sessions/"+s.ID+"/events", 2)
	if !strings.HasPrefix(raw, "retry: 1000\n: connected\n\n") || strings.Count(raw, ": ping\n\n") < 2 {
		t.Fatalf("stream %q", raw)
	}
}

// rawStream reads path's stream as text until it closes or, when pings is
// above 0, until that many keep-alive comments have arrived.
func (e *env) rawStream(t *testing.T, path string, pings int) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", e.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b strings.Builder
	sc := bufio.NewScanner(res.Body)
	n := 0
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
		if sc.Text() == ": ping" {
			if n++; pings > 0 && n >= pings {
				b.WriteString("\n")
				break
			}
		}
	}
	if ctx.Err() != nil {
		t.Fatalf("the stream neither closed nor pinged: %q", b.String())
	}
	return b.String()
}
