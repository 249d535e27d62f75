package api

// The operator's console: the server's log (h16-ops).

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/logring"
)

// CodeLogsUnavailable: this server keeps no log lines in memory.
const CodeLogsUnavailable = "logs_unavailable"

// Bounds of GET /api/logs.
const (
	defaultLogLines = 500
	maxLogLines     = 5000
	maxLogQuery     = 500
)

func (a *API) listLogs(w http.ResponseWriter, r *http.Request) {
	if a.opt.Logs == nil {
		writeError(w, http.StatusServiceUnavailable, CodeLogsUnavailable, "this server keeps no log lines in memory", nil)
		return
	}
	q := r.URL.Query()
	level, err := logring.ParseLevel(q.Get("level"))
	if err != nil {
		writeError(w, http.StatusBadRequest, control.CodeInvalidInput, err.Error(), nil)
		return
	}
	text := q.Get("q")
	if len([]rune(text)) > maxLogQuery {
		writeError(w, http.StatusBadRequest, control.CodeInvalidInput, fmt.Sprintf("q holds at most %d characters", maxLogQuery), nil)
		return
	}
	limit := defaultLogLines
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxLogLines {
			writeError(w, http.StatusBadRequest, control.CodeInvalidInput, fmt.Sprintf("limit must be an integer from 1 to %d", maxLogLines), nil)
			return
		}
		limit = n
	}
	after, err := cursorOf(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, control.CodeInvalidCursor, "after must be a non-negative line id", nil)
		return
	}
	follow, ok := boolParam(w, q.Get("follow"), "follow")
	if !ok {
		return
	}
	lq := logring.Query{Min: level, Text: text, After: after, Limit: limit}
	lines, last := a.opt.Logs.Lines(lq)
	if lines == nil {
		lines = []logring.Entry{}
	}
	if !follow {
		writeJSON(w, http.StatusOK, map[string]any{"lines": lines, "last": last})
		return
	}
	out, release, ok := a.openSSE(w, r)
	if !ok {
		return
	}
	defer release()
	ctx := r.Context()
	signedIn := a.signedInCheck(r)
	for {
		for _, e := range lines {
			writeSSE(&out.buf, "line", strconv.FormatInt(e.ID, 10), e)
		}
		if !out.flush() {
			return
		}
		a.opt.Logs.Wait(ctx, last, a.opt.Heartbeat)
		if ctx.Err() != nil {
			return
		}
		if !signedIn() {
			out.buf.WriteString(": signed out\n\n")
			out.flush()
			return
		}
		// Lines beyond what one page holds since the last look are
		// skipped, not queued: a follower sees the latest.
		lq.After, lq.Limit = last, maxLogLines
		lines, last = a.opt.Logs.Lines(lq)
		if len(lines) == 0 {
			out.buf.WriteString(": ping\n\n")
		}
	}
}
