package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/netguard"
	"github.com/caduceus-dev/caduceus/internal/provider"
)

// NameWebFetch is the tool that reads a web page.
const NameWebFetch = "web_fetch"

// Limits of web_fetch.
const (
	DefaultFetchTimeout = 20 * time.Second
	// DefaultFetchBytes is the body read when a call gives no max_bytes:
	// enough for an article or an API answer, little enough for a context.
	DefaultFetchBytes = 512 << 10
	MaxFetchBytes     = 2 << 20
	// MaxFetchRedirects is how many redirects a fetch follows.
	MaxFetchRedirects = 5
)

// fetchUserAgent names us to servers; some refuse requests without one.
const fetchUserAgent = "caduceus-web-fetch/1 (+https://github.com/caduceus-dev/caduceus)"

var errTooManyRedirects = fmt.Errorf("stopped after %d redirects", MaxFetchRedirects)

// WebFetchData is the structured result of web_fetch.
type WebFetchData struct {
	OK          bool   `json:"ok"`
	URL         string `json:"url"`
	FinalURL    string `json:"final_url"` // after redirects
	Status      int    `json:"status"`
	ContentType string `json:"content_type"` // media type, without parameters
	Bytes       int    `json:"bytes"`        // body bytes read
	Truncated   bool   `json:"truncated"`    // the body was longer than max_bytes
	Text        string `json:"text"`         // HTML rendered as text; other types as sent
	Error       string `json:"error,omitempty"`
}

type webFetchArgs struct {
	URL      string `json:"url"`
	MaxBytes int    `json:"max_bytes"`
}

type webFetch struct{ cfg Config }

// NewWebFetch returns the web_fetch tool.
func NewWebFetch(cfg Config) Tool { return webFetch{cfg: cfg.withDefaults()} }

const webFetchSchemaTmpl = `{
  "type": "object",
  "properties": {
    "url": {"type": "string", "minLength": 1, "description": "The http or https URL to GET."},
    "max_bytes": {"type": "integer", "minimum": 1, "maximum": %d, "description": "How much of the body to read at most. Default %d."}
  },
  "required": ["url"],
  "additionalProperties": false
}`

func (webFetch) Spec() provider.ToolSpec {
	return provider.ToolSpec{
		Name: NameWebFetch,
		Description: "Fetch a web page or API response with an HTTP GET. HTML comes back as readable text with " +
			"links as [text](url); plain text, JSON and XML come back as sent; other content types are refused. " +
			fmt.Sprintf("Follows up to %d redirects; bodies longer than max_bytes are cut and marked truncated.", MaxFetchRedirects),
		Parameters: json.RawMessage(fmt.Sprintf(webFetchSchemaTmpl, MaxFetchBytes, DefaultFetchBytes)),
	}
}

// parse validates the arguments and returns the URL to fetch.
func (webFetch) parse(args json.RawMessage) (webFetchArgs, *url.URL, error) {
	var a webFetchArgs
	if err := decodeArgs(args, &a); err != nil {
		return a, nil, err
	}
	a.URL = strings.TrimSpace(a.URL)
	if a.URL == "" {
		return a, nil, errors.New("url is required")
	}
	if a.MaxBytes < 0 {
		return a, nil, errors.New("max_bytes must be at least 1")
	}
	u, err := url.Parse(a.URL)
	if err != nil {
		return a, nil, fmt.Errorf("url: %v", bareURLErr(err))
	}
	if u.Scheme == "" {
		return a, nil, fmt.Errorf("url %q has no scheme; did you mean \"https://%s\"?", a.URL, a.URL)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return a, nil, fmt.Errorf("only http and https URLs can be fetched, not %q", a.URL)
	}
	if u.Hostname() == "" {
		return a, nil, fmt.Errorf("url %q has no host", a.URL)
	}
	return a, u, nil
}

func (t webFetch) Label(args json.RawMessage) string {
	a, _, err := t.parse(args)
	if err != nil {
		return "fetch (invalid arguments)"
	}
	return "fetch " + truncate(a.URL, 120)
}

