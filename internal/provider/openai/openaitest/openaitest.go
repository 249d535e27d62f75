// Package openaitest is a fake OpenAI Chat Completions server for tests of
// the openai provider and of anything built on it (end-to-end tests of the
// agent, the runner, the API).
//
// A Server plays a queue of scripted replies — recorded-style SSE streams
// (optionally slowed down or cut off mid-body) or HTTP errors — and records
// every request it receives. Like the real API it checks requests first
// and answers 400 with an OpenAI-style error body when the conversation is
// malformed (a tool message answering no call, a call left unanswered,
// arguments that are not JSON, an empty user message), so a test that
// passes here does not fail against the real service for a shape error.
// It can require a bearer key and serve GET /v1/models.
//
// Fixture returns the embedded recorded-style streams (plain text,
// fragmented and parallel tool calls, reasoning as DeepSeek, vLLM and
// OpenRouter send it, Ollama's whole tool calls, llama.cpp's usage, error
// and cut streams).
package openaitest

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"
)

//go:embed fixtures/*.sse
var fixtureFS embed.FS

// Fixture returns the embedded stream called name ("text" or "text.sse").
// It panics on an unknown name: a typo in a test should fail loudly.
func Fixture(name string) []byte {
	if !strings.HasSuffix(name, ".sse") {
		name += ".sse"
	}
	b, err := fixtureFS.ReadFile("fixtures/" + name)
	if err != nil {
		panic(fmt.Sprintf("openaitest: no fixture %q (have %s)", name, strings.Join(FixtureNames(), ", ")))
	}
	return b
}

// FixtureNames lists the embedded fixtures, without the .sse extension.
func FixtureNames() []string {
	entries, _ := fixtureFS.ReadDir("fixtures")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".sse"))
	}
	return names
}

// Reply is one scripted answer to a chat completion request. With SSE set
// it is a stream; otherwise Status and Body make a plain response (an
// error, or a non-streamed completion).
type Reply struct {
	// SSE is served as text/event-stream, event by event (events end at a
	// blank line).
	SSE []byte
	// EventDelay is slept between events, so a test can cancel mid-stream.
	EventDelay time.Duration
	// CutAfterEvents, when > 0, aborts the connection after that many
	// events, without the end of the chunked body: a network cut.
	CutAfterEvents int
	// CutAfterBytes, when > 0, aborts the connection after that many bytes
	// of SSE, possibly mid-line.
	CutAfterBytes int

	// Status is the HTTP status; 0 means 200.
	Status int
	// Body is the response body when SSE is nil (JSON).
	Body string
	// RetryAfter, when set, is sent as the Retry-After header.
	RetryAfter string
	// Header holds extra response headers.
	Header http.Header
}

// Stream replies with the SSE bytes, e.g. Stream(Fixture("text")).
func Stream(sse []byte) Reply { return Reply{SSE: sse} }

// Error replies with status and an OpenAI-style error body carrying
// message, with the type and code OpenAI uses for that status.
func Error(status int, message string) Reply {
	typ, code := errorKind(status)
	return Reply{Status: status, Body: errorBody(message, typ, "", code)}
}

// JSON replies with status and a raw JSON body.
func JSON(status int, body string) Reply { return Reply{Status: status, Body: body} }

// Request is a request the server received.
type Request struct {
	Method string
	Path   string
	Query  string // the raw query, e.g. Azure's api-version
	Header http.Header
	// Body is the decoded JSON body (nil when there was none or it was
	// not JSON); Raw is the body as sent.
	Body map[string]any
	Raw  []byte
}

// Decode unmarshals the raw body into v, for typed assertions.
func (r Request) Decode(v any) error { return json.Unmarshal(r.Raw, v) }

// Server is a fake Chat Completions server. Its methods are safe for
// concurrent use.
type Server struct {
	srv    *httptest.Server
	closed chan struct{}
	gone   chan struct{}

	mu       sync.Mutex
	queue    []Reply
	fallback *Reply
	key      string
	models   []string
	requests []Request
	once     sync.Once
}

