package api

// Web search (issue 18, h18-web): the back-end web_search uses. The API
// key is write-only: every answer shows it masked.

import (
	"context"
	"errors"
	"net/http"

	"github.com/caduceus-dev/caduceus/internal/websearch"
)

// WebSearch manages the web_search back-end (websearch.Service).
type WebSearch interface {
	Get(ctx context.Context) (websearch.View, error)
	Put(ctx context.Context, in websearch.Input) (websearch.View, error)
	Delete(ctx context.Context) error
	Search(ctx context.Context, query string, count int) ([]websearch.Result, error)
}

// CodeWebSearchUnavailable answers the routes of a server built without
// a web search service (some tests).
const CodeWebSearchUnavailable = "web_search_unavailable"

func (a *API) webSearchSvc(w http.ResponseWriter) (WebSearch, bool) {
	if a.opt.WebSearch == nil {
		writeError(w, http.StatusServiceUnavailable, CodeWebSearchUnavailable, "this server has no web search settings", nil)
		return nil, false
	}
	return a.opt.WebSearch, true
}

// failWebSearch answers a refusal of the web search service with its code.
func (a *API) failWebSearch(w http.ResponseWriter, r *http.Request, err error) {
	var we *websearch.Error
	if !errors.As(err, &we) {
		a.fail(w, r, err)
		return
	}
	status := http.StatusBadGateway // the back-end failed
	switch we.Code {
	case websearch.CodeInvalidInput:
		status = http.StatusBadRequest
	case websearch.CodeNotConfigured, websearch.CodeKeyUnreadable:
		status = http.StatusConflict
	case websearch.CodeNoSecretKey:
		status = http.StatusServiceUnavailable
	case websearch.CodeTimeout:
		status = http.StatusGatewayTimeout
	}
	var details map[string]any
	if we.Field != "" {
		details = map[string]any{"field": we.Field}
	}
	writeError(w, status, we.Code, we.Msg, details)
}

func (a *API) getWebSearch(w http.ResponseWriter, r *http.Request) {
	svc, ok := a.webSearchSvc(w)
	if !ok {
		return
	}
	v, err := svc.Get(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (a *API) putWebSearch(w http.ResponseWriter, r *http.Request) {
	svc, ok := a.webSearchSvc(w)
	if !ok {
		return
	}
	var in websearch.Input
	if !decode(w, r, &in) {
		return
	}
	v, err := svc.Put(r.Context(), in)
	if err != nil {
		a.failWebSearch(w, r, err)
		return
	}
	a.log.Info("web search back-end set", "kind", v.Kind, "key_changed", in.APIKey != nil, "by", actorName(r))
	writeJSON(w, http.StatusOK, v)
}

func (a *API) deleteWebSearch(w http.ResponseWriter, r *http.Request) {
	svc, ok := a.webSearchSvc(w)
	if !ok {
		return
	}
	if err := svc.Delete(r.Context()); err != nil {
		a.fail(w, r, err)
		return
	}
	a.log.Info("web search back-end removed", "by", actorName(r))
	w.WriteHeader(http.StatusNoContent)
}

// testWebSearch runs a query on the configured back-end and answers its
// results, as web_search would give them to the model.
func (a *API) testWebSearch(w http.ResponseWriter, r *http.Request) {
	svc, ok := a.webSearchSvc(w)
	if !ok {
		return
	}
	var in struct {
		Query string `json:"query"`
		Count int    `json:"count"`
	}
	if !decode(w, r, &in) {
		return
	}
	if in.Count < 0 || in.Count > websearch.MaxCount {
		writeError(w, http.StatusBadRequest, websearch.CodeInvalidInput, "count must be from 1 to 20", map[string]any{"field": "count"})
		return
	}
	rs, err := svc.Search(r.Context(), in.Query, in.Count)
	if err != nil {
		a.failWebSearch(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "results": rs})
}
