package tool

import (
	"html"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

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
