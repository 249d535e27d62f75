package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/identity"
	"github.com/caduceus-dev/caduceus/internal/journal"
	"github.com/caduceus-dev/caduceus/internal/netlimit"
	"github.com/caduceus-dev/caduceus/internal/store"
)

func (a *API) sessionEvents(w http.ResponseWriter, r *http.Request) {
	sid, ok := pathID(w, r, "ses", "session")
	if !ok {
		return
	}
	_, err := a.st.GetSession(r.Context(), sid)
	var tomb int64
	if errors.Is(err, store.ErrNotFound) {
		tomb, err = a.tombstone(r.Context(), sid)
		if err == nil && tomb == 0 {
			err = store.ErrNotFound
		}
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	cursor, ok := streamCursor(w, r)
	if !ok {
		return
	}
	// A deleted session's stream replays what is left of it (its
	// session.deleted) to a client that had not seen it; after that there
	// is nothing to wait for.
	f := journal.Filter{SessionID: sid}
	var lead []event.Event
	if tomb != 0 && cursor >= tomb {
		// Past the tombstone there is nothing more, unless the cursor is
		// past the whole journal: then the client resyncs and replays.
		rs, err := a.resyncIfAhead(r.Context(), f, cursor)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		if rs == nil {
			writeError(w, http.StatusNotFound, control.CodeNotFound, "session deleted", nil)
			return
		}
		lead, cursor = []event.Event{*rs}, 0
	}
	a.stream(w, r, f, cursor, lead, func(e event.Event) bool {
		return e.Type == event.SessionDeleted && e.SessionID == sid
	})
}

// resyncIfAhead returns the resync event a stream owes a client whose
// cursor is past the end of the journal (a client of another database, or
// of one restored from an older backup), or nil. The hub says the same for
// live streams; a stream that is already complete (a finished run, a
// deleted session) never reaches the hub with such a cursor, so it must
// answer here, and must not leave the check to a later read the journal
// may have grown past.
func (a *API) resyncIfAhead(ctx context.Context, f journal.Filter, cursor int64) (*event.Event, error) {
	if cursor <= 0 {
		return nil, nil
	}
	last, err := a.st.LastEventID(ctx)
	if err != nil || cursor <= last {
		return nil, err
	}
	p, err := json.Marshal(event.ResyncPayload{Reason: "cursor_ahead", Cursor: cursor, LastID: last})
	if err != nil {
		return nil, err
	}
	return &event.Event{
		SessionID: f.SessionID, RunID: f.RunID, Type: event.Resync,
		TS: event.Time{Time: time.Now().UTC()}, Payload: p,
	}, nil
}

// tombstone returns the id of the session.deleted event a deleted session
// left, or 0. Call it only for a session that is gone: it reads what is
// left of the session's journal.
func (a *API) tombstone(ctx context.Context, sid string) (int64, error) {
	evs, err := a.st.Events(ctx, store.EventQuery{SessionID: sid, Types: []event.Type{event.SessionDeleted}, Limit: 1})
	if err != nil || len(evs) == 0 {
		return 0, err
	}
	return evs[0].ID, nil
}

// tabEvents is the one stream a browser tab holds: every event of the
// session on screen (if any) and, from every session, the lifecycle events
// that keep a sidebar and a "needs you" list current. Browsers allow about
// six connections per origin, so a tab must not hold one per panel.
func (a *API) tabEvents(w http.ResponseWriter, r *http.Request) {
	f := journal.Filter{Also: LifecycleTypes()}
	if v := r.URL.Query().Get("session"); v != "" {
		if !id.Valid("ses", v) {
			writeError(w, http.StatusNotFound, control.CodeNotFound, "no such session", nil)
			return
		}
		// A session deleted since the tab opened it is still accepted: the
		// tab then hears session.deleted like every other tab, instead of a
		// refusal it has to interpret.
		_, err := a.st.GetSession(r.Context(), v)
		if errors.Is(err, store.ErrNotFound) {
			var tomb int64
			if tomb, err = a.tombstone(r.Context(), v); err == nil && tomb == 0 {
				err = store.ErrNotFound
			}
		}
		if err != nil {
			a.fail(w, r, err)
			return
		}
		f.SessionID = v
	}
	cursor, ok := streamCursor(w, r)
	if !ok {
		return
	}
	a.stream(w, r, f, cursor, nil, nil)
}

// LifecycleTypes are the event types GET /api/events carries from every
// session, and the project events.
func LifecycleTypes() []event.Type {
	return append([]event.Type{event.RunQueued, event.RunStarted, event.RunStatus, event.RunDone, event.TitleUpdated,
		event.ApprovalRequested, event.ApprovalResolved, event.ClarifyRequested, event.ClarifyResolved},
		append(event.SessionTypes(), event.ProjectTypes()...)...)
}

// runEvents streams one run and ends after its terminal event; a finished
// run replays its history and terminal state, then the stream closes.
func (a *API) runEvents(w http.ResponseWriter, r *http.Request) {
	rid, ok := pathID(w, r, "run", "run")
	if !ok {
		return
	}
	ru, err := a.st.GetRun(r.Context(), rid)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	cursor, ok := streamCursor(w, r)
	if !ok {
		return
	}
	f := journal.Filter{RunID: rid}
	var lead []event.Event
	if ru.Status.Terminal() {
		last, err := a.st.RunCursor(r.Context(), rid)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		if cursor >= last {
			rs, err := a.resyncIfAhead(r.Context(), f, cursor)
			if err != nil {
				a.fail(w, r, err)
				return
			}
			if rs == nil {
				cursor = -1 // nothing left: stream nothing and close
			} else {
				lead, cursor = []event.Event{*rs}, 0 // replay the whole run
			}
		}
	}
	a.stream(w, r, f, cursor, lead, func(e event.Event) bool {
		return e.Terminal && e.RunID == rid
	})
}

// cursorOf reads the resume cursor: Last-Event-ID (what EventSource sends on
// reconnect) wins over ?after=.
func cursorOf(r *http.Request) (int64, error) {
	v := r.Header.Get("Last-Event-ID")
	if v == "" {
		v = r.URL.Query().Get("after")
	}
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, errors.New("bad cursor")
	}
	return n, nil
}