func (t webFetch) Intent(args json.RawMessage) Intent {
	a, _, err := t.parse(args)
	if err != nil {
		return Intent{Effect: EffectNetwork, Action: "web_fetch " + truncate(string(args), 500), Invalid: true}
	}
	return Intent{Effect: EffectNetwork, Action: "fetch " + a.URL, URL: a.URL}
}

func (t webFetch) timeout() time.Duration {
	if t.cfg.FetchTimeout > 0 {
		return t.cfg.FetchTimeout
	}
	return DefaultFetchTimeout
}

// client returns the configured client with our redirect rule. The copy
// leaves the caller's client as it was.
//
// Without a configured client, connections go through the guard. The
// approval policy reads the URL's text: a call to "localhost" or
// "10.0.0.5" was put to a person, who agreed, so that one host is dialled
// as named. Any other host, including a redirect's, is resolved and
// refused if an address is private: the text check cannot see that
// "evil.example" resolves to 127.0.0.1.
func (t webFetch) client(approved string) *http.Client {
	c := &http.Client{Timeout: t.timeout()}
	if t.cfg.HTTPClient != nil {
		cc := *t.cfg.HTTPClient
		c = &cc
	} else {
		c.Transport = t.transport(approved)
	}
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > MaxFetchRedirects {
			return errTooManyRedirects
		}
		if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
			return fmt.Errorf("redirected to %q, which is not http or https", req.URL.Redacted())
		}
		return nil
	}
	return c
}

func (t webFetch) transport(approved string) *http.Transport {
	g := t.cfg.Net
	if g == nil {
		g, _ = netguard.New(netguard.Config{}) // no entries: cannot fail
	}
	var direct net.Dialer
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil // a proxy would resolve names where the guard cannot see
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err == nil && approved != "" && strings.EqualFold(host, approved) {
			return direct.DialContext(ctx, network, addr)
		}
		return g.DialContext(ctx, network, addr)
	}
	return tr
}

