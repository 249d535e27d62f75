// Package websearch queries a web search back-end for the web_search tool
// (issue 18): SearXNG (its JSON API), Brave Search and Tavily, each on its
// own wire format, and keeps the one configured back-end in the settings
// table with its API key sealed by internal/secretbox.
//
// Every answer is bounded (result count, title, URL and snippet sizes, the
// body read) and every failure carries a stable code. The API key travels
// only in the request to the back-end: no error, log line or result holds
// it (the redactor also learns it when it is opened).
package websearch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Back-end kinds.
const (
	KindSearXNG = "searxng"
	KindBrave   = "brave"
	KindTavily  = "tavily"
)

// Kinds lists the back-end kinds, in the order the console shows them.
func Kinds() []string { return []string{KindSearXNG, KindBrave, KindTavily} }

// DefaultURL is the address a kind is reached at when none is given;
// SearXNG is self-hosted and has none.
func DefaultURL(kind string) string {
	switch kind {
	case KindBrave:
		return "https://api.search.brave.com/res/v1/web/search"
	case KindTavily:
		return "https://api.tavily.com/search"
	}
	return ""
}

// Bounds of a search.
const (
	DefaultCount = 5
	// MaxCount is what Brave and Tavily accept at most per request.
	MaxCount   = 20
	MaxQuery   = 400
	MaxTitle   = 300
	MaxSnippet = 1000
	MaxURL     = 2048
	// MaxBody bounds the back-end's answer read: a page of 20 results is
	// far below it.
	MaxBody        = 2 << 20
	DefaultTimeout = 15 * time.Second
)

// Error codes.
const (
	CodeNotConfigured = "web_search_not_configured"
	CodeInvalidInput  = "web_search_invalid_input"
	CodeTimeout       = "web_search_timeout"
	CodeUnreachable   = "web_search_unreachable"
	CodeAuth          = "web_search_auth_failed"
	CodeRateLimited   = "web_search_rate_limited"
	CodeBadResponse   = "web_search_bad_response"
	CodeFailed        = "web_search_failed"
	CodeNoSecretKey   = "secret_key_unavailable"
	CodeKeyUnreadable = "web_search_key_unreadable"
)

// Error is a failure with a stable code; Field names the input at fault.
type Error struct {
	Code  string
	Msg   string
	Field string
}

func (e *Error) Error() string { return e.Msg }

func errorf(code, field, format string, args ...any) *Error {
	return &Error{Code: code, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Backend is a configured back-end, key in clear: it lives in memory only
// for the length of a call.
type Backend struct {
	Kind   string
	URL    string
	APIKey string
}

// Result is one hit (seed 002's web_search shape: title, URL, snippet).
type Result struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet"`
}

// Search runs query on b and returns at most count results (DefaultCount
// when count <= 0, MaxCount at most). client nil means a plain client;
// timeout bounds the whole call, body included.
func Search(ctx context.Context, client *http.Client, b Backend, query string, count int, timeout time.Duration) ([]Result, error) {
	query = strings.TrimSpace(query)
	if query == "" {
		return nil, errorf(CodeInvalidInput, "query", "the query is empty")
	}
	if utf8.RuneCountInString(query) > MaxQuery {
		return nil, errorf(CodeInvalidInput, "query", "the query is longer than %d characters", MaxQuery)
	}
	if count <= 0 {
		count = DefaultCount
	}
	count = min(count, MaxCount)
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	// A copy, so the caller's client keeps its own rule: no redirect is
	// followed, since Go forwards a custom header such as Brave's
	// X-Subscription-Token to whatever host a redirect names. Search APIs
	// answer where they are asked; a 3xx is reported as it is.
	c := http.Client{}
	if client != nil {
		c = *client
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	endpoint := b.URL
	if endpoint == "" {
		endpoint = DefaultURL(b.Kind)
	}
	if err := CheckURL(endpoint); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := newRequest(ctx, b, endpoint, query, count)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "caduceus-web-search/1")
	resp, err := c.Do(req)
	if err != nil {
		return nil, describe(ctx, err, req.URL.Host, timeout)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody+1))
	if err != nil {
		return nil, describe(ctx, err, req.URL.Host, timeout)
	}
	if len(body) > MaxBody {
		return nil, errorf(CodeBadResponse, "", "the %s answer is larger than %d bytes", b.Kind, MaxBody)
	}
	if err := statusError(b.Kind, resp.StatusCode); err != nil {
		return nil, err
	}
	rs, err := decode(b.Kind, body)
	if err != nil {
		return nil, err
	}
	return clean(rs, count), nil
}

