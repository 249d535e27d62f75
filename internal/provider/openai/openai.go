// Package openai is a provider.Provider for the OpenAI Chat Completions
// API and the servers that copy it: OpenAI itself, OpenRouter, Ollama's
// /v1, vLLM, the llama.cpp server and LM Studio. It is a small client over
// net/http rather than the official SDK, whose typed structs would hide the
// fields compatible servers add (reasoning_content, reasoning) and whose
// size would dwarf the rest of the binary.
//
// Every call streams (stream:true with usage in the last chunk). The
// decoder is lenient where compatible servers differ — tool-call fragments
// without an index, whole tool calls in one fragment, usage attached to a
// chunk with choices, a stream that ends after its finish_reason without
// [DONE] — and strict where a lenient reading would lose data: a body that
// stops before the model finished is a stream_cut error, never a silently
// shorter answer.
package openai

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"iter"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/provider/wire"
)

// DefaultBaseURL is OpenAI's own API.
const DefaultBaseURL = "https://api.openai.com/v1"

// Config configures one OpenAI-compatible endpoint.
type Config struct {
	// Name identifies the provider in errors and events ("openai",
	// "openrouter", "ollama", ...); empty means "openai".
	Name string
	// BaseURL is the API root that /chat/completions and /models hang
	// off; empty means DefaultBaseURL. A trailing slash is tolerated and a
	// query (Azure's api-version) is kept on every request.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer"; empty sends no
	// Authorization header (Ollama, llama.cpp and LM Studio need none).
	APIKey string
	// Headers are added to every request (OpenRouter's HTTP-Referer and
	// X-Title, a proxy's own key). Values of headers whose name suggests a
	// credential are redacted from error messages like APIKey.
	Headers map[string]string
	// HTTPClient sends the requests; nil means a client with connection
	// timeouts but no overall timeout, because a stream legitimately runs
	// for minutes.
	HTTPClient *http.Client
	// Backoff governs retries of requests that fail before the response
	// starts (429, 5xx, connection errors).
	Backoff wire.Backoff
	// OnRetry, when set, hears about every retry (for a status line).
	OnRetry func(attempt int, wait time.Duration, why string)
}

// Provider streams Chat Completions. It is safe for concurrent use.
type Provider struct {
	name    string
	base    *url.URL
	key     string
	headers map[string]string
	secrets []string
	client  *http.Client
	backoff wire.Backoff
	onRetry func(attempt int, wait time.Duration, why string)

	// compat remembers, per model, the request adjustments a server asked
	// for with a 400, so only the first call to that model pays the extra
	// round trip.
	mu     sync.Mutex
	compat map[string]compat
}

var _ provider.Provider = (*Provider)(nil)

// New checks cfg and returns a provider for it.
func New(cfg Config) (*Provider, error) {
	name := cfg.Name
	if name == "" {
		name = "openai"
	}
	raw := strings.TrimSpace(cfg.BaseURL)
	if raw == "" {
		raw = DefaultBaseURL
	}
	base, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: invalid base URL %q: %v", name, raw, err)
	}
	switch {
	case base.Scheme != "http" && base.Scheme != "https":
		return nil, fmt.Errorf("%s: base URL %q must start with http:// or https://", name, raw)
	case base.Host == "":
		return nil, fmt.Errorf("%s: base URL %q has no host", name, raw)
	case base.User != nil:
		// Credentials in the URL would travel into error messages and
		// logs; they belong in APIKey or Headers, which are redacted.
		return nil, fmt.Errorf("%s: base URL must not contain credentials; set the API key instead", name)
	case base.Fragment != "":
		return nil, fmt.Errorf("%s: base URL %q must not contain a fragment", name, raw)
	}
	base.Path = strings.TrimRight(base.Path, "/")
	base.RawPath = ""

	p := &Provider{
		name:    name,
		base:    base,
		key:     cfg.APIKey,
		headers: make(map[string]string, len(cfg.Headers)),
		client:  cfg.HTTPClient,
		backoff: cfg.Backoff,
		onRetry: cfg.OnRetry,
		compat:  map[string]compat{},
	}
	if cfg.APIKey != "" {
		p.secrets = append(p.secrets, cfg.APIKey)
	}
	for k, v := range cfg.Headers {
		if !validHeaderName(k) || strings.ContainsAny(v, "\r\n\x00") {
			return nil, fmt.Errorf("%s: invalid header %q", name, k)
		}
		p.headers[k] = v
		if credentialHeader(k) && v != "" {
			p.secrets = append(p.secrets, v)
			// Servers echo the token without its scheme.
			if _, tok, ok := strings.Cut(v, " "); ok && len(tok) >= 8 {
				p.secrets = append(p.secrets, strings.TrimSpace(tok))
			}
		}
	}
	if p.client == nil {
		p.client = defaultClient()
	}
	return p, nil
}

