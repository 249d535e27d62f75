// Package anthropic is the provider for Anthropic's Messages API: a small
// streaming client over net/http rather than the official SDK, which would
// grow the binary by megabytes for the handful of calls Caduceus makes.
//
// Stream converts the provider history into a request the API accepts
// whatever the history holds (roles merged to alternate, tool results paired
// with their calls, thinking blocks replayed with their signatures, unsigned
// reasoning from other providers dropped) and decodes the named server-sent
// events into provider chunks. Retries happen only before the response
// begins; a stream that ends without message_stop is reported as cut, never
// silently truncated.
//
// Package anthropictest holds a fake server that validates requests the way
// the API does, for tests here and elsewhere.
package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/provider/wire"
)

// Defaults of Config.
const (
	DefaultName      = "anthropic"
	DefaultBaseURL   = "https://api.anthropic.com"
	DefaultVersion   = "2023-06-01"
	DefaultMaxTokens = 8192
)

// Config configures a Provider. Only APIKey is required.
type Config struct {
	// Name identifies the provider in errors and events; default "anthropic".
	Name string
	// BaseURL is the API root without /v1; default https://api.anthropic.com.
	// A trailing "/v1" is tolerated.
	BaseURL string
	APIKey  string
	// Version is the anthropic-version header; default "2023-06-01".
	Version string
	// Headers are sent with every request (e.g. "anthropic-beta"). They
	// cannot replace x-api-key, anthropic-version or content-type.
	Headers map[string]string
	// HTTPClient sends the requests; nil means a client with connection
	// timeouts and no overall timeout (a long answer may stream for minutes;
	// the caller's context bounds it).
	HTTPClient *http.Client
	// Backoff governs retries before the response begins.
	Backoff wire.Backoff
	// OnRetry, when set, hears about every retry.
	OnRetry func(attempt int, wait time.Duration, why string)
	// DefaultMaxTokens is max_tokens when a request sets none (the API
	// requires one); default 8192.
	DefaultMaxTokens int
}

// Provider streams model calls from the Anthropic Messages API. It is safe
// for concurrent use.
type Provider struct {
	name       string
	base       string
	apiKey     string
	version    string
	headers    map[string]string
	client     *http.Client
	backoff    wire.Backoff
	onRetry    func(int, time.Duration, string)
	defaultMax int
	// secrets are redacted from every message that leaves the provider.
	secrets []string
}

var _ provider.Provider = (*Provider)(nil)

// New returns a provider for cfg.
func New(cfg Config) (*Provider, error) {
	p := &Provider{
		name:       orDefault(cfg.Name, DefaultName),
		apiKey:     cfg.APIKey,
		version:    orDefault(cfg.Version, DefaultVersion),
		headers:    map[string]string{},
		client:     cfg.HTTPClient,
		backoff:    cfg.Backoff,
		onRetry:    cfg.OnRetry,
		defaultMax: cfg.DefaultMaxTokens,
	}
	base := strings.TrimRight(orDefault(cfg.BaseURL, DefaultBaseURL), "/")
	base = strings.TrimSuffix(base, "/v1")
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("anthropic: base URL %q is not an http(s) URL", cfg.BaseURL)
	}
	p.base = base
	if p.defaultMax <= 0 {
		p.defaultMax = DefaultMaxTokens
	}
	if p.client == nil {
		p.client = newHTTPClient()
	}
	if p.apiKey != "" {
		p.secrets = append(p.secrets, p.apiKey)
	}
	authHeader := false
	for k, v := range cfg.Headers {
		k = http.CanonicalHeaderKey(k)
		switch k {
		case "X-Api-Key", "Anthropic-Version", "Content-Type":
			return nil, fmt.Errorf("anthropic: header %s is set by the provider; use the Config fields", k)
		}
		p.headers[k] = v
		if secretHeader(k) {
			authHeader = true
			p.secrets = append(p.secrets, v)
		}
	}
	if p.apiKey == "" && !authHeader {
		return nil, errors.New("anthropic: an API key is required")
	}
	return p, nil
}

