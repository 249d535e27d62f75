// Package anthropictest is a fake Anthropic Messages API for tests: an
// httptest server that plays scripted replies (recorded event streams or
// error responses) and checks every request against the rules the real API
// enforces, answering 400 invalid_request_error like it would. A request
// history the fake accepts is one the real API accepts, as far as the
// rules below go, so tests of the provider and of the whole product (e2e)
// catch malformed conversations without a live model.
//
// Checked: the x-api-key (401 otherwise) and anthropic-version headers;
// model, max_tokens and stream; roles that alternate starting with user;
// non-empty content and no empty or whitespace-only text blocks; tool ids
// and inputs; every tool_result answering a tool_use of the message just
// before it and every tool_use answered in the next message, results first;
// thinking blocks carrying signatures; the thinking budget; and, with
// thinking enabled, the last assistant message that used tools starting
// with a signed thinking or redacted_thinking block.
package anthropictest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"time"
)

// Reply is one scripted answer to POST /v1/messages: a stream when Status
// is zero, else an error response.
type Reply struct {
	// Stream is a raw event stream, usually a Fixture.
	Stream []byte
	// EventDelay is waited before each event, to test cancellation and
	// slow streams.
	EventDelay time.Duration
	// CutAfter > 0 ends the response after that many events and never
	// sends message_stop, as a dropped connection would.
	CutAfter int

	// Status is the HTTP status of an error reply.
	Status int
	// ErrorType is the Anthropic error type ("overloaded_error", ...);
	// empty picks the one the API uses for Status.
	ErrorType string
	Message   string
	// RetryAfter is sent as the Retry-After header when set.
	RetryAfter string
}

// StreamReply plays the event stream sse.
func StreamReply(sse []byte) Reply { return Reply{Stream: sse} }

// ErrorReply answers with status and an Anthropic error body.
func ErrorReply(status int, errType, message string) Reply {
	return Reply{Status: status, ErrorType: errType, Message: message}
}

// Request is a request the server received.
type Request struct {
	Method string
	Path   string // with the query
	Header http.Header
	Raw    []byte
	// Body is Raw decoded, nil when it is not JSON.
	Body map[string]any
	// Status is what the server answered.
	Status int
	// Invalid says why the request was rejected; empty when accepted.
	Invalid string
	// Disconnected is set when the client went away before the reply
	// was complete.
	Disconnected bool
	// Done is set once the server finished the reply.
	Done bool
}

// Server is the fake API. Its methods are safe for concurrent use.
type Server struct {
	// URL is the base URL to configure the provider with.
	URL string

	apiKey string
	srv    *httptest.Server

	mu       sync.Mutex
	queue    []Reply
	reqs     []Request
	models   []string
	pageSize int
	active   int
}

// DefaultModels is what GET /v1/models lists unless SetModels changed it,
// newest first like the API.
func DefaultModels() []string {
	return []string{"claude-sonnet-4-5-20250929", "claude-opus-4-1-20250805", "claude-3-5-haiku-20241022"}
}

// NewServer starts a fake API that accepts apiKey. Close it when done.
func NewServer(apiKey string) *Server {
	s := &Server{apiKey: apiKey, models: DefaultModels()}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close shuts the server down.
func (s *Server) Close() { s.srv.Close() }

// Client returns an HTTP client for the server.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// Enqueue adds replies to POST /v1/messages, played in order, one per
// valid request. Invalid requests do not use one up.
func (s *Server) Enqueue(r ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, r...)
}

// Pending returns the number of replies not played yet.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// SetModels replaces the model list; pageSize > 0 caps a page below the
// client's limit, to exercise pagination.
func (s *Server) SetModels(pageSize int, ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = append([]string(nil), ids...)
	s.pageSize = pageSize
}

// Requests returns the requests received so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.reqs))
	copy(out, s.reqs)
	return out
}

// WaitIdle waits until no request is being served, or timeout passes; it
// reports whether the server went idle.
func (s *Server) WaitIdle(timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		s.mu.Lock()
		n := s.active
		s.mu.Unlock()
		if n == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	rec := Request{Method: r.Method, Path: r.URL.RequestURI(), Header: r.Header.Clone(), Raw: raw}
	_ = json.Unmarshal(raw, &rec.Body)
	s.mu.Lock()
	i := len(s.reqs)
	s.reqs = append(s.reqs, rec)
	s.active++
	s.mu.Unlock()

	status, invalid, gone := s.answer(w, r, raw)

	s.mu.Lock()
	s.reqs[i].Status, s.reqs[i].Invalid, s.reqs[i].Disconnected, s.reqs[i].Done = status, invalid, gone, true
	s.active--
	s.mu.Unlock()
}