// NewServer starts a server; Close it when done.
func NewServer() *Server {
	s := &Server{closed: make(chan struct{}), gone: make(chan struct{}, 64)}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// BaseURL is the API root to configure a client with (…/v1).
func (s *Server) BaseURL() string { return s.srv.URL + "/v1" }

// Close stops the server, cutting short any delayed stream.
func (s *Server) Close() {
	s.once.Do(func() { close(s.closed) })
	s.srv.Close()
}

// Enqueue adds replies, served in order to chat completion requests that
// pass validation.
func (s *Server) Enqueue(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// SetDefault sets the reply used once the queue is empty; without one an
// unexpected request gets a 400 naming the problem.
func (s *Server) SetDefault(r Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fallback = &r
}

// Pending reports how many queued replies have not been served.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// RequireKey makes every request need "Authorization: Bearer key"; empty
// turns the check off.
func (s *Server) RequireKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.key = key
}

// SetModels sets the ids GET /v1/models lists.
func (s *Server) SetModels(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = slices.Clone(ids)
}

// Requests returns the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// ClientGone receives a value each time a client went away before its
// stream was fully served (cancelled, timed out, broke off).
func (s *Server) ClientGone() <-chan struct{} { return s.gone }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	rec := Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Raw: raw}
	var body map[string]any
	if json.Unmarshal(raw, &body) == nil {
		rec.Body = body
	}
	s.mu.Lock()
	s.requests = append(s.requests, rec)
	key := s.key
	s.mu.Unlock()

	if key != "" && r.Header.Get("Authorization") != "Bearer "+key {
		writeError(w, http.StatusUnauthorized, authMessage(r.Header.Get("Authorization")), "invalid_request_error", "", "invalid_api_key")
		return
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/chat/completions":
		s.chat(w, r, raw)
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		s.listModels(w)
	default:
		writeError(w, http.StatusNotFound, fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path), "invalid_request_error", "", "")
	}
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request, raw []byte) {
	if e := validate(raw); e != nil {
		writeError(w, http.StatusBadRequest, e.msg, "invalid_request_error", e.param, e.code)
		return
	}
	s.mu.Lock()
	var rep Reply
	switch {
	case len(s.queue) > 0:
		rep = s.queue[0]
		s.queue = s.queue[1:]
	case s.fallback != nil:
		rep = *s.fallback
	default:
		n := len(s.requests)
		s.mu.Unlock()
		writeError(w, http.StatusBadRequest, fmt.Sprintf("openaitest: no reply queued for request %d", n), "openaitest_error", "", "")
		return
	}
	s.mu.Unlock()

	for k, vs := range rep.Header {
		w.Header()[k] = vs
	}
	if rep.RetryAfter != "" {
		w.Header().Set("Retry-After", rep.RetryAfter)
	}
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	if rep.SSE == nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, rep.Body)
		return
	}
	s.stream(w, r, rep, status)
}

// stream serves rep.SSE event by event, flushing each one as a real
// server does so the client sees tokens as they "arrive".
func (s *Server) stream(w http.ResponseWriter, r *http.Request, rep Reply, status int) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(status)
	if rc.Flush() != nil {
		s.clientGone()
		return
	}
	written := 0
	for i, ev := range splitEvents(rep.SSE) {
		if rep.CutAfterEvents > 0 && i >= rep.CutAfterEvents {
			abort()
		}
		if i > 0 && rep.EventDelay > 0 {
			t := time.NewTimer(rep.EventDelay)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				s.clientGone()
				return
			case <-s.closed:
				t.Stop()
				return
			}
		}
		cut := false
		if rep.CutAfterBytes > 0 && written+len(ev) > rep.CutAfterBytes {
			ev, cut = ev[:rep.CutAfterBytes-written], true
		}
		if _, err := w.Write(ev); err != nil {
			s.clientGone()
			return
		}
		if err := rc.Flush(); err != nil {
			s.clientGone()
			return
		}
		written += len(ev)
		if cut {
			abort()
		}
	}
}

func (s *Server) clientGone() {
	select {
	case s.gone <- struct{}{}:
	default:
	}
}

// abort ends the handler without finishing the chunked body, so the
// client sees the connection drop rather than a clean end of stream.
func abort() { panic(http.ErrAbortHandler) }

func (s *Server) listModels(w http.ResponseWriter) {
	s.mu.Lock()
	ids := slices.Clone(s.models)
	s.mu.Unlock()
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	list := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list", Data: []model{}}
	for _, id := range ids {
		list.Data = append(list.Data, model{ID: id, Object: "model", Created: 1700000000, OwnedBy: "openaitest"})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(list)
}

// splitEvents cuts an SSE body after each blank line, keeping the
// terminators, so the bytes served are exactly the fixture's.
func splitEvents(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.Index(b, []byte("\n\n"))
		if i < 0 {
			out = append(out, b)
			break
		}
		out = append(out, b[:i+2])
		b = b[i+2:]
	}
	return out
}