// secretHeader reports headers whose values are credentials (a gateway's
// own authorization, say), so they are redacted like the API key.
func secretHeader(k string) bool {
	k = strings.ToLower(k)
	return strings.Contains(k, "auth") || strings.Contains(k, "key") || strings.Contains(k, "token") || strings.Contains(k, "secret")
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// newHTTPClient bounds connecting and waiting for response headers, which
// a dead server would otherwise stretch forever, but not the body: a
// streamed answer may legitimately take many minutes.
func newHTTPClient() *http.Client {
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   15 * time.Second,
		ResponseHeaderTimeout: 3 * time.Minute,
		ExpectContinueTimeout: time.Second,
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConnsPerHost:   8,
	}}
}

// Name implements provider.Provider.
func (p *Provider) Name() string { return p.name }

// Demo implements provider.Provider; always false.
func (p *Provider) Demo() bool { return false }

// Stream implements provider.Provider: one streamed Messages API call.
func (p *Provider) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Chunk, error] {
	return func(yield func(provider.Chunk, error) bool) {
		if req.Model == "" {
			yield(provider.Chunk{}, &provider.Error{Provider: p.name, Code: "bad_request", Message: "no model was set for the request"})
			return
		}
		body, err := json.Marshal(buildRequest(req, p.defaultMax))
		if err != nil {
			yield(provider.Chunk{}, &provider.Error{Provider: p.name, Code: "bad_request", Message: "cannot encode the request: " + err.Error()})
			return
		}
		resp, err := wire.Do(ctx, p.client, p.backoff, func(ctx context.Context) (*http.Request, error) {
			r, err := http.NewRequestWithContext(ctx, http.MethodPost, p.base+"/v1/messages", bytes.NewReader(body))
			if err != nil {
				return nil, err
			}
			p.setHeaders(r.Header)
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Accept", "text/event-stream")
			return r, nil
		}, p.onRetry)
		if err != nil {
			if ctx.Err() != nil {
				yield(provider.Chunk{}, ctx.Err())
				return
			}
			yield(provider.Chunk{}, wire.TransportError(p.name, err, p.secrets...))
			return
		}
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			yield(provider.Chunk{}, wire.ResponseError(p.name, resp, p.secrets...))
			return
		}
		defer resp.Body.Close()
		if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/json" {
			// A proxy or gateway answering 200 with a JSON error instead
			// of a stream: report what it said rather than "stream cut".
			yield(provider.Chunk{}, p.jsonBodyError(resp.Body))
			return
		}
		p.decode(ctx, resp.Body, yield)
	}
}

func (p *Provider) setHeaders(h http.Header) {
	for k, v := range p.headers {
		h.Set(k, v)
	}
	if p.apiKey != "" {
		h.Set("X-Api-Key", p.apiKey)
	}
	h.Set("Anthropic-Version", p.version)
}

// jsonBodyError reports a JSON body where an event stream was expected.
func (p *Provider) jsonBodyError(r io.Reader) error {
	b, _ := io.ReadAll(io.LimitReader(r, 64<<10))
	var v apiError
	if json.Unmarshal(b, &v) == nil && v.Type == "error" {
		return p.apiError(v.Error.Type, v.Error.Message)
	}
	return &provider.Error{Provider: p.name, Code: "bad_response", Message: "the server answered with JSON instead of an event stream"}
}

// apiError is the API's error body and the data of an "error" event.
type apiError struct {
	Type  string `json:"type"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// apiError maps an Anthropic error type to a provider error.
func (p *Provider) apiError(typ, msg string) *provider.Error {
	code := errorCode(typ)
	if msg == "" {
		msg = typ
	}
	return &provider.Error{
		Provider:  p.name,
		Code:      code,
		Message:   wire.Redact(msg, p.secrets...),
		Retryable: code == "overloaded" || code == "rate_limited" || code == "server_error",
	}
}

func errorCode(typ string) string {
	switch typ {
	case "overloaded_error":
		return "overloaded"
	case "rate_limit_error":
		return "rate_limited"
	case "api_error", "":
		return "server_error"
	case "invalid_request_error":
		return "bad_request"
	case "authentication_error", "permission_error":
		return "auth"
	case "not_found_error":
		return "not_found"
	case "request_too_large":
		return "too_large"
	}
	return strings.TrimSuffix(typ, "_error")
}