// answer replies to one request; it returns the status, why the request
// was invalid, and whether the client went away.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, raw []byte) (int, string, bool) {
	if key := r.Header.Get("X-Api-Key"); key == "" || key != s.apiKey {
		writeError(w, http.StatusUnauthorized, "authentication_error", "invalid x-api-key", "")
		return http.StatusUnauthorized, "invalid x-api-key", false
	}
	if r.Header.Get("Anthropic-Version") == "" {
		msg := "anthropic-version: header is required"
		writeError(w, http.StatusBadRequest, "invalid_request_error", msg, "")
		return http.StatusBadRequest, msg, false
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		return s.serveModels(w, r), "", false
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
	default:
		writeError(w, http.StatusNotFound, "not_found_error", "Not found", "")
		return http.StatusNotFound, "", false
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		msg := "content-type: expected application/json, got " + strconv.Quote(ct)
		writeError(w, http.StatusBadRequest, "invalid_request_error", msg, "")
		return http.StatusBadRequest, msg, false
	}
	if err := Validate(raw); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", err.Error(), "")
		return http.StatusBadRequest, err.Error(), false
	}
	s.mu.Lock()
	if len(s.queue) == 0 {
		s.mu.Unlock()
		// 400 rather than 5xx so the client does not retry a test that
		// forgot to script a reply.
		msg := "anthropictest: no scripted reply left"
		writeError(w, http.StatusBadRequest, "invalid_request_error", msg, "")
		return http.StatusBadRequest, msg, false
	}
	reply := s.queue[0]
	s.queue = s.queue[1:]
	s.mu.Unlock()

	if reply.Status != 0 {
		writeError(w, reply.Status, reply.ErrorType, reply.Message, reply.RetryAfter)
		return reply.Status, "", false
	}
	return http.StatusOK, "", streamReply(w, r, reply)
}

// streamReply plays reply's events; it reports whether the client went
// away first.
func streamReply(w http.ResponseWriter, r *http.Request, reply Reply) bool {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("Request-Id", "req_anthropictest")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	for n, ev := range splitEvents(reply.Stream) {
		if reply.CutAfter > 0 && (n >= reply.CutAfter || bytes.Contains(ev, []byte("event: message_stop"))) {
			return false
		}
		if reply.EventDelay > 0 {
			t := time.NewTimer(reply.EventDelay)
			select {
			case <-r.Context().Done():
				t.Stop()
				return true
			case <-t.C:
			}
		}
		if _, err := w.Write(ev); err != nil {
			return true
		}
		if err := rc.Flush(); err != nil {
			return true
		}
	}
	return r.Context().Err() != nil
}

// splitEvents cuts a raw stream at its blank lines.
func splitEvents(sse []byte) [][]byte {
	sse = bytes.ReplaceAll(sse, []byte("\r\n"), []byte("\n"))
	var out [][]byte
	for _, ev := range bytes.Split(sse, []byte("\n\n")) {
		if ev = bytes.Trim(ev, "\n"); len(ev) > 0 {
			out = append(out, append(ev[:len(ev):len(ev)], "\n\n"...))
		}
	}
	return out
}

// statusType is the error type the API sends with a status.
func statusType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	return "api_error"
}

func writeError(w http.ResponseWriter, status int, errType, msg, retryAfter string) {
	if errType == "" {
		errType = statusType(status)
	}
	type detail struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	body, _ := json.Marshal(struct {
		Type  string `json:"type"`
		Error detail `json:"error"`
	}{"error", detail{errType, msg}})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if retryAfter != "" {
		h.Set("Retry-After", retryAfter)
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// serveModels answers GET /v1/models with the API's cursor pagination.
func (s *Server) serveModels(w http.ResponseWriter, r *http.Request) int {
	s.mu.Lock()
	models, pageSize := append([]string(nil), s.models...), s.pageSize
	s.mu.Unlock()
	limit := 20
	if v, err := strconv.Atoi(r.URL.Query().Get("limit")); err == nil {
		if v < 1 || v > 1000 {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "limit: must be between 1 and 1000", "")
			return http.StatusBadRequest
		}
		limit = v
	}
	if pageSize > 0 {
		limit = min(limit, pageSize)
	}
	start := 0
	if after := r.URL.Query().Get("after_id"); after != "" {
		start = len(models)
		for i, id := range models {
			if id == after {
				start = i + 1
			}
		}
	}
	end := min(start+limit, len(models))
	type model struct {
		Type        string `json:"type"`
		ID          string `json:"id"`
		DisplayName string `json:"display_name"`
		CreatedAt   string `json:"created_at"`
	}
	page := struct {
		Data    []model `json:"data"`
		HasMore bool    `json:"has_more"`
		FirstID *string `json:"first_id"`
		LastID  *string `json:"last_id"`
	}{Data: []model{}, HasMore: end < len(models)}
	for _, id := range models[start:end] {
		page.Data = append(page.Data, model{Type: "model", ID: id, DisplayName: id, CreatedAt: "2025-01-01T00:00:00Z"})
	}
	if start < end {
		page.FirstID, page.LastID = &models[start], &models[end-1]
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(page) // a write error means the client left
	return http.StatusOK
}