// Name implements provider.Provider.
func (p *Provider) Name() string { return p.name }

// Demo implements provider.Provider; a real model is never the demo.
func (p *Provider) Demo() bool { return false }

// Stream implements provider.Provider: one streamed Chat Completions call.
func (p *Provider) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Chunk, error] {
	return func(yield func(provider.Chunk, error) bool) {
		// The derived context makes an early return (the consumer broke
		// off) abort the request instead of leaving the body half read.
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()

		resp, err := p.open(ctx, req)
		if err != nil {
			yield(provider.Chunk{}, err)
			return
		}
		defer resp.Body.Close()

		d := newDecoder(p.name, p.secrets)
		if isJSON(resp.Header.Get("Content-Type")) {
			// A server (or proxy) that ignored stream:true answers with one
			// chat.completion object; it is still a complete answer.
			d.whole(ctx, resp.Body, yield)
			return
		}
		d.stream(ctx, wire.NewSSEReader(resp.Body), yield)
	}
}

// open sends the request until it gets a successful response. A 400 that
// names a parameter the server does not take is answered by adjusting the
// request once and resending; every other failure becomes the error.
func (p *Provider) open(ctx context.Context, req provider.Request) (*http.Response, error) {
	c := p.compatFor(req.Model)
	for {
		body, err := encodeRequest(req, c)
		if err != nil {
			return nil, &provider.Error{Provider: p.name, Code: "bad_request", Message: wire.Redact(err.Error(), p.secrets...)}
		}
		resp, err := p.do(ctx, http.MethodPost, "chat/completions", body)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode/100 == 2 {
			return resp, nil
		}
		perr := wire.ResponseError(p.name, resp, p.secrets...)
		if resp.StatusCode == http.StatusBadRequest {
			if next, ok := c.adjust(perr.Message, req); ok {
				c = next
				p.rememberCompat(req.Model, c)
				continue
			}
		}
		return nil, perr
	}
}

// do sends one request through wire.Do, mapping failures before the
// response to provider errors. The response is the caller's to close.
func (p *Provider) do(ctx context.Context, method, path string, body []byte) (*http.Response, error) {
	u := p.endpoint(path)
	newReq := func(ctx context.Context) (*http.Request, error) {
		var r io.Reader
		if body != nil {
			r = bytes.NewReader(body)
		}
		hr, err := http.NewRequestWithContext(ctx, method, u, r)
		if err != nil {
			return nil, err
		}
		if body != nil {
			hr.Header.Set("Content-Type", "application/json")
			// JSON too: errors, and servers that ignore stream:true,
			// answer with it.
			hr.Header.Set("Accept", "text/event-stream, application/json")
		} else {
			hr.Header.Set("Accept", "application/json")
		}
		hr.Header.Set("User-Agent", "caduceus")
		for k, v := range p.headers {
			hr.Header.Set(k, v)
		}
		if p.key != "" {
			hr.Header.Set("Authorization", "Bearer "+p.key)
		}
		return hr, nil
	}
	resp, err := wire.Do(ctx, p.client, p.backoff, newReq, p.onRetry)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, wire.TransportError(p.name, err, p.secrets...)
	}
	return resp, nil
}

// endpoint joins path to the base URL, keeping the base's query.
func (p *Provider) endpoint(path string) string {
	u := *p.base
	u.Path = p.base.Path + "/" + path
	return u.String()
}

func (p *Provider) compatFor(model string) compat {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.compat[model]
}

func (p *Provider) rememberCompat(model string, c compat) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.compat[model] = c
}

// defaultClient bounds connecting, but not the response: a reasoning model
// may think for minutes before its first byte and then stream for minutes
// more. TCP keep-alives still notice a peer that vanished; cancelling the
// context ends a stream that merely stalls.
func defaultClient() *http.Client {
	var t *http.Transport
	if dt, ok := http.DefaultTransport.(*http.Transport); ok {
		t = dt.Clone()
	} else {
		t = &http.Transport{Proxy: http.ProxyFromEnvironment, ForceAttemptHTTP2: true}
	}
	t.DialContext = (&net.Dialer{Timeout: 15 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = 15 * time.Second
	t.ExpectContinueTimeout = time.Second
	t.IdleConnTimeout = 90 * time.Second
	t.MaxIdleConnsPerHost = 8
	return &http.Client{Transport: t}
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}

// credentialHeader guesses whether a header carries a secret (api-key,
// x-api-key, Proxy-Authorization, X-Auth-Token ...).
func credentialHeader(name string) bool {
	n := strings.ToLower(name)
	for _, s := range []string{"auth", "key", "token", "secret", "cookie"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// validHeaderName accepts RFC 9110 tokens, so a typo fails at
// configuration time rather than on the first model call.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("!#$%&'*+-.^_`|~", r):
		default:
			return false
		}
	}
	return true
}