// newRequest writes the query in the back-end's wire format.
func newRequest(ctx context.Context, b Backend, endpoint, query string, count int) (*http.Request, error) {
	switch b.Kind {
	case KindSearXNG:
		// GET /search?q=…&format=json; the instance must allow the json
		// format (search.formats in settings.yml), else it answers 403.
		u, _ := url.Parse(endpoint)
		if !strings.HasSuffix(u.Path, "/search") {
			u.Path = strings.TrimSuffix(u.Path, "/") + "/search"
		}
		q := u.Query()
		q.Set("q", query)
		q.Set("format", "json")
		u.RawQuery = q.Encode()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return nil, errorf(CodeInvalidInput, "url", "the SearXNG address does not make a request: %v", err)
		}
		if b.APIKey != "" {
			// A SearXNG behind a proxy that wants a token.
			req.Header.Set("Authorization", "Bearer "+b.APIKey)
		}
		return req, nil
	case KindBrave:
		u, _ := url.Parse(endpoint)
		q := u.Query()
		q.Set("q", query)
		q.Set("count", strconv.Itoa(count))
		u.RawQuery = q.Encode()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return nil, errorf(CodeInvalidInput, "url", "the Brave address does not make a request: %v", err)
		}
		req.Header.Set("X-Subscription-Token", b.APIKey)
		return req, nil
	case KindTavily:
		body, _ := json.Marshal(map[string]any{"query": query, "max_results": count, "search_depth": "basic"})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
		if err != nil {
			return nil, errorf(CodeInvalidInput, "url", "the Tavily address does not make a request: %v", err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+b.APIKey)
		return req, nil
	}
	return nil, errorf(CodeInvalidInput, "kind", "unknown back-end kind %q: one of %s", b.Kind, strings.Join(Kinds(), ", "))
}

// Wire formats of the answers (the fields we read).
type (
	searxngAnswer struct {
		Results []struct {
			Title   string `json:"title"`
			URL     string `json:"url"`
			Content string `json:"content"`
		} `json:"results"`
	}
	braveAnswer struct {
		Web struct {
			Results []struct {
				Title       string `json:"title"`
				URL         string `json:"url"`
				Description string `json:"description"`
			} `json:"results"`
		} `json:"web"`
	}
	tavilyAnswer struct {
		Results []struct {
			Title   string `json:"title"`
			URL     string `json:"url"`
			Content string `json:"content"`
		} `json:"results"`
	}
)

func decode(kind string, body []byte) ([]Result, error) {
	bad := func(err error) error {
		return errorf(CodeBadResponse, "", "the %s answer is not the JSON expected: %v", kind, err)
	}
	var out []Result
	switch kind {
	case KindSearXNG:
		var a searxngAnswer
		if err := json.Unmarshal(body, &a); err != nil {
			return nil, bad(err)
		}
		for _, r := range a.Results {
			out = append(out, Result{Title: r.Title, URL: r.URL, Snippet: r.Content})
		}
	case KindBrave:
		var a braveAnswer
		if err := json.Unmarshal(body, &a); err != nil {
			return nil, bad(err)
		}
		for _, r := range a.Web.Results {
			out = append(out, Result{Title: r.Title, URL: r.URL, Snippet: r.Description})
		}
	case KindTavily:
		var a tavilyAnswer
		if err := json.Unmarshal(body, &a); err != nil {
			return nil, bad(err)
		}
		for _, r := range a.Results {
			out = append(out, Result{Title: r.Title, URL: r.URL, Snippet: r.Content})
		}
	}
	return out, nil
}

var tags = regexp.MustCompile(`<[^>]{0,200}>`)

// clean keeps http(s) results only, as plain text, cut to the bounds:
// Brave marks query words with <strong>, and a result's URL ends up as a
// link in the console.
func clean(rs []Result, count int) []Result {
	out := make([]Result, 0, min(len(rs), count))
	for _, r := range rs {
		if len(out) == count {
			break
		}
		u, err := url.Parse(strings.TrimSpace(r.URL))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(r.URL) > MaxURL {
			continue
		}
		title := cut(plain(r.Title), MaxTitle)
		if title == "" {
			title = u.Host
		}
		out = append(out, Result{Title: title, URL: u.String(), Snippet: cut(plain(r.Snippet), MaxSnippet)})
	}
	return out
}

func plain(s string) string {
	s = html.UnescapeString(tags.ReplaceAllString(s, ""))
	return strings.Join(strings.Fields(s), " ")
}

// cut shortens s to at most n runes, marking the cut with "…".
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

func statusError(kind string, status int) error {
	switch {
	case status >= 200 && status < 300:
		return nil
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		if kind == KindSearXNG {
			return errorf(CodeAuth, "", "SearXNG refused the request (HTTP %d): is the json format enabled in its settings.yml (search.formats)?", status)
		}
		return errorf(CodeAuth, "api_key", "%s refused the API key (HTTP %d)", kind, status)
	case status >= 300 && status < 400:
		return errorf(CodeFailed, "url", "%s answered with a redirect (HTTP %d), which is not followed: give its final address", kind, status)
	case status == http.StatusTooManyRequests:
		return errorf(CodeRateLimited, "", "%s says too many requests (HTTP 429); try again later", kind)
	}
	return errorf(CodeFailed, "", "%s answered HTTP %d %s", kind, status, http.StatusText(status))
}

// describe turns a transport failure into a coded error naming the host,
// never the request (whose URL may carry a query a person typed).
func describe(ctx context.Context, err error, host string, timeout time.Duration) error {
	var ne net.Error
	switch {
	case errors.Is(err, context.Canceled) && ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded):
		return errorf(CodeFailed, "", "the search was cancelled")
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return errorf(CodeTimeout, "", "%s did not answer within %s", host, timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return errorf(CodeUnreachable, "url", "cannot reach %s: %v", host, err)
}

// CheckURL accepts an absolute http(s) address without credentials in it
// (a key belongs in the write-only field).
func CheckURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errorf(CodeInvalidInput, "url", "the address must be an absolute http or https URL")
	}
	if u.User != nil {
		return errorf(CodeInvalidInput, "url", "the address must not hold a user name or password; put a key in api_key")
	}
	if len(s) > MaxURL {
		return errorf(CodeInvalidInput, "url", "the address is longer than %d characters", MaxURL)
	}
	return nil
}