func streamCursor(w http.ResponseWriter, r *http.Request) (int64, bool) {
	cursor, err := cursorOf(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, control.CodeInvalidCursor, "the cursor must be a non-negative event id", nil)
		return 0, false
	}
	return cursor, true
}

// stream writes Server-Sent Events: every event after the cursor, then live
// ones, each with its ID as the SSE id. All events ready at a wake-up are
// written with one flush. A comment line keeps idle connections alive.
// A negative cursor means the stream is already complete: it only says so
// and closes. Events in lead (a resync) are written first. The stream also
// ends after an event for which last (if set) holds.
func (a *API) stream(w http.ResponseWriter, r *http.Request, f journal.Filter, cursor int64, lead []event.Event, last func(event.Event) bool) {
	key := netlimit.Key(r.RemoteAddr)
	if !a.streams.Acquire(key) {
		n := a.streams.Limit()
		writeError(w, http.StatusTooManyRequests, CodeTooManyStreams,
			fmt.Sprintf("this client has %d event streams open, the most one address may hold; close one (a browser tab holds one)", n),
			map[string]any{"limit": n})
		return
	}
	defer a.streams.Release(key)
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)

	out := &sse{w: w, rc: rc, timeout: a.opt.StreamWriteTimeout}
	defer func() { a.reclaim.ended(out.written) }()
	out.buf.WriteString("retry: 1000\n: connected\n\n")
	for _, e := range lead {
		writeEvent(&out.buf, e)
	}
	if cursor < 0 {
		out.buf.WriteString(": run finished; nothing after this cursor\n\n")
		out.flush()
		return
	}
	sub := a.hub.Subscribe(f, cursor)
	defer sub.Close()
	kind := streamKind(f)
	a.opt.Streams.StreamOpened(kind)
	defer a.opt.Streams.StreamClosed(kind)
	if !out.flush() {
		return
	}
	ctx := r.Context()
	who, signed := principal(r)
	checked := time.Now()
	for {
		// Whoever opened the stream is asked again once per heartbeat,
		// busy or idle: a disabled account, a revoked token or an ended
		// session closes it (the client's reconnect then meets the 401).
		if signed && time.Since(checked) >= a.opt.Heartbeat {
			checked = time.Now()
			_, err := a.opt.Identity.Recheck(ctx, who)
			switch {
			case errors.Is(err, identity.ErrEnded):
				out.buf.WriteString(": signed out\n\n")
				out.flush()
				return
			case err != nil && ctx.Err() == nil:
				// The store is what failed, not the credential: the next
				// heartbeat asks again.
				a.log.Warn("stream: sign-in check failed", "err", err)
			}
		}
		wait, cancel := context.WithTimeout(ctx, a.opt.Heartbeat)
		// Next returns at most one page of the history (500 events or
		// 64 KiB of payload), and is called again only once the page is
		// written: a slow client is never read ahead of.
		evs, err := sub.Next(wait)
		cancel()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, journal.ErrHubClosed) {
				return
			}
			if errors.Is(err, context.DeadlineExceeded) {
				out.buf.WriteString(": ping\n\n")
				if !out.flush() {
					return
				}
				continue
			}
			a.log.Warn("stream read failed", "err", err)
			return
		}
		end := false
		for _, e := range evs {
			if !out.event(e) {
				return
			}
			end = end || (last != nil && last(e))
		}
		if !out.flush() || end {
			return
		}
	}
}

// streamKind names a stream for the subscriber gauge.
func streamKind(f journal.Filter) string {
	switch {
	case f.RunID != "":
		return "run"
	case f.Also != nil:
		return "tab"
	}
	return "session"
}

func writeEvent(buf *bytes.Buffer, e event.Event) {
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	// A resync carries no id: it must not move the client's cursor.
	if e.Type != event.Resync {
		buf.WriteString("id: ")
		buf.WriteString(strconv.FormatInt(e.ID, 10))
		buf.WriteByte('\n')
	}
	buf.WriteString("data: ")
	buf.Write(b) // JSON has no raw newlines
	buf.WriteString("\n\n")
}

// sseChunk is how much encoded stream is gathered before it is written: a
// page of history goes out in pieces of about this size, each bounded by
// the write deadline. sseKeep is the most buffer a stream keeps between
// writes: one that a large event grew is let go rather than held for the
// life of the connection.
const (
	sseChunk = 32 << 10
	sseKeep  = 64 << 10
)

// sse is the writing end of one event stream.
type sse struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	buf     bytes.Buffer
	written int64 // bytes handed to the connection
}

// event adds e, writing what is gathered once it reaches sseChunk.
func (s *sse) event(e event.Event) bool {
	writeEvent(&s.buf, e)
	if s.buf.Len() < sseChunk {
		return true
	}
	return s.write()
}

// write sends what is gathered, bounded by a deadline so a stalled client
// cannot pin the handler, its subscription and its buffers.
func (s *sse) write() bool {
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.timeout))
	n, err := s.w.Write(s.buf.Bytes())
	s.written += int64(n)
	s.buf.Reset()
	if s.buf.Cap() > sseKeep {
		s.buf = bytes.Buffer{}
	}
	return err == nil
}

// flush sends what is gathered and flushes it to the client.
func (s *sse) flush() bool {
	return s.write() && s.rc.Flush() == nil
}
