package api

// Organising sessions (issue 15): the session list's archived and project
// filters, and the pin, archive and project fields of PATCH
// /api/sessions/{id}.

import (
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// organiseFilter reads ?archived= ("" or 0: not archived, 1: archived
// only, all: both) and ?project=.
func organiseFilter(w http.ResponseWriter, q url.Values) (store.ArchivedFilter, string, bool) {
	var f store.ArchivedFilter
	switch q.Get("archived") {
	case "", "0":
		f = store.ArchivedExclude
	case "1":
		f = store.ArchivedOnly
	case "all":
		f = store.ArchivedAll
	default:
		writeError(w, http.StatusBadRequest, control.CodeInvalidInput, `archived must be 0, 1 or "all"`, nil)
		return 0, "", false
	}
	return f, q.Get("project"), true
}

// organiseInput is the part of a session patch that organises it.
// project_id is raw so that null (leave the project) differs from absent.
type organiseInput struct {
	Pinned    *bool           `json:"pinned"`
	Archived  *bool           `json:"archived"`
	ProjectID json.RawMessage `json:"project_id"`
}

func (in organiseInput) apply(w http.ResponseWriter, p *control.SessionPatch) bool {
	p.Pinned, p.Archived = in.Pinned, in.Archived
	if len(in.ProjectID) == 0 {
		return true
	}
	var v *string
	if err := json.Unmarshal(in.ProjectID, &v); err != nil {
		writeError(w, http.StatusBadRequest, control.CodeInvalidInput, "project_id must be a project's id or null", nil)
		return false
	}
	none := ""
	if v == nil {
		v = &none
	}
	p.ProjectID = v
	return true
}

func organiseView(v *sessionView, s store.Session) {
	v.Pinned = s.Pinned
	if !s.ArchivedAt.IsZero() {
		v.ArchivedAt = &event.Time{Time: s.ArchivedAt}
	}
	if s.ProjectID != "" {
		p := s.ProjectID
		v.ProjectID = &p
	}
}
