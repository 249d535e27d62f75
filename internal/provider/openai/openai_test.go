package openai

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/provider/openai/openaitest"
	"github.com/caduceus-dev/caduceus/internal/provider/wire"
)

// tinyBackoff retries without noticeable waits.
func tinyBackoff(attempts int) wire.Backoff {
	return wire.Backoff{Attempts: attempts, Base: time.Millisecond, Max: 20 * time.Millisecond, Jitter: func() float64 { return 0 }}
}

func newTestProvider(t *testing.T, srv *openaitest.Server, mutate func(*Config)) *Provider {
	t.Helper()
	cfg := Config{Name: "testprov", BaseURL: srv.BaseURL(), Backoff: tinyBackoff(3)}
	if mutate != nil {
		mutate(&cfg)
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func simpleRequest() provider.Request {
	return provider.Request{Model: "gpt-4o-mini", Messages: []provider.Message{{Role: provider.RoleUser, Text: "hi"}}}
}

func textOfChunks(cs []provider.Chunk) string {
	var b strings.Builder
	for _, c := range cs {
		if c.Kind == provider.ChunkText {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

func wantCode(t *testing.T, err error, code string) *provider.Error {
	t.Helper()
	pe, ok := provider.AsError(err)
	if !ok || pe.Code != code {
		t.Fatalf("error %v, want a provider error with code %s", err, code)
	}
	if pe.Provider != "testprov" {
		t.Fatalf("error from provider %q, want testprov", pe.Provider)
	}
	return pe
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
		wantURL string
	}{
		{"defaults", Config{}, "", "https://api.openai.com/v1/chat/completions"},
		{"trailing slash", Config{BaseURL: "http://localhost:11434/v1/"}, "", "http://localhost:11434/v1/chat/completions"},
		{"several trailing slashes", Config{BaseURL: "http://localhost:8080//"}, "", "http://localhost:8080/chat/completions"},
		{"query is kept", Config{BaseURL: "https://x.openai.azure.com/openai/deployments/d?api-version=2024-10-21"}, "",
			"https://x.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21"},
		{"no scheme", Config{BaseURL: "localhost:11434/v1"}, "must start with http", ""},
		{"other scheme", Config{BaseURL: "ftp://example.com"}, "must start with http", ""},
		{"no host", Config{BaseURL: "http:///v1"}, "no host", ""},
		{"credentials in the URL", Config{BaseURL: "https://user:pass@example.com/v1"}, "must not contain credentials", ""},
		{"fragment", Config{BaseURL: "https://example.com/v1#x"}, "fragment", ""},
		{"unparseable", Config{BaseURL: "http://[::1"}, "invalid base URL", ""},
		{"bad header name", Config{Headers: map[string]string{"Bad Header": "x"}}, "invalid header", ""},
		{"header value with a newline", Config{Headers: map[string]string{"X-Title": "a\r\nInjected: 1"}}, "invalid header", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(tt.cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "pass") {
					t.Fatalf("error %q repeats the credentials", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := p.endpoint("chat/completions"); got != tt.wantURL {
				t.Fatalf("endpoint %q, want %q", got, tt.wantURL)
			}
		})
	}
	p, _ := New(Config{})
	if p.Name() != "openai" || p.Demo() {
		t.Fatalf("Name %q Demo %v", p.Name(), p.Demo())
	}
	p, _ = New(Config{Name: "ollama"})
	if p.Name() != "ollama" {
		t.Fatalf("Name %q", p.Name())
	}
}

func TestRequestHeadersAndBody(t *testing.T) {
	srv := openaitest.NewServer()
	defer srv.Close()
	srv.RequireKey("sk-test-0123456789abcdef")

	p := newTestProvider(t, srv, func(c *Config) {
		c.APIKey = "sk-test-0123456789abcdef"
		c.Headers = map[string]string{"HTTP-Referer": "https://caduceus.example", "X-Title": "Caduceus"}
	})
	srv.Enqueue(openaitest.Stream(openaitest.Fixture("text")))
	req := simpleRequest()
	req.MaxTokens = 64
	r := drain(t, p.Stream(context.Background(), req))
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	got := srv.Requests()
	if len(got) != 1 {
		t.Fatalf("%d requests", len(got))
	}
	rq := got[0]
	for k, want := range map[string]string{
		"Authorization": "Bearer sk-test-0123456789abcdef",
		"Content-Type":  "application/json",
		"Accept":        "text/event-stream, application/json",
		"HTTP-Referer":  "https://caduceus.example",
		"X-Title":       "Caduceus",
	} {
		if v := rq.Header.Get(k); v != want {
			t.Errorf("header %s = %q, want %q", k, v, want)
		}
	}
	if rq.Method != http.MethodPost || rq.Path != "/v1/chat/completions" {
		t.Errorf("%s %s", rq.Method, rq.Path)
	}
	var body struct {
		Model         string `json:"model"`
		Stream        bool   `json:"stream"`
		MaxTokens     int    `json:"max_tokens"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	if err := rq.Decode(&body); err != nil {
		t.Fatal(err)
	}
	if body.Model != "gpt-4o-mini" || !body.Stream || !body.StreamOptions.IncludeUsage || body.MaxTokens != 64 {
		t.Errorf("body %+v", body)
	}

	t.Run("no key, no Authorization", func(t *testing.T) {
		srv := openaitest.NewServer()
		defer srv.Close()
		srv.Enqueue(openaitest.Stream(openaitest.Fixture("text")))
		p := newTestProvider(t, srv, nil)
		if r := drain(t, p.Stream(context.Background(), simpleRequest())); r.Err != nil {
			t.Fatal(r.Err)
		}
		if h, ok := srv.Requests()[0].Header["Authorization"]; ok {
			t.Fatalf("Authorization %q sent without a key", h)
		}
	})
	t.Run("the key wins over a header of the same name", func(t *testing.T) {
		srv := openaitest.NewServer()
		defer srv.Close()
		srv.Enqueue(openaitest.Stream(openaitest.Fixture("text")))
		p := newTestProvider(t, srv, func(c *Config) {
			c.APIKey = "sk-real-key-1234"
			c.Headers = map[string]string{"Authorization": "Bearer other"}
		})
		drain(t, p.Stream(context.Background(), simpleRequest()))
		if h := srv.Requests()[0].Header.Get("Authorization"); h != "Bearer sk-real-key-1234" {
			t.Fatalf("Authorization %q", h)
		}
	})
}

func TestRealisticConversationPassesValidation(t *testing.T) {
	// The fake server checks history like the real API: a converted
	// multi-turn conversation with tool calls must be accepted.
	srv := openaitest.NewServer()
	defer srv.Close()
	p := newTestProvider(t, srv, nil)
	srv.Enqueue(openaitest.Stream(openaitest.Fixture("parallel_tool_calls")), openaitest.Stream(openaitest.Fixture("text")))

	msgs := []provider.Message{{Role: provider.RoleUser, Text: "Weather in Paris and Tokyo?"}}
	r := drain(t, p.Stream(context.Background(), provider.Request{Model: "m", Messages: msgs, Tools: []provider.ToolSpec{{Name: "get_weather"}}}))
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	// Rebuild the assistant message the way the agent does.
	asst := provider.Message{Role: provider.RoleAssistant}
	for _, c := range r.Chunks {
		if c.Kind != provider.ChunkToolCall {
			continue
		}
		if c.ToolCall.ID != "" {
			asst.ToolCalls = append(asst.ToolCalls, provider.ToolCall{ID: c.ToolCall.ID, Name: c.ToolCall.Name})
		}
		tc := &asst.ToolCalls[c.ToolCall.Index]
		tc.Args = append(tc.Args, c.ToolCall.ArgsFragment...)
	}
	res := provider.Message{Role: provider.RoleTool}
	for _, tc := range asst.ToolCalls {
		res.ToolResults = append(res.ToolResults, provider.ToolResult{ToolCallID: tc.ID, Content: "18°C"})
	}
	msgs = append(msgs, asst, res)
	r = drain(t, p.Stream(context.Background(), provider.Request{Model: "m", Messages: msgs}))
	if r.Err != nil {
		t.Fatalf("second turn rejected: %v", r.Err)
	}
	if textOfChunks(r.Chunks) != "Hello! 👋 How can I help you today?" {
		t.Fatalf("text %q", textOfChunks(r.Chunks))
	}
}

func TestHTTPErrors(t *testing.T) {
	tests := []struct {
		name      string
		replies   []openaitest.Reply
		req       provider.Request
		code      string
		message   []string
		requests  int
		retryable bool
	}{
		{"400 carries the server's message", []openaitest.Reply{openaitest.Error(400, "Invalid 'messages[0].content': string too short.")},
			simpleRequest(), "bad_request", []string{"Invalid 'messages[0].content': string too short."}, 1, false},
		{"request rejected by validation",
			nil,
			provider.Request{Model: "m", Messages: []provider.Message{
				{Role: provider.RoleUser, Text: "hi"},
				{Role: provider.RoleTool, ToolResults: []provider.ToolResult{{ToolCallID: "ghost", Content: "x"}}},
			}},
			"bad_request", []string{"must be a response to a preceeding message with 'tool_calls'"}, 1, false},
		{"404 model", []openaitest.Reply{openaitest.Error(404, "The model `gpt-9` does not exist or you do not have access to it.")},
			simpleRequest(), "not_found", []string{"gpt-9"}, 1, false},
		{"500 on every try exhausts the retries", []openaitest.Reply{
			openaitest.Error(500, "The server had an error while processing your request."),
			openaitest.Error(500, "The server had an error while processing your request."),
			openaitest.Error(500, "The server had an error while processing your request.")},
			simpleRequest(), "server_error", []string{"The server had an error"}, 3, true},
		{"429 on every try", []openaitest.Reply{
			openaitest.Error(429, "Rate limit reached"), openaitest.Error(429, "Rate limit reached"), openaitest.Error(429, "Rate limit reached")},
			simpleRequest(), "rate_limited", []string{"Rate limit reached"}, 3, true},
		{"200 with an error body", []openaitest.Reply{openaitest.JSON(200, `{"error":{"message":"quota exceeded","type":"insufficient_quota"}}`)},
			simpleRequest(), "rate_limited", []string{"quota exceeded"}, 1, false},
		{"200 with a transient error body", []openaitest.Reply{openaitest.JSON(200, `{"error":{"message":"try again","type":"server_error"}}`)},
			simpleRequest(), "server_error", []string{"try again"}, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := openaitest.NewServer()
			defer srv.Close()
			srv.Enqueue(tt.replies...)
			p := newTestProvider(t, srv, nil)
			r := drain(t, p.Stream(context.Background(), tt.req))
			pe := wantCode(t, r.Err, tt.code)
			for _, m := range tt.message {
				if !strings.Contains(pe.Message, m) {
					t.Errorf("message %q lacks %q", pe.Message, m)
				}
			}
			if n := len(srv.Requests()); n != tt.requests {
				t.Errorf("%d requests, want %d", n, tt.requests)
			}
			if pe.Retryable != tt.retryable {
				t.Errorf("retryable %v, want %v", pe.Retryable, tt.retryable)
			}
			if len(r.Chunks) != 0 {
				t.Errorf("chunks before the error: %v", r.Chunks)
			}
		})
	}
}

func TestRetryThenSuccess(t *testing.T) {
	tests := []struct {
		name     string
		reply    openaitest.Reply
		wantWait time.Duration
	}{
		{"retry-after-ms", openaitest.Reply{Status: 429, Body: `{"error":{"message":"slow down"}}`, Header: http.Header{"Retry-After-Ms": {"15"}}}, 15 * time.Millisecond},
		{"retry-after capped by the backoff", func() openaitest.Reply {
			r := openaitest.Error(429, "slow down")
			r.RetryAfter = "1"
			return r
		}(), 20 * time.Millisecond},
		{"503", openaitest.Error(503, "overloaded"), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := openaitest.NewServer()
			defer srv.Close()
			srv.Enqueue(tt.reply, openaitest.Stream(openaitest.Fixture("text")))
			var mu sync.Mutex
			var waits []time.Duration
			var whys []string
			p := newTestProvider(t, srv, func(c *Config) {
				c.OnRetry = func(attempt int, wait time.Duration, why string) {
					mu.Lock()
					defer mu.Unlock()
					waits, whys = append(waits, wait), append(whys, why)
				}
			})
			start := time.Now()
			r := drain(t, p.Stream(context.Background(), simpleRequest()))
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			if textOfChunks(r.Chunks) != "Hello! 👋 How can I help you today?" || len(srv.Requests()) != 2 {
				t.Fatalf("text %q after %d requests", textOfChunks(r.Chunks), len(srv.Requests()))
			}
			if len(waits) != 1 || waits[0] != tt.wantWait || time.Since(start) < tt.wantWait {
				t.Fatalf("waits %v (%v), want one of %v", waits, whys, tt.wantWait)
			}
		})
	}
}

func TestAuthError(t *testing.T) {
	srv := openaitest.NewServer()
	defer srv.Close()
	srv.RequireKey("sk-right-key-000000000000")
	const wrong = "sk-wrong-key-123456789012"
	p := newTestProvider(t, srv, func(c *Config) { c.APIKey = wrong })
	r := drain(t, p.Stream(context.Background(), simpleRequest()))
	pe := wantCode(t, r.Err, "auth")
	if !strings.Contains(pe.Message, "Check the API key configured for testprov") || !strings.Contains(pe.Message, "Incorrect API key provided") {
		t.Fatalf("message %q", pe.Message)
	}
	// Neither the key nor the server's masked echo of it may surface.
	for _, leak := range []string{wrong, "sk-", "9012"} {
		if strings.Contains(pe.Message, leak) || strings.Contains(r.Err.Error(), leak) {
			t.Fatalf("message %q leaks %q", pe.Message, leak)
		}
	}
	if pe.Retryable || len(srv.Requests()) != 1 {
		t.Fatalf("retryable %v after %d requests", pe.Retryable, len(srv.Requests()))
	}
}

func TestSecretsInCustomHeadersAreRedacted(t *testing.T) {
	tests := []struct {
		header, value, echoed string
	}{
		{"api-key", "azure-secret-value", "azure-secret-value"},
		{"Proxy-Authorization", "Bearer proxy-token-0000", "proxy-token-0000"},
	}
	for _, tt := range tests {
		t.Run(tt.header, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusBadRequest)
				w.Write([]byte(`{"error":{"message":"bad key ` + tt.echoed + ` for proxy"}}`))
			}))
			defer srv.Close()
			p, err := New(Config{Name: "testprov", BaseURL: srv.URL, Headers: map[string]string{tt.header: tt.value}, Backoff: tinyBackoff(1)})
			if err != nil {
				t.Fatal(err)
			}
			r := drain(t, p.Stream(context.Background(), simpleRequest()))
			pe := wantCode(t, r.Err, "bad_request")
			if strings.Contains(pe.Message, tt.echoed) || !strings.Contains(pe.Message, "bad key [redacted] for proxy") {
				t.Fatalf("message %q", pe.Message)
			}
		})
	}
}

func TestConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	retries := 0
	p, err := New(Config{Name: "testprov", BaseURL: "http://" + addr + "/v1", Backoff: tinyBackoff(2),
		OnRetry: func(int, time.Duration, string) { retries++ }})
	if err != nil {
		t.Fatal(err)
	}
	r := drain(t, p.Stream(context.Background(), simpleRequest()))
	pe := wantCode(t, r.Err, "connection")
	if !pe.Retryable || retries != 1 || !strings.Contains(pe.Message, "cannot reach the server") {
		t.Fatalf("%+v after %d retries", pe, retries)
	}
}

func TestStreamCut(t *testing.T) {
	tests := []struct {
		name  string
		reply openaitest.Reply
		text  string
	}{
		{"connection dropped between events", openaitest.Reply{SSE: openaitest.Fixture("text"), CutAfterEvents: 4}, "Hello! 👋"},
		{"connection dropped mid-line", openaitest.Reply{SSE: openaitest.Fixture("text"),
			CutAfterBytes: bytes.Index(openaitest.Fixture("text"), []byte(`" 👋"`))}, "Hello!"},
		{"body ends without a finish", openaitest.Stream(openaitest.Fixture("truncated")), "The migration has three steps:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := openaitest.NewServer()
			defer srv.Close()
			srv.Enqueue(tt.reply)
			p := newTestProvider(t, srv, nil)
			r := drain(t, p.Stream(context.Background(), simpleRequest()))
			pe := wantCode(t, r.Err, "stream_cut")
			if pe.Retryable {
				t.Error("a cut after tokens must not be retryable")
			}
			if got := textOfChunks(r.Chunks); got != tt.text {
				t.Fatalf("text before the cut %q, want %q", got, tt.text)
			}
			for _, c := range r.Chunks {
				if c.Kind != provider.ChunkText {
					t.Fatalf("unexpected %v chunk before the cut", c.Kind)
				}
			}
			if len(srv.Requests()) != 1 {
				t.Fatalf("%d requests: a started stream must not be retried", len(srv.Requests()))
			}
		})
	}
}

func TestErrorEventMidStream(t *testing.T) {
	srv := openaitest.NewServer()
	defer srv.Close()
	srv.Enqueue(openaitest.Stream(openaitest.Fixture("error_midstream")))
	p := newTestProvider(t, srv, nil)
	r := drain(t, p.Stream(context.Background(), simpleRequest()))
	pe := wantCode(t, r.Err, "server_error")
	if textOfChunks(r.Chunks) != "Here is the first part" || pe.Retryable || !strings.Contains(pe.Message, "Sorry about that") {
		t.Fatalf("text %q error %+v", textOfChunks(r.Chunks), pe)
	}
}

func TestCancelMidStream(t *testing.T) {
	srv := openaitest.NewServer()
	defer srv.Close()
	// Ten more events at 300 ms each: finishing would take 3 s.
	srv.Enqueue(openaitest.Reply{SSE: openaitest.Fixture("text"), EventDelay: 300 * time.Millisecond})
	p := newTestProvider(t, srv, nil)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []provider.Chunk
	var last error
	var cancelledAt time.Time
	for c, err := range p.Stream(ctx, simpleRequest()) {
		if err != nil {
			last = err
			break
		}
		got = append(got, c)
		if c.Kind == provider.ChunkText && cancelledAt.IsZero() {
			cancelledAt = time.Now()
			cancel()
		}
	}
	if !errors.Is(last, context.Canceled) {
		t.Fatalf("ended with %v, want context.Canceled", last)
	}
	if el := time.Since(cancelledAt); el > time.Second {
		t.Fatalf("iterator ended %v after the cancel", el)
	}
	if len(got) != 1 || got[0].Text != "Hello" {
		t.Fatalf("chunks %v", got)
	}
	select {
	case <-srv.ClientGone():
	case <-time.After(5 * time.Second):
		t.Fatal("the server never saw the connection close")
	}
}

func TestBreakClosesTheConnection(t *testing.T) {
	srv := openaitest.NewServer()
	defer srv.Close()
	srv.Enqueue(openaitest.Reply{SSE: openaitest.Fixture("text"), EventDelay: 300 * time.Millisecond})
	p := newTestProvider(t, srv, nil)
	for c, err := range p.Stream(context.Background(), simpleRequest()) {
		if err != nil || c.Kind == provider.ChunkText {
			break
		}
	}
	select {
	case <-srv.ClientGone():
	case <-time.After(5 * time.Second):
		t.Fatal("breaking out of the loop left the request running")
	}
}

func TestCancelWhileWaitingToRetry(t *testing.T) {
	srv := openaitest.NewServer()
	defer srv.Close()
	srv.SetDefault(openaitest.Error(503, "busy"))
	p := newTestProvider(t, srv, func(c *Config) {
		c.Backoff = wire.Backoff{Attempts: 5, Base: time.Hour, Max: time.Hour, Jitter: func() float64 { return 0.5 }}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	r := drain(t, p.Stream(ctx, simpleRequest()))
	if !errors.Is(r.Err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Fatalf("err %v after %v", r.Err, time.Since(start))
	}
}

func TestCompatFallbacks(t *testing.T) {
	t.Run("max_completion_tokens", func(t *testing.T) {
		srv := openaitest.NewServer()
		defer srv.Close()
		srv.Enqueue(
			openaitest.Error(400, "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."),
			openaitest.Stream(openaitest.Fixture("text")),
			openaitest.Stream(openaitest.Fixture("text")),
			openaitest.Stream(openaitest.Fixture("text")),
		)
		p := newTestProvider(t, srv, nil)
		req := simpleRequest()
		req.Model, req.MaxTokens = "o3", 100
		for range 2 {
			if r := drain(t, p.Stream(context.Background(), req)); r.Err != nil {
				t.Fatal(r.Err)
			}
		}
		other := simpleRequest()
		other.MaxTokens = 100
		if r := drain(t, p.Stream(context.Background(), other)); r.Err != nil {
			t.Fatal(r.Err)
		}
		var fields []string
		for _, rq := range srv.Requests() {
			_, old := rq.Body["max_tokens"]
			_, new := rq.Body["max_completion_tokens"]
			fields = append(fields, map[[2]bool]string{{true, false}: "max_tokens", {false, true}: "max_completion_tokens"}[[2]bool{old, new}])
		}
		// The retry switches; the next call to that model starts switched;
		// another model is not affected.
		if want := "max_tokens max_completion_tokens max_completion_tokens max_tokens"; strings.Join(fields, " ") != want {
			t.Fatalf("fields %q, want %q", fields, want)
		}
	})
	t.Run("stream_options", func(t *testing.T) {
		srv := openaitest.NewServer()
		defer srv.Close()
		srv.Enqueue(openaitest.Error(400, "Unrecognized request argument supplied: stream_options"), openaitest.Stream(openaitest.Fixture("no_done")))
		p := newTestProvider(t, srv, nil)
		if r := drain(t, p.Stream(context.Background(), simpleRequest())); r.Err != nil {
			t.Fatal(r.Err)
		}
		rs := srv.Requests()
		if _, ok := rs[0].Body["stream_options"]; !ok || len(rs) != 2 {
			t.Fatalf("%d requests", len(rs))
		}
		if _, ok := rs[1].Body["stream_options"]; ok {
			t.Fatal("stream_options sent again")
		}
	})
}

func TestNonStreamedAnswer(t *testing.T) {
	srv := openaitest.NewServer()
	defer srv.Close()
	srv.Enqueue(openaitest.JSON(200, `{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Whole answer."},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}`))
	p := newTestProvider(t, srv, nil)
	r := drain(t, p.Stream(context.Background(), simpleRequest()))
	checkResult(t, r, seq(text("Whole answer."), usage(3, 2, 0, 0), done(provider.StopEnd)), "")
}

func TestConcurrentStreams(t *testing.T) {
	srv := openaitest.NewServer()
	defer srv.Close()
	srv.SetDefault(openaitest.Stream(openaitest.Fixture("parallel_tool_calls")))
	p := newTestProvider(t, srv, nil)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			var n int
			for c, err := range p.Stream(context.Background(), simpleRequest()) {
				if err != nil {
					t.Error(err)
					return
				}
				if c.Kind == provider.ChunkToolCall {
					n++
				}
			}
			if n != 10 {
				t.Errorf("%d tool call chunks, want 10", n)
			}
		})
	}
	wg.Wait()
}

func TestModels(t *testing.T) {
	t.Run("listed, sorted, deduplicated", func(t *testing.T) {
		srv := openaitest.NewServer()
		defer srv.Close()
		srv.RequireKey("sk-models-key-1234")
		srv.SetModels("gpt-4o", "gpt-4o-mini", "o3", "gpt-4o")
		p := newTestProvider(t, srv, func(c *Config) { c.APIKey = "sk-models-key-1234" })
		got, err := p.Models(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, ",") != "gpt-4o,gpt-4o-mini,o3" {
			t.Fatalf("models %q", got)
		}
		rq := srv.Requests()[0]
		if rq.Method != http.MethodGet || rq.Path != "/v1/models" || rq.Header.Get("Accept") != "application/json" {
			t.Fatalf("request %s %s %v", rq.Method, rq.Path, rq.Header)
		}
	})
	t.Run("wrong key", func(t *testing.T) {
		srv := openaitest.NewServer()
		defer srv.Close()
		srv.RequireKey("sk-models-key-1234")
		p := newTestProvider(t, srv, func(c *Config) { c.APIKey = "sk-other-key-5678" })
		_, err := p.Models(context.Background())
		pe := wantCode(t, err, "auth")
		if strings.Contains(pe.Message, "5678") {
			t.Fatalf("message %q leaks the key", pe.Message)
		}
	})
	tests := []struct {
		name string
		body string
		want string
		code string
	}{
		{"llama.cpp lists models too", `{"models":[{"name":"qwen3-8b.gguf","model":"qwen3-8b.gguf"}],"object":"list","data":[{"id":"qwen3-8b.gguf","object":"model"}]}`, "qwen3-8b.gguf", ""},
		{"only a models list", `{"models":[{"model":"b"},{"name":"a"}]}`, "a,b", ""},
		{"empty", `{"object":"list","data":[]}`, "", ""},
		{"not JSON", `<html>proxy</html>`, "", "bad_response"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			p, _ := New(Config{Name: "testprov", BaseURL: srv.URL, Backoff: tinyBackoff(1)})
			got, err := p.Models(context.Background())
			if tt.code != "" {
				wantCode(t, err, tt.code)
				return
			}
			if err != nil || strings.Join(got, ",") != tt.want {
				t.Fatalf("models %q err %v, want %q", got, err, tt.want)
			}
		})
	}
}
