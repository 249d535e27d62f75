package api

// Search over every message (issue 15).

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// searchHitView is one hit of GET /api/search. Snippet marks the matched
// words with store.SnippetOpen and store.SnippetClose (U+0002, U+0003):
// text, never markup, so a client escapes nothing away by mistake.
type searchHitView struct {
	SessionID    string  `json:"session_id"`
	SessionTitle string  `json:"session_title"`
	EventID      int64   `json:"event_id"`
	ItemID       string  `json:"item_id"`
	Kind         string  `json:"kind"`
	Snippet      string  `json:"snippet"`
	Rank         float64 `json:"rank"`
}

func (a *API) search(w http.ResponseWriter, r *http.Request) {
	q, ok := searchQuery(w, r)
	if !ok {
		return
	}
	q.ModelIsDefault = q.Model != "" && q.Model == a.info.DefaultModel
	hits, next, err := a.st.Search(r.Context(), q)
	if errors.Is(err, store.ErrBadCursor) {
		writeError(w, http.StatusBadRequest, control.CodeInvalidCursor, "cursor is not valid for this search", nil)
		return
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	titles := map[string]string{}
	out := make([]searchHitView, 0, len(hits))
	for _, h := range hits {
		title, seen := titles[h.SessionID]
		if !seen {
			s, err := a.st.GetSession(r.Context(), h.SessionID)
			switch {
			case errors.Is(err, store.ErrNotFound):
				continue // deleted between the search and this read
			case err != nil:
				a.fail(w, r, err)
				return
			}
			title, titles[h.SessionID] = s.Title, s.Title
		}
		out = append(out, searchHitView{SessionID: h.SessionID, SessionTitle: title, EventID: h.EventID,
			ItemID: h.ItemID, Kind: h.Kind, Snippet: h.Snippet, Rank: h.Rank})
	}
	writeJSON(w, http.StatusOK, map[string]any{"hits": out, "next_cursor": next})
}

// searchQuery reads GET /api/search's parameters, answering a bad one.
func searchQuery(w http.ResponseWriter, r *http.Request) (store.SearchQuery, bool) {
	v := r.URL.Query()
	bad := func(msg string) (store.SearchQuery, bool) {
		writeError(w, http.StatusBadRequest, control.CodeInvalidInput, msg, nil)
		return store.SearchQuery{}, false
	}
	q := store.SearchQuery{Text: v.Get("q"), ProjectID: v.Get("project"), Model: v.Get("model"), Cursor: v.Get("cursor")}
	if utf8.RuneCountInString(q.Text) > maxSearchChars {
		return bad(fmt.Sprintf("q must be at most %d characters", maxSearchChars))
	}
	// An unknown project or model finds nothing; only a name no project or
	// model could have is refused.
	if len(q.ProjectID) > maxSearchFilter || len(q.Model) > maxSearchFilter {
		return bad(fmt.Sprintf("project and model must be at most %d bytes", maxSearchFilter))
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > store.SearchLimit {
			return bad(fmt.Sprintf("limit must be an integer from 1 to %d", store.SearchLimit))
		}
		q.Limit = n
	}
	for _, f := range []struct {
		name string
		to   *time.Time
	}{{"from", &q.From}, {"to", &q.To}} {
		s := v.Get(f.name)
		if s == "" {
			continue
		}
		t, err := parseSearchTime(s)
		if err != nil {
			return bad(f.name + " must be a date (2006-01-02) or a time (RFC 3339)")
		}
		*f.to = t
	}
	if !q.From.IsZero() && !q.To.IsZero() && !q.From.Before(q.To) {
		return bad("from must be before to")
	}
	if s := v.Get("archived"); s != "" && s != "all" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return bad("archived must be true, false or all")
		}
		q.Archived = &b
	}
	return q, true
}

// maxSearchFilter bounds the project and model parameters, far above any
// id or model name.
const maxSearchFilter = 256

// parseSearchTime reads a date (midnight UTC) or an RFC 3339 time.
func parseSearchTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Parse(time.RFC3339, s)
}
