package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/journal"
)

func (a *API) sessionEvents(w http.ResponseWriter, r *http.Request) {
	sid, ok := pathID(w, r, "ses", "session")
	if !ok {
		return
	}
	if _, err := a.st.GetSession(r.Context(), sid); err != nil {
		a.fail(w, r, err)
		return
	}
	cursor, ok := streamCursor(w, r)
	if !ok {
		return
	}
	a.stream(w, r, journal.Filter{SessionID: sid}, cursor, "")
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
		if _, err := a.st.GetSession(r.Context(), v); err != nil {
			a.fail(w, r, err)
			return
		}
		f.SessionID = v
	}
	cursor, ok := streamCursor(w, r)
	if !ok {
		return
	}
	a.stream(w, r, f, cursor, "")
}

// LifecycleTypes are the event types GET /api/events carries from every
// session.
func LifecycleTypes() []event.Type {
	return []event.Type{event.RunQueued, event.RunStarted, event.RunStatus, event.RunDone, event.TitleUpdated,
		event.ApprovalRequested, event.ApprovalResolved, event.ClarifyRequested, event.ClarifyResolved}
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
	end := rid
	if ru.Status.Terminal() {
		last, err := a.st.RunCursor(r.Context(), rid)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		if cursor >= last {
			end = "" // nothing left: stream nothing and close
			cursor = -1
		}
	}
	a.stream(w, r, journal.Filter{RunID: rid}, cursor, end)
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
// and closes.
func (a *API) stream(w http.ResponseWriter, r *http.Request, f journal.Filter, cursor int64, endRun string) {
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)

	var buf bytes.Buffer
	buf.WriteString("retry: 1000\n: connected\n\n")
	if cursor < 0 {
		buf.WriteString(": run finished; nothing after this cursor\n\n")
		a.send(w, rc, &buf)
		return
	}
	sub := a.hub.Subscribe(f, cursor)
	defer sub.Close()
	if !a.send(w, rc, &buf) {
		return
	}
	ctx := r.Context()
	for {
		wait, cancel := context.WithTimeout(ctx, a.opt.Heartbeat)
		evs, err := sub.Next(wait)
		cancel()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, journal.ErrHubClosed) {
				return
			}
			if errors.Is(err, context.DeadlineExceeded) {
				buf.WriteString(": ping\n\n")
				if !a.send(w, rc, &buf) {
					return
				}
				continue
			}
			a.log.Warn("stream read failed", "err", err)
			return
		}
		end := false
		for _, e := range evs {
			writeEvent(&buf, e)
			end = end || (endRun != "" && e.Terminal && e.RunID == endRun)
		}
		if !a.send(w, rc, &buf) || end {
			return
		}
	}
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

// send writes and flushes buf, bounded by a deadline so a stalled client
// cannot pin the handler.
func (a *API) send(w http.ResponseWriter, rc *http.ResponseController, buf *bytes.Buffer) bool {
	_ = rc.SetWriteDeadline(time.Now().Add(30 * time.Second))
	_, err := w.Write(buf.Bytes())
	buf.Reset()
	if err == nil {
		err = rc.Flush()
	}
	return err == nil
}