func writeError(w http.ResponseWriter, status int, msg, typ, param, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, errorBody(msg, typ, param, code))
}

// errorBody is OpenAI's error envelope; param and code are null when empty.
func errorBody(msg, typ, param, code string) string {
	null := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": msg, "type": typ, "param": null(param), "code": null(code),
	}})
	return string(b)
}

func errorKind(status int) (typ, code string) {
	switch {
	case status == http.StatusUnauthorized:
		return "invalid_request_error", "invalid_api_key"
	case status == http.StatusForbidden:
		return "permission_error", ""
	case status == http.StatusNotFound:
		return "invalid_request_error", "model_not_found"
	case status == http.StatusTooManyRequests:
		return "requests", "rate_limit_exceeded"
	case status >= 500:
		return "server_error", ""
	default:
		return "invalid_request_error", ""
	}
}

// authMessage is OpenAI's 401 text, which echoes a masked form of the key
// it got — the reason clients must redact what servers say.
func authMessage(header string) string {
	key, ok := strings.CutPrefix(header, "Bearer ")
	if !ok || key == "" {
		return "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
	}
	masked := key
	if len(key) > 8 {
		masked = key[:3] + strings.Repeat("*", len(key)-7) + key[len(key)-4:]
	}
	return "Incorrect API key provided: " + masked + ". You can find your API key at https://platform.openai.com/account/api-keys."
}

// apiError is a validation failure, in OpenAI's terms.
type apiError struct{ msg, param, code string }

func (e *apiError) Error() string { return e.msg }

// Shapes validate reads; raw fields so a wrong type is reported, not
// silently zeroed.
type chatBody struct {
	Model         json.RawMessage `json:"model"`
	Messages      []chatMsg       `json:"messages"`
	Tools         []chatTool      `json:"tools"`
	Stream        bool            `json:"stream"`
	StreamOptions json.RawMessage `json:"stream_options"`
}

