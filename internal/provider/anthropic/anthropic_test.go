package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/provider/anthropic/anthropictest"
	"github.com/caduceus-dev/caduceus/internal/provider/wire"
)

const testKey = "sk-ant-api03-TESTKEY-0123456789abcdefghij"

// retryLog records OnRetry calls.
type retryLog struct {
	mu    sync.Mutex
	waits []time.Duration
	whys  []string
}

func (l *retryLog) add(_ int, wait time.Duration, why string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.waits = append(l.waits, wait)
	l.whys = append(l.whys, why)
}

// newTest returns a provider talking to a fresh fake server, with retries
// fast enough for tests.
func newTest(t *testing.T, mod ...func(*Config)) (*Provider, *anthropictest.Server, *retryLog) {
	t.Helper()
	srv := anthropictest.NewServer(testKey)
	t.Cleanup(srv.Close)
	log := &retryLog{}
	cfg := Config{
		BaseURL: srv.URL,
		APIKey:  testKey,
		Backoff: wire.Backoff{Attempts: 3, Base: time.Millisecond, Max: 20 * time.Millisecond, Jitter: func() float64 { return 0.5 }},
		OnRetry: log.add,
	}
	for _, m := range mod {
		m(&cfg)
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p, srv, log
}

// collect drains a stream, checking nothing follows its end.
func collect(t *testing.T, ctx context.Context, p *Provider, req provider.Request) ([]provider.Chunk, error) {
	t.Helper()
	var chunks []provider.Chunk
	var end error
	ended := false
	for c, err := range p.Stream(ctx, req) {
		if ended {
			t.Fatalf("item after the end: %+v, %v", c, err)
		}
		if err != nil {
			end, ended = err, true
			continue
		}
		chunks = append(chunks, c)
		ended = c.Kind == provider.ChunkDone
	}
	if !ended {
		t.Fatal("stream ended without ChunkDone or error")
	}
	return chunks, end
}

func textOf(chunks []provider.Chunk) string {
	var b strings.Builder
	for _, c := range chunks {
		if c.Kind == provider.ChunkText {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

var hello = provider.Request{Model: "claude-sonnet-4-5", Messages: []provider.Message{user("hello")}}

func TestStreamRequest(t *testing.T) {
	p, srv, _ := newTest(t, func(c *Config) {
		c.Headers = map[string]string{"anthropic-beta": "interleaved-thinking-2025-05-14"}
	})
	srv.Enqueue(anthropictest.StreamReply(anthropictest.Fixture("text")))
	chunks, err := collect(t, context.Background(), p, hello)
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(chunks); got != "Hello! How can I help you today?" {
		t.Errorf("text = %q", got)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Method != http.MethodPost || r.Path != "/v1/messages" {
		t.Errorf("request %s %s", r.Method, r.Path)
	}
	for k, want := range map[string]string{
		"X-Api-Key":         testKey,
		"Anthropic-Version": "2023-06-01",
		"Content-Type":      "application/json",
		"Anthropic-Beta":    "interleaved-thinking-2025-05-14",
	} {
		if got := r.Header.Get(k); got != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
	if r.Body["stream"] != true || r.Body["max_tokens"] != float64(8192) || r.Body["model"] != "claude-sonnet-4-5" {
		t.Errorf("body = %s", r.Raw)
	}
	if _, ok := r.Body["system"]; ok {
		t.Errorf("empty system sent: %s", r.Raw)
	}
	if p.Name() != "anthropic" || p.Demo() {
		t.Errorf("Name() = %q, Demo() = %v", p.Name(), p.Demo())
	}
}

func TestStreamErrors(t *testing.T) {
	tests := []struct {
		name      string
		replies   []anthropictest.Reply
		wantText  string
		wantCode  string
		wantMsg   string // substring of the error message
		requests  int
		wantWaits []time.Duration // OnRetry waits; nil: not checked
		retries   int
	}{
		{
			name: "429 then success honours Retry-After",
			replies: []anthropictest.Reply{
				{Status: 429, ErrorType: "rate_limit_error", Message: "Number of request tokens has exceeded your per-minute rate limit", RetryAfter: "1"},
				anthropictest.StreamReply(anthropictest.Fixture("text")),
			},
			wantText: "Hello! How can I help you today?",
			requests: 2,
			retries:  1,
			// Jitter would wait 0.5 ms; Retry-After (1 s, capped by Max)
			// wins.
			wantWaits: []time.Duration{20 * time.Millisecond},
		},
		{
			name: "529 retried",
			replies: []anthropictest.Reply{
				anthropictest.ErrorReply(529, "overloaded_error", "Overloaded"),
				anthropictest.StreamReply(anthropictest.Fixture("text")),
			},
			wantText: "Hello! How can I help you today?",
			requests: 2,
			retries:  1,
		},
		{
			name: "529 until the attempts are used up",
			replies: []anthropictest.Reply{
				anthropictest.ErrorReply(529, "overloaded_error", "Overloaded"),
				anthropictest.ErrorReply(529, "overloaded_error", "Overloaded"),
				anthropictest.ErrorReply(529, "overloaded_error", "Overloaded"),
			},
			wantCode: "overloaded",
			wantMsg:  "Overloaded",
			requests: 3,
			retries:  2,
		},
		{
			name:     "400 reports the server's message and is not retried",
			replies:  []anthropictest.Reply{anthropictest.ErrorReply(400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum")},
			wantCode: "bad_request",
			wantMsg:  "prompt is too long: 210000 tokens > 200000 maximum",
			requests: 1,
		},
		{
			name:     "401 never shows the key",
			replies:  []anthropictest.Reply{anthropictest.ErrorReply(401, "authentication_error", "invalid x-api-key "+testKey)},
			wantCode: "auth",
			wantMsg:  "invalid x-api-key [redacted]",
			requests: 1,
		},
		{
			name:     "error event mid-stream",
			replies:  []anthropictest.Reply{anthropictest.StreamReply(anthropictest.Fixture("error_event"))},
			wantText: "Let me think about",
			wantCode: "overloaded",
			wantMsg:  "Overloaded",
			requests: 1,
		},
		{
			name:     "cut stream",
			replies:  []anthropictest.Reply{{Stream: anthropictest.Fixture("text"), CutAfter: 5}},
			wantText: "Hello! How can I help",
			wantCode: "stream_cut",
			requests: 1,
		},
		{
			name:     "cut stream is not retried even before any text",
			replies:  []anthropictest.Reply{{Stream: anthropictest.Fixture("text"), CutAfter: 1}, anthropictest.StreamReply(anthropictest.Fixture("text"))},
			wantCode: "stream_cut",
			requests: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, srv, log := newTest(t)
			srv.Enqueue(tt.replies...)
			chunks, err := collect(t, context.Background(), p, hello)
			if got := textOf(chunks); got != tt.wantText {
				t.Errorf("text = %q, want %q", got, tt.wantText)
			}
			checkCode(t, err, tt.wantCode)
			if err != nil {
				if !strings.Contains(err.Error(), tt.wantMsg) {
					t.Errorf("error %q does not contain %q", err, tt.wantMsg)
				}
				if strings.Contains(err.Error(), testKey) {
					t.Errorf("error shows the key: %v", err)
				}
			}
			if n := len(srv.Requests()); n != tt.requests {
				t.Errorf("%d requests, want %d", n, tt.requests)
			}
			if len(log.waits) != tt.retries {
				t.Errorf("%d retries (%v), want %d", len(log.waits), log.whys, tt.retries)
			}
			if tt.wantWaits != nil && !reflect.DeepEqual(log.waits, tt.wantWaits) {
				t.Errorf("retry waits %v, want %v", log.waits, tt.wantWaits)
			}
		})
	}
}

func TestWrongKey(t *testing.T) {
	const wrong = "sk-ant-api03-WRONGKEY-zyxwvutsrqponmlkjihg"
	p, srv, _ := newTest(t, func(c *Config) { c.APIKey = wrong })
	srv.Enqueue(anthropictest.StreamReply(anthropictest.Fixture("text")))
	_, err := collect(t, context.Background(), p, hello)
	checkCode(t, err, "auth")
	if err == nil || strings.Contains(err.Error(), wrong) || !strings.Contains(err.Error(), "invalid x-api-key") {
		t.Errorf("err = %v", err)
	}
	if pe, _ := provider.AsError(err); pe != nil && pe.Retryable {
		t.Error("an auth failure is marked retryable")
	}
}

func TestCancelMidStream(t *testing.T) {
	p, srv, _ := newTest(t)
	const delay = 250 * time.Millisecond
	srv.Enqueue(anthropictest.Reply{Stream: anthropictest.Fixture("text"), EventDelay: delay})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cancelled time.Time
	var chunks []provider.Chunk
	var end error
	for c, err := range p.Stream(ctx, hello) {
		if err != nil {
			end = err
			break
		}
		chunks = append(chunks, c)
		if cancelled.IsZero() && c.Kind == provider.ChunkText {
			cancel()
			cancelled = time.Now()
		}
	}
	if took := time.Since(cancelled); took > delay {
		t.Errorf("the stream ran %v after cancel; the next event was %v away", took, delay)
	}
	if !errors.Is(end, context.Canceled) {
		t.Errorf("end = %v, want context.Canceled", end)
	}
	if len(chunks) != 1 || chunks[0].Text != "Hello" {
		t.Errorf("chunks = %+v, want the first text only", chunks)
	}
	if !srv.WaitIdle(5 * time.Second) {
		t.Fatal("the server is still streaming")
	}
	if r := srv.Requests()[0]; !r.Disconnected {
		t.Errorf("the server did not see the client go: %+v", r)
	}
}

func TestConsumerBreakCloses(t *testing.T) {
	p, srv, _ := newTest(t)
	srv.Enqueue(anthropictest.Reply{Stream: anthropictest.Fixture("text"), EventDelay: 20 * time.Millisecond})
	for c := range p.Stream(context.Background(), hello) {
		if c.Kind == provider.ChunkText {
			break
		}
	}
	if !srv.WaitIdle(5 * time.Second) {
		t.Fatal("the server is still streaming")
	}
	if r := srv.Requests()[0]; !r.Disconnected {
		t.Errorf("the server did not see the client go: %+v", r)
	}
}

func TestCancelBeforeResponse(t *testing.T) {
	p, srv, _ := newTest(t)
	srv.Enqueue(anthropictest.StreamReply(anthropictest.Fixture("text")))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := collect(t, ctx, p, hello)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// TestMultiTurn plays a tool loop with thinking the way the agent does:
// the first answer's thinking and tool call go back into history with the
// tool's result, and the validating server must accept that history.
func TestMultiTurn(t *testing.T) {
	p, srv, _ := newTest(t)
	srv.Enqueue(
		anthropictest.StreamReply(anthropictest.Fixture("thinking_tool_use")),
		anthropictest.StreamReply(anthropictest.Fixture("text")),
	)
	tools := []provider.ToolSpec{{Name: "read_file", Description: "Reads a file.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}
	req := provider.Request{Model: "claude-sonnet-4-5", System: "You are terse.", Tools: tools, ThinkingBudget: 2048,
		Messages: []provider.Message{user("What module is this?")}}

	chunks, err := collect(t, context.Background(), p, req)
	if err != nil {
		t.Fatal(err)
	}
	turn := assemble(chunks)
	if len(turn.ToolCalls) != 1 || len(turn.Reasoning) != 1 || turn.Reasoning[0].Signature == "" {
		t.Fatalf("turn 1 = %+v", turn)
	}
	if string(turn.ToolCalls[0].Args) != `{"path": "go.mod"}` {
		t.Errorf("args = %s", turn.ToolCalls[0].Args)
	}
	req.Messages = append(req.Messages, turn, results(provider.ToolResult{ToolCallID: turn.ToolCalls[0].ID, Content: "module example.com/x"}))
	chunks, err = collect(t, context.Background(), p, req)
	if err != nil {
		t.Fatalf("turn 2: %v (server: %q)", err, srv.Requests()[1].Invalid)
	}
	if textOf(chunks) == "" {
		t.Error("turn 2 has no text")
	}

	r := srv.Requests()[1]
	var body struct {
		Thinking *thinkingConfig `json:"thinking"`
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(r.Raw, &body); err != nil {
		t.Fatal(err)
	}
	if body.Thinking == nil || body.Thinking.BudgetTokens != 2048 {
		t.Errorf("thinking = %+v", body.Thinking)
	}
	if len(body.Messages) != 3 {
		t.Fatalf("messages = %s", r.Raw)
	}
	a := body.Messages[1].Content
	if a[0]["type"] != "thinking" || a[0]["signature"] != turn.Reasoning[0].Signature || a[0]["thinking"] != turn.Reasoning[0].Text {
		t.Errorf("thinking block not replayed as streamed: %v", a[0])
	}
	if a[1]["type"] != "tool_use" || a[1]["id"] != "toolu_01QYkR6rV9cDh3Lm8NpTa2Xw" {
		t.Errorf("tool_use block = %v", a[1])
	}
	if u := body.Messages[2].Content[0]; u["type"] != "tool_result" || u["tool_use_id"] != "toolu_01QYkR6rV9cDh3Lm8NpTa2Xw" {
		t.Errorf("tool_result block = %v", u)
	}
}

// TestFakeRejectsBadHistory makes sure the multi-turn test proves
// something: the same history without the thinking block, sent raw with
// thinking on, is refused by the fake.
func TestFakeRejectsBadHistory(t *testing.T) {
	body := `{"model":"m","max_tokens":4096,"stream":true,"thinking":{"type":"enabled","budget_tokens":2048},"messages":[
		{"role":"user","content":"q"},
		{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"a","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"A"}]}]}`
	if err := anthropictest.Validate([]byte(body)); err == nil || !strings.Contains(err.Error(), "must start with a thinking block") {
		t.Errorf("Validate = %v", err)
	}
}

// assemble builds the assistant message from chunks as the agent loop does.
func assemble(chunks []provider.Chunk) provider.Message {
	m := provider.Message{Role: provider.RoleAssistant}
	var cur *provider.Reasoning
	for _, c := range chunks {
		switch c.Kind {
		case provider.ChunkReasoning:
			if c.Redacted != "" {
				m.Reasoning = append(m.Reasoning, provider.Reasoning{Redacted: c.Redacted})
				cur = nil
				continue
			}
			if cur == nil {
				m.Reasoning = append(m.Reasoning, provider.Reasoning{})
				cur = &m.Reasoning[len(m.Reasoning)-1]
			}
			cur.Text += c.Text
			if c.Signature != "" {
				cur.Signature = c.Signature
				cur = nil
			}
		case provider.ChunkText:
			m.Text += c.Text
			cur = nil
		case provider.ChunkToolCall:
			cur = nil
			d := c.ToolCall
			for len(m.ToolCalls) <= d.Index {
				m.ToolCalls = append(m.ToolCalls, provider.ToolCall{})
			}
			tc := &m.ToolCalls[d.Index]
			if d.ID != "" {
				tc.ID, tc.Name = d.ID, d.Name
			}
			tc.Args = append(tc.Args, d.ArgsFragment...)
		}
	}
	return m
}

func TestModels(t *testing.T) {
	p, srv, _ := newTest(t)
	srv.SetModels(2, "claude-sonnet-4-5-20250929", "claude-opus-4-1-20250805", "claude-3-5-haiku-20241022", "claude-opus-4-20250514", "claude-3-7-sonnet-20250219")
	got, err := p.Models(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"claude-3-5-haiku-20241022", "claude-3-7-sonnet-20250219", "claude-opus-4-1-20250805", "claude-opus-4-20250514", "claude-sonnet-4-5-20250929"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Models = %v, want %v", got, want)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3 pages", len(reqs))
	}
	if reqs[1].Path != "/v1/models?after_id=claude-opus-4-1-20250805&limit=1000" {
		t.Errorf("second page = %s", reqs[1].Path)
	}
	for _, r := range reqs {
		if r.Method != http.MethodGet || r.Header.Get("X-Api-Key") != testKey || r.Header.Get("Anthropic-Version") == "" {
			t.Errorf("request %s %s %v", r.Method, r.Path, r.Header)
		}
	}
}

func TestModelsAuth(t *testing.T) {
	p, _, _ := newTest(t, func(c *Config) { c.APIKey = "sk-ant-wrong-key-123456" })
	_, err := p.Models(context.Background())
	checkCode(t, err, "auth")
	if err != nil && strings.Contains(err.Error(), "sk-ant-wrong-key-123456") {
		t.Errorf("error shows the key: %v", err)
	}
}

func TestConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	base := srv.URL
	srv.Close()
	log := &retryLog{}
	p, err := New(Config{BaseURL: base, APIKey: testKey, OnRetry: log.add,
		Backoff: wire.Backoff{Attempts: 2, Base: time.Millisecond, Max: 5 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = collect(t, context.Background(), p, hello)
	checkCode(t, err, "connection")
	if len(log.waits) != 1 {
		t.Errorf("%d retries, want 1", len(log.waits))
	}
}

func TestJSONInsteadOfStream(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`))
	}))
	defer srv.Close()
	p, err := New(Config{BaseURL: srv.URL + "/v1/", APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	_, err = collect(t, context.Background(), p, hello)
	checkCode(t, err, "overloaded")
}

func TestNoModel(t *testing.T) {
	p, srv, _ := newTest(t)
	_, err := collect(t, context.Background(), p, provider.Request{Messages: []provider.Message{user("hi")}})
	checkCode(t, err, "bad_request")
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"defaults", Config{APIKey: "k"}, ""},
		{"gateway auth instead of a key", Config{BaseURL: "http://gw.local/anthropic", Headers: map[string]string{"Authorization": "Bearer t"}}, ""},
		{"no key", Config{}, "API key is required"},
		{"bad URL", Config{APIKey: "k", BaseURL: "api.anthropic.com"}, "not an http(s) URL"},
		{"reserved header", Config{APIKey: "k", Headers: map[string]string{"x-api-key": "other"}}, "set by the provider"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(tt.cfg)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if p.base == "" || p.defaultMax != DefaultMaxTokens || p.version != DefaultVersion || p.client == nil {
					t.Errorf("defaults not applied: %+v", p)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestGatewayTokenRedacted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"error":{"message":"token ` + r.Header.Get("Authorization") + ` refused"}}`))
	}))
	defer srv.Close()
	p, err := New(Config{BaseURL: srv.URL, Headers: map[string]string{"Authorization": "Bearer gw-secret-77"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = collect(t, context.Background(), p, hello)
	checkCode(t, err, "auth")
	if err != nil && strings.Contains(err.Error(), "gw-secret-77") {
		t.Errorf("error shows the gateway token: %v", err)
	}
}

func TestErrorCode(t *testing.T) {
	for typ, want := range map[string]string{
		"overloaded_error":      "overloaded",
		"rate_limit_error":      "rate_limited",
		"api_error":             "server_error",
		"":                      "server_error",
		"invalid_request_error": "bad_request",
		"authentication_error":  "auth",
		"permission_error":      "auth",
		"not_found_error":       "not_found",
		"request_too_large":     "too_large",
		"billing_error":         "billing",
	} {
		if got := errorCode(typ); got != want {
			t.Errorf("errorCode(%q) = %q, want %q", typ, got, want)
		}
	}
}
