package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/caduceus-dev/caduceus/internal/event"
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
func (t webFetch) client() *http.Client {
	c := &http.Client{Timeout: t.timeout()}
	if t.cfg.HTTPClient != nil {
		cc := *t.cfg.HTTPClient
		c = &cc
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
	resp, err := t.client().Do(req)
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

// decodeBody turns a body into valid UTF-8. Single-byte Western charsets
// are common on older sites and decode without tables; anything else is
// taken as UTF-8. A body cut at the size cap may end inside a character,
// which is dropped rather than shown broken.
func decodeBody(b []byte, charset string, cut bool) string {
	switch strings.ToLower(strings.TrimSpace(charset)) {
	case "iso-8859-1", "latin1", "latin-1", "iso8859-1", "windows-1252", "cp1252", "us-ascii", "ascii":
		var sb strings.Builder
		sb.Grow(len(b))
		for _, c := range b {
			sb.WriteRune(rune(c))
		}
		return sb.String()
	}
	if cut {
		b = trimPartialRune(b)
	}
	s := strings.TrimPrefix(string(b), "\uFEFF")
	return strings.ToValidUTF8(s, "\uFFFD")
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

// htmlToText renders HTML as plain text: scripts, styles and markup go,
// blocks become lines, headings and list items keep a Markdown marker, and
// links become [text](absolute url) so the model can follow them. It is a
// forgiving tokenizer for reading, not a conforming HTML parser.
func htmlToText(src string, base *url.URL) string {
	w := &htmlTextWriter{base: base}
	for i := 0; i < len(src); {
		lt := strings.IndexByte(src[i:], '<')
		if lt < 0 {
			w.text(src[i:])
			break
		}
		w.text(src[i : i+lt])
		i += lt
		rest := src[i:]
		switch {
		case strings.HasPrefix(rest, "<!--"):
			i += htmlSkipPast(rest, 4, "-->")
		case strings.HasPrefix(rest, "<![CDATA["):
			end := strings.Index(rest, "]]>")
			if end < 0 {
				end = len(rest)
			}
			w.raw(rest[len("<![CDATA["):end])
			i += min(end+3, len(rest))
		case strings.HasPrefix(rest, "<!"), strings.HasPrefix(rest, "<?"):
			i += htmlSkipPast(rest, 2, ">")
		case len(rest) > 1 && htmlLetter(rest[1]), len(rest) > 2 && rest[1] == '/' && htmlLetter(rest[2]):
			tag, n := parseTag(rest)
			i += n
			if tag.end || tag.selfClosing || !isRawTextTag(tag.name) {
				w.tag(tag)
				continue
			}
			// Script and the like hold no markup: skip to their end tag.
			end := htmlIndexFold(src[i:], "</"+tag.name)
			if end < 0 {
				end = len(src) - i
			}
			content := src[i : i+end]
			i += end
			if i < len(src) {
				_, n := parseTag(src[i:])
				i += n
			}
			if tag.name == "title" || tag.name == "textarea" {
				w.tag(tag)
				w.text(content)
				w.tag(htmlTag{name: tag.name, end: true})
			}
		default:
			w.text("<")
			i++
		}
	}
	return w.String()
}

// isRawTextTag reports tags holding text that is not markup. Their content
// is dropped except for title and textarea, which are shown as text.
func isRawTextTag(name string) bool {
	switch name {
	case "script", "style", "noscript", "template", "svg", "math", "iframe", "title", "textarea":
		return true
	}
	return false
}

// blockBreaks is how many line breaks a block tag puts around itself:
// paragraphs are separated by a blank line, other blocks start a line.
func blockBreaks(name string) int {
	switch name {
	case "p", "pre", "blockquote", "table", "ul", "ol", "dl", "figure", "title",
		"h1", "h2", "h3", "h4", "h5", "h6":
		return 2
	case "div", "section", "article", "header", "footer", "nav", "main", "aside", "tr", "form",
		"details", "summary", "figcaption", "dt", "dd", "address", "fieldset", "li", "caption",
		"textarea", "option", "body", "html":
		return 1
	}
	return 0
}

type htmlTag struct {
	name        string // lower case
	end         bool
	selfClosing bool
	attrs       map[string]string
}

// parseTag reads the tag at the start of s (which begins with '<') and
// returns it with the number of bytes it spans. An unterminated tag runs to
// the end of s.
func parseTag(s string) (htmlTag, int) {
	var t htmlTag
	i := 1
	if i < len(s) && s[i] == '/' {
		t.end = true
		i++
	}
	start := i
	for i < len(s) && !htmlSpace(s[i]) && s[i] != '/' && s[i] != '>' {
		i++
	}
	t.name = strings.ToLower(s[start:i])
	for i < len(s) {
		for i < len(s) && (htmlSpace(s[i]) || s[i] == '/') {
			if s[i] == '/' {
				t.selfClosing = true
			}
			i++
		}
		if i >= len(s) {
			break
		}
		if s[i] == '>' {
			return t, i + 1
		}
		t.selfClosing = false
		start := i
		for i < len(s) && !htmlSpace(s[i]) && s[i] != '=' && s[i] != '>' && s[i] != '/' {
			i++
		}
		name := strings.ToLower(s[start:i])
		for i < len(s) && htmlSpace(s[i]) {
			i++
		}
		var val string
		if i < len(s) && s[i] == '=' {
			i++
			for i < len(s) && htmlSpace(s[i]) {
				i++
			}
			if i < len(s) && (s[i] == '"' || s[i] == '\'') {
				q := s[i]
				i++
				start := i
				for i < len(s) && s[i] != q {
					i++
				}
				val = s[start:i]
				i = min(i+1, len(s))
			} else {
				start := i
				for i < len(s) && !htmlSpace(s[i]) && s[i] != '>' {
					i++
				}
				val = s[start:i]
			}
		}
		if name != "" {
			if t.attrs == nil {
				t.attrs = map[string]string{}
			}
			if _, dup := t.attrs[name]; !dup {
				t.attrs[name] = html.UnescapeString(val)
			}
		}
	}
	return t, len(s)
}

// htmlTextWriter accumulates rendered text, collapsing whitespace outside pre.
type htmlTextWriter struct {
	base  *url.URL
	out   []byte
	space bool // whitespace seen and not yet written
	pre   int  // depth of pre elements
	links []htmlOpenLink
	lists []int // per open list: -1 for ul, else the next number of an ol
}

type htmlOpenLink struct {
	href string
	pos  int
}

func (w *htmlTextWriter) text(s string) {
	if s == "" {
		return
	}
	s = html.UnescapeString(s)
	if w.pre > 0 {
		w.raw(s)
		return
	}
	for _, r := range s {
		if unicode.IsSpace(r) {
			w.space = true
			continue
		}
		if w.space && len(w.out) > 0 && w.out[len(w.out)-1] != '\n' {
			w.out = append(w.out, ' ')
		}
		w.space = false
		w.out = utf8.AppendRune(w.out, r)
	}
}

// raw writes text as it is, for pre and CDATA.
func (w *htmlTextWriter) raw(s string) {
	if w.space && len(w.out) > 0 && w.out[len(w.out)-1] != '\n' {
		w.out = append(w.out, ' ')
	}
	w.space = false
	w.out = append(w.out, strings.ReplaceAll(s, "\r\n", "\n")...)
}

// newlines ends the current line so that at least n line breaks follow
// the text so far.
func (w *htmlTextWriter) newlines(n int) {
	w.space = false
	for len(w.out) > 0 && (w.out[len(w.out)-1] == ' ' || w.out[len(w.out)-1] == '\t') {
		w.out = w.out[:len(w.out)-1]
	}
	if len(w.out) == 0 {
		return
	}
	have := 0
	for have < len(w.out) && w.out[len(w.out)-1-have] == '\n' {
		have++
	}
	for ; have < n; have++ {
		w.out = append(w.out, '\n')
	}
}

func (w *htmlTextWriter) tag(t htmlTag) {
	switch {
	case t.name == "br":
		w.newlines(1)
		return
	case t.name == "hr":
		w.newlines(1)
		w.out = append(w.out, "---"...)
		w.newlines(1)
		return
	case t.name == "pre":
		if t.end {
			w.pre = max(0, w.pre-1)
		} else {
			w.pre++
		}
	case t.name == "ul" || t.name == "ol":
		if t.end {
			if len(w.lists) > 0 {
				w.lists = w.lists[:len(w.lists)-1]
			}
		} else if t.name == "ul" {
			w.lists = append(w.lists, -1)
		} else {
			n := 1
			if v, err := strconv.Atoi(t.attrs["start"]); err == nil {
				n = v
			}
			w.lists = append(w.lists, n)
		}
	case t.name == "a":
		w.link(t)
		return
	case (t.name == "td" || t.name == "th") && !t.end:
		if len(w.out) > 0 && w.out[len(w.out)-1] != '\n' {
			w.out = append(w.out, " |"...)
			w.space = true
		}
		return
	}
	n := blockBreaks(t.name)
	if n == 0 {
		return
	}
	if (t.name == "ul" || t.name == "ol") && (len(w.lists) > 1 || t.end && len(w.lists) > 0) {
		n = 1 // a list within a list item continues it
	}
	w.newlines(n)
	if t.end {
		return
	}
	if len(t.name) == 2 && t.name[0] == 'h' && t.name[1] >= '1' && t.name[1] <= '6' {
		w.out = append(w.out, strings.Repeat("#", int(t.name[1]-'0'))+" "...)
	}
	if t.name == "li" {
		marker := "- "
		if n := len(w.lists); n > 0 && w.lists[n-1] >= 0 {
			marker = strconv.Itoa(w.lists[n-1]) + ". "
			w.lists[n-1]++
		}
		w.out = append(w.out, strings.Repeat("  ", max(0, len(w.lists)-1))+marker...)
	}
}

// link renders <a href> … </a> as [text](url) once the text is known;
// links to the page itself or to scripts are left as plain text.
func (w *htmlTextWriter) link(t htmlTag) {
	if !t.end {
		w.links = append(w.links, htmlOpenLink{href: w.resolve(t.attrs["href"]), pos: len(w.out)})
		return
	}
	if len(w.links) == 0 {
		return
	}
	l := w.links[len(w.links)-1]
	w.links = w.links[:len(w.links)-1]
	if l.href == "" || l.pos > len(w.out) {
		return
	}
	inner := string(w.out[l.pos:])
	label := strings.TrimSpace(inner)
	if label == "" {
		return
	}
	lead := inner[:len(inner)-len(strings.TrimLeft(inner, " \n"))]
	w.out = w.out[:l.pos]
	w.out = append(w.out, lead...)
	switch {
	case label == l.href || strings.TrimSuffix(l.href, "/") == label:
		w.out = append(w.out, label...)
	case strings.Contains(label, "\n"):
		w.out = append(w.out, label+" ("+l.href+")"...)
	default:
		w.out = append(w.out, "["+label+"]("+l.href+")"...)
	}
}

// resolve makes href absolute against the page; "" for hrefs not worth
// showing (fragments of the same page, javascript:).
func (w *htmlTextWriter) resolve(href string) string {
	href = strings.TrimSpace(href)
	if href == "" || strings.HasPrefix(href, "#") || strings.HasPrefix(strings.ToLower(href), "javascript:") {
		return ""
	}
	u, err := url.Parse(href)
	if err != nil {
		return ""
	}
	if w.base != nil {
		u = w.base.ResolveReference(u)
	}
	return u.String()
}

// String returns the text with line ends trimmed and runs of blank lines
// reduced to one.
func (w *htmlTextWriter) String() string {
	lines := strings.Split(string(w.out), "\n")
	out := make([]string, 0, len(lines))
	blank := false
	for _, l := range lines {
		l = strings.TrimRight(l, " \t\r")
		if l == "" {
			if !blank && len(out) > 0 {
				out = append(out, "")
			}
			blank = true
			continue
		}
		blank = false
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// htmlSkipPast returns the length of s up to and including the first end at
// or after from, or len(s).
func htmlSkipPast(s string, from int, end string) int {
	if from > len(s) {
		return len(s)
	}
	i := strings.Index(s[from:], end)
	if i < 0 {
		return len(s)
	}
	return from + i + len(end)
}

// htmlIndexFold is strings.Index ignoring ASCII case.
func htmlIndexFold(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

func htmlLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func htmlSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}