func (t webFetch) Run(ctx context.Context, env Env, args json.RawMessage) (Result, error) {
	a, u, err := t.parse(args)
	if err != nil {
		return invalidArgs(err), nil
	}
	limit := DefaultFetchBytes
	if a.MaxBytes > 0 {
		limit = min(a.MaxBytes, MaxFetchBytes)
	}
	if ctx.Err() != nil {
		return Result{Status: event.ToolCancelled, Output: "cancelled before the fetch started"}, nil
	}
	timeout := t.timeout()
	// The deadline covers the body too, whatever client was configured, so
	// a slow server cannot hold the call beyond it.
	fctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	data := WebFetchData{URL: a.URL}
	fail := func(err error) (Result, error) {
		status, msg := describeFetchError(ctx, err, u.Host, timeout)
		data.Error = msg
		return Result{Status: status, Output: msg, Data: data}, nil
	}
	req, err := http.NewRequestWithContext(fctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return invalidArgs(fmt.Errorf("url: %v", bareURLErr(err))), nil
	}
	req.Header.Set("User-Agent", fetchUserAgent)
	req.Header.Set("Accept", "text/html, text/plain;q=0.9, application/json;q=0.9, text/*;q=0.8, */*;q=0.1")
	var approved string // see client
	if netguard.PrivateName(u.Hostname()) {
		approved = u.Hostname()
	}
	client := t.client(approved)
	if tr, ok := client.Transport.(*http.Transport); ok && t.cfg.HTTPClient == nil {
		defer tr.CloseIdleConnections()
	}
	resp, err := client.Do(req)
	if err != nil {
		return fail(err)
	}
	defer resp.Body.Close()
	data.Status = resp.StatusCode
	data.FinalURL = resp.Request.URL.String()

	mediaType, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mediaType != "" && fetchKind(mediaType) == "" {
		data.ContentType = mediaType
		data.Error = fmt.Sprintf("content type %s is not text; web_fetch reads HTML, text, JSON and XML only", mediaType)
		return Result{Status: event.ToolError, Output: data.Error, Data: data}, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	if err != nil {
		return fail(err)
	}
	if len(body) > limit {
		body, data.Truncated = body[:limit], true
	}
	if mediaType == "" {
		// No declared type: go by the content, as browsers do.
		mediaType, params, _ = mime.ParseMediaType(http.DetectContentType(body))
		if fetchKind(mediaType) == "" {
			data.ContentType = mediaType
			data.Error = fmt.Sprintf("the response declares no content type and looks like %s, not text", mediaType)
			return Result{Status: event.ToolError, Output: data.Error, Data: data}, nil
		}
	}
	data.ContentType = mediaType
	data.Bytes = len(body)
	text := decodeBody(body, params["charset"], data.Truncated)
	if fetchKind(mediaType) == "html" {
		text = htmlToText(text, resp.Request.URL)
	}
	data.Text = text

	var b strings.Builder
	fmt.Fprintf(&b, "[%s: HTTP %d, %s, %d bytes]\n\n", data.FinalURL, data.Status, mediaType, data.Bytes)
	if text == "" {
		b.WriteString("(empty)")
	} else {
		b.WriteString(text)
	}
	if data.Truncated {
		fmt.Fprintf(&b, "\n\n[truncated: only the first %d bytes of the body were read", limit)
		if limit < MaxFetchBytes {
			fmt.Fprintf(&b, "; max_bytes can be raised to %d", MaxFetchBytes)
		}
		b.WriteString("]")
	}
	status := event.ToolOK
	if resp.StatusCode >= 400 {
		status = event.ToolError
		data.Error = "HTTP " + strconv.Itoa(resp.StatusCode) + " " + http.StatusText(resp.StatusCode)
	}
	data.OK = status == event.ToolOK
	return Result{Status: status, Output: b.String(), Data: data}, nil
}

// fetchKind classifies a media type: "html", "text" (returned as sent) or
// "" (refused).
func fetchKind(mediaType string) string {
	switch {
	case mediaType == "text/html", mediaType == "application/xhtml+xml":
		return "html"
	case strings.HasPrefix(mediaType, "text/"),
		mediaType == "application/json", strings.HasSuffix(mediaType, "+json"),
		mediaType == "application/xml", strings.HasSuffix(mediaType, "+xml"),
		mediaType == "application/javascript", mediaType == "application/x-ndjson",
		mediaType == "application/yaml", mediaType == "application/x-yaml", mediaType == "application/toml":
		return "text"
	}
	return ""
}

// describeFetchError turns a request failure into a status and a message
// that says what went wrong in terms the model can act on.
func describeFetchError(ctx context.Context, err error, host string, timeout time.Duration) (string, string) {
	if ctx.Err() != nil {
		return event.ToolCancelled, "fetch cancelled"
	}
	var (
		ue  *url.Error
		ne  net.Error
		dns *net.DNSError
		op  *net.OpError
	)
	cause := err
	if errors.As(err, &ue) {
		cause = ue.Err
		// After a redirect, the host that failed is not the one asked for.
		if u, perr := url.Parse(ue.URL); perr == nil && u.Host != "" {
			host = u.Host
		}
	}
	switch {
	case errors.Is(err, netguard.ErrBlocked):
		return event.ToolError, fmt.Sprintf("fetch refused: %v", cause)
	case errors.Is(err, errTooManyRedirects):
		return event.ToolError, fmt.Sprintf("fetch failed: %v", errTooManyRedirects)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return event.ToolTimeout, fmt.Sprintf("fetch failed: %s did not answer within %s", host, describeDuration(timeout))
	case errors.As(err, &dns), errors.As(err, &op) && op.Op == "dial":
		return event.ToolError, fmt.Sprintf("fetch failed: cannot reach %s (no network?): %v", host, cause)
	}
	return event.ToolError, fmt.Sprintf("fetch failed: %v", cause)
}

// bareURLErr drops the "parse <url>:" prefix net/url adds; the message
// already says which URL.
func bareURLErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