type chatMsg struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []chatCall      `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
}

type chatCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type chatTool struct {
	Type     string `json:"type"`
	Function struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// validate applies the checks the real API makes on a conversation,
// with its messages where they are known.
func validate(raw []byte) *apiError {
	var b chatBody
	if err := json.Unmarshal(raw, &b); err != nil {
		return &apiError{msg: "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)"}
	}
	var model string
	if json.Unmarshal(b.Model, &model) != nil || model == "" {
		return &apiError{msg: "you must provide a model parameter"}
	}
	if len(b.Messages) == 0 {
		return &apiError{msg: "[] is too short - 'messages'", param: "messages", code: "empty_array"}
	}
	if isPresent(b.StreamOptions) && !b.Stream {
		return &apiError{msg: "The 'stream_options' parameter is only allowed when 'stream' is enabled.", param: "stream_options"}
	}
	// open holds the calls of the last assistant message still waiting
	// for their tool messages; answered tracks which got one.
	var open []string
	answered := map[string]bool{}
	openAt := -1
	unanswered := func(i int) *apiError {
		var missing []string
		for _, id := range open {
			if !answered[id] {
				missing = append(missing, id)
			}
		}
		if len(missing) == 0 {
			return nil
		}
		return &apiError{
			msg:   "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: " + strings.Join(missing, ", "),
			param: fmt.Sprintf("messages.[%d].role", i),
		}
	}
	for i, m := range b.Messages {
		p := fmt.Sprintf("messages[%d]", i)
		if m.Role != "tool" {
			if e := unanswered(openAt); e != nil {
				return e
			}
			open, answered, openAt = nil, map[string]bool{}, -1
		}
		switch m.Role {
		case "system", "developer":
			if !isText(m.Content) {
				return &apiError{msg: fmt.Sprintf("Invalid value for '%s.content': expected a string.", p), param: p + ".content"}
			}
		case "user":
			if !isPresent(m.Content) {
				return &apiError{msg: fmt.Sprintf("Missing required parameter: '%s.content'.", p), param: p + ".content", code: "missing_required_parameter"}
			}
			if isEmptyContent(m.Content) {
				return &apiError{msg: fmt.Sprintf("Invalid '%s.content': string too short. Expected a string with minimum length 1, but got an empty string instead.", p), param: p + ".content", code: "string_below_min_length"}
			}
		case "assistant":
			if !isPresent(m.Content) && len(m.ToolCalls) == 0 {
				return &apiError{msg: fmt.Sprintf("Invalid value for '%s.content': expected a string, got null.", p), param: p + ".content"}
			}
			for j, c := range m.ToolCalls {
				cp := fmt.Sprintf("%s.tool_calls[%d]", p, j)
				if e := validateCall(cp, c); e != nil {
					return e
				}
				open = append(open, c.ID)
			}
			if len(open) > 0 {
				openAt = i
			}
		case "tool":
			if openAt < 0 {
				return &apiError{msg: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", param: fmt.Sprintf("messages.[%d].role", i)}
			}
			if !slices.Contains(open, m.ToolCallID) {
				return &apiError{msg: fmt.Sprintf("Invalid parameter: 'tool_call_id' of '%s' not found in 'tool_calls' of previous message.", m.ToolCallID), param: fmt.Sprintf("messages.[%d].tool_call_id", i)}
			}
			if !isText(m.Content) {
				return &apiError{msg: fmt.Sprintf("Invalid value for '%s.content': expected a string.", p), param: p + ".content"}
			}
			answered[m.ToolCallID] = true
		default:
			return &apiError{msg: fmt.Sprintf("Invalid value: '%s'. Supported values are: 'system', 'assistant', 'user', 'tool', and 'developer'.", m.Role), param: p + ".role", code: "invalid_value"}
		}
	}
	if e := unanswered(openAt); e != nil {
		return e
	}
	for i, t := range b.Tools {
		p := fmt.Sprintf("tools[%d]", i)
		if t.Type != "function" {
			return &apiError{msg: fmt.Sprintf("Invalid value: '%s'. Supported values are: 'function' and 'custom'.", t.Type), param: p + ".type", code: "invalid_value"}
		}
		if !validFunctionName(t.Function.Name) {
			return &apiError{msg: fmt.Sprintf("Invalid '%s.function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.", p), param: p + ".function.name", code: "invalid_value"}
		}
		if isPresent(t.Function.Parameters) && !isObject(t.Function.Parameters) {
			return &apiError{msg: fmt.Sprintf("Invalid schema for function '%s': schema must be a JSON Schema of 'type: \"object\"'.", t.Function.Name), param: p + ".function.parameters", code: "invalid_function_parameters"}
		}
	}
	return nil
}

func validateCall(p string, c chatCall) *apiError {
	switch {
	case c.ID == "":
		return &apiError{msg: fmt.Sprintf("Missing required parameter: '%s.id'.", p), param: p + ".id", code: "missing_required_parameter"}
	case c.Type != "function":
		return &apiError{msg: fmt.Sprintf("Missing required parameter: '%s.type'.", p), param: p + ".type", code: "missing_required_parameter"}
	case !validFunctionName(c.Function.Name):
		return &apiError{msg: fmt.Sprintf("Invalid '%s.function.name': string does not match pattern.", p), param: p + ".function.name", code: "invalid_value"}
	}
	var args string
	if json.Unmarshal(c.Function.Arguments, &args) != nil {
		return &apiError{msg: fmt.Sprintf("Invalid type for '%s.function.arguments': expected a string.", p), param: p + ".function.arguments", code: "invalid_type"}
	}
	if !json.Valid([]byte(args)) {
		return &apiError{msg: fmt.Sprintf("Invalid '%s.function.arguments': the arguments are not valid JSON.", p), param: p + ".function.arguments", code: "invalid_value"}
	}
	return nil
}

func validFunctionName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

func isPresent(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && string(t) != "null"
}

func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{'
}

// isText accepts a string or an array of content parts, not null.
func isText(raw json.RawMessage) bool {
	if !isPresent(raw) {
		return false
	}
	var s string
	var parts []json.RawMessage
	return json.Unmarshal(raw, &s) == nil || json.Unmarshal(raw, &parts) == nil
}

// isEmptyContent reports an empty string or an empty list of parts.
func isEmptyContent(raw json.RawMessage) bool {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s == ""
	}
	var parts []json.RawMessage
	if json.Unmarshal(raw, &parts) == nil {
		return len(parts) == 0
	}
	return false
}
