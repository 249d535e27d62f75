package skill

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Meta is what a SKILL.md's front matter says about the skill.
type Meta struct {
	Name        string
	Description string
	Version     string
	Tags        []string
}

// ErrNoFrontMatter reports a SKILL.md that does not start with a "---"
// line.
var ErrNoFrontMatter = errors.New("SKILL.md does not start with front matter (a --- line, name: and description:, and a closing --- line)")

// MaxNameLen bounds a skill's name.
const MaxNameLen = 64

// Parse splits a SKILL.md into its front matter and its body (the Markdown
// after the closing "---", leading blank lines removed, line breaks as
// "\n").
//
// The front matter is read as a small, lenient subset of YAML, enough for
// what skills use: top-level "key: value" lines; plain, 'single-' and
// "double-quoted" scalars (quoted ones may span lines); flow lists
// ([a, "b"]) and block lists ("- a" lines); "|" and ">" block scalars with
// "-" or "+" chomping; comments; and a plain scalar continued on indented
// lines. Keys other than name, description, version and tags are skipped
// whatever their value, so nested maps such as metadata: do no harm.
// YAML anchors, aliases and !tags are refused in the keys that are read.
//
// On error, Meta holds what was read before it, so a broken skill can
// still be listed under the name and description it declares.
func Parse(content string) (Meta, string, error) {
	content = strings.TrimPrefix(content, "\uFEFF")
	content = strings.ReplaceAll(content, "\r\n", "\n")
	lines := strings.Split(content, "\n")
	if strings.TrimRight(lines[0], " \t") != "---" {
		return Meta{}, content, ErrNoFrontMatter
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if l := strings.TrimRight(lines[i], " \t"); l == "---" || l == "..." {
			end = i
			break
		}
	}
	if end < 0 {
		return Meta{}, "", errors.New("front matter is not closed by a --- line")
	}
	body := strings.TrimLeft(strings.Join(lines[end+1:], "\n"), "\n")

	p := &fmParser{lines: lines[1:end], base: 2}
	vals, err := p.parse()
	meta, merr := toMeta(vals)
	if err == nil {
		err = merr
	}
	return meta, body, err
}

// Keys of front matter that Parse reads; others are skipped.
func known(key string) bool {
	switch key {
	case "name", "description", "version", "tags":
		return true
	}
	return false
}

type kind int

const (
	kindNull kind = iota
	kindString
	kindList
)

type value struct {
	kind kind
	str  string
	list []string
	line int
}

func toMeta(vals map[string]value) (Meta, error) {
	var (
		m    Meta
		errs []error
	)
	str := func(key string, dst *string) {
		v, ok := vals[key]
		switch {
		case !ok || v.kind == kindNull:
		case v.kind == kindString:
			*dst = strings.TrimSpace(v.str)
		default:
			errs = append(errs, fmt.Errorf("line %d: %s must be a string, not a list", v.line, key))
		}
	}
	str("name", &m.Name)
	str("description", &m.Description)
	str("version", &m.Version)
	if v, ok := vals["tags"]; ok {
		switch v.kind {
		case kindList:
			m.Tags = v.list
		case kindString:
			// Lenient: "tags: a, b" means what it looks like.
			for t := range strings.SplitSeq(v.str, ",") {
				if t = strings.TrimSpace(t); t != "" {
					m.Tags = append(m.Tags, t)
				}
			}
		}
	}
	switch {
	case m.Name == "":
		errs = append(errs, errors.New("front matter has no name"))
	case !validName(m.Name):
		errs = append(errs, fmt.Errorf("invalid name %q: use up to %d letters, digits, '-', '_' and '.', starting with a letter or digit", m.Name, MaxNameLen))
		m.Name = ""
	}
	if m.Description == "" {
		errs = append(errs, errors.New("front matter has no description"))
	}
	return m, errors.Join(errs...)
}

func validName(s string) bool {
	if s == "" || len(s) > MaxNameLen || !isAlnum(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isAlnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// fmParser reads front matter lines; base is the file line number of
// lines[0], for messages.
type fmParser struct {
	lines []string
	base  int
	i     int
}

func (p *fmParser) errorf(i int, format string, a ...any) error {
	return fmt.Errorf("line %d: %s", p.base+i, fmt.Sprintf(format, a...))
}

// blank reports a line with nothing but whitespace or a comment.
func blank(l string) bool {
	t := strings.TrimLeft(l, " \t")
	return t == "" || t[0] == '#'
}

func indentOf(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }

func (p *fmParser) parse() (map[string]value, error) {
	vals := map[string]value{}
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		if blank(l) {
			p.i++
			continue
		}
		if l[0] == ' ' || l[0] == '\t' {
			return vals, p.errorf(p.i, "unexpected indentation")
		}
		if l == "-" || strings.HasPrefix(l, "- ") {
			return vals, p.errorf(p.i, "expected key: value, found a list item")
		}
		key, rest, ok := cutKey(l)
		if !ok {
			return vals, p.errorf(p.i, "expected key: value, found %q", truncate(l, 40))
		}
		if _, dup := vals[key]; dup {
			return vals, p.errorf(p.i, "duplicate key %q", key)
		}
		line := p.i
		p.i++
		if !known(key) {
			vals[key] = value{kind: kindNull, line: p.base + line}
			p.skipBlock()
			continue
		}
		v, err := p.value(rest, line)
		if err != nil {
			return vals, err
		}
		v.line = p.base + line
		vals[key] = v
	}
	return vals, nil
}

// cutKey splits "key: rest" at the first colon followed by a space or the
// end of the line.
func cutKey(l string) (key, rest string, ok bool) {
	for i := 0; i < len(l); i++ {
		if l[i] == ':' && (i+1 == len(l) || l[i+1] == ' ' || l[i+1] == '\t') {
			key = strings.TrimRight(l[:i], " \t")
			if key == "" || strings.ContainsAny(key[:1], `"'[]{}#&*!|>%@,`+"`") {
				return "", "", false
			}
			return key, l[i+1:], true
		}
	}
	return "", "", false
}

// skipBlock passes over the continuation of a value the parser does not
// read: indented lines, and a block list written at the key's own
// indentation.
func (p *fmParser) skipBlock() {
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		if blank(l) || l[0] == ' ' || l[0] == '\t' || l == "-" || strings.HasPrefix(l, "- ") {
			p.i++
			continue
		}
		return
	}
}

// value reads the value of a top-level key: rest is what follows the colon
// on line i; following lines are consumed as needed.
func (p *fmParser) value(rest string, i int) (value, error) {
	rest = strings.TrimSpace(rest)
	if rest == "" || rest[0] == '#' {
		return p.block()
	}
	switch rest[0] {
	case '|', '>':
		return p.blockScalar(rest, i)
	case '[':
		return p.flowList(rest, i)
	case '"', '\'':
		s, after, err := p.quoted(rest, i)
		if err != nil {
			return value{}, err
		}
		if after = strings.TrimSpace(after); after != "" && after[0] != '#' {
			return value{}, p.errorf(p.i-1, "unexpected text after the quoted string: %q", truncate(after, 40))
		}
		return value{kind: kindString, str: s}, nil
	case '{':
		return value{}, p.errorf(i, "expected a string or a list, found a map")
	case '&', '*', '!':
		return value{}, p.errorf(i, "anchors, aliases and tags are not supported")
	case '@', '`', '%':
		return value{}, p.errorf(i, "a plain value cannot start with %q; quote it", rest[:1])
	}
	s := stripComment(rest)
	// A plain scalar may go on over indented lines; they fold with spaces.
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		t := strings.TrimSpace(l)
		if t == "" {
			if p.nextIndented() {
				s += "\n"
				p.i++
				continue
			}
			break
		}
		if l[0] != ' ' && l[0] != '\t' || t[0] == '#' {
			break
		}
		if strings.HasSuffix(s, "\n") {
			s += stripComment(t)
		} else {
			s += " " + stripComment(t)
		}
		p.i++
	}
	if s == "~" || s == "null" || s == "Null" || s == "NULL" {
		return value{kind: kindNull}, nil
	}
	return value{kind: kindString, str: s}, nil
}

// nextIndented reports whether, after the blank lines at p.i, an indented
// non-comment line follows.
func (p *fmParser) nextIndented() bool {
	for j := p.i; j < len(p.lines); j++ {
		l := p.lines[j]
		if strings.TrimSpace(l) == "" {
			continue
		}
		return (l[0] == ' ' || l[0] == '\t') && strings.TrimSpace(l)[0] != '#'
	}
	return false
}

// stripComment removes a " #" comment from a plain scalar.
func stripComment(s string) string {
	for i := 1; i < len(s); i++ {
		if s[i] == '#' && (s[i-1] == ' ' || s[i-1] == '\t') {
			return strings.TrimSpace(s[:i])
		}
	}
	return strings.TrimSpace(s)
}

// block reads what follows a key with nothing after its colon: a block
// list, a scalar on the indented lines below, an (unsupported) nested map,
// or nothing (null).
func (p *fmParser) block() (value, error) {
	j := p.i
	for j < len(p.lines) && blank(p.lines[j]) {
		j++
	}
	if j == len(p.lines) {
		return value{kind: kindNull}, nil
	}
	first := p.lines[j]
	if strings.HasPrefix(first, "\t") || strings.HasPrefix(strings.TrimLeft(first, " "), "\t") {
		return value{}, p.errorf(j, "tabs cannot indent YAML; use spaces")
	}
	ind := indentOf(first)
	t := first[ind:]
	if t != "-" && !strings.HasPrefix(t, "- ") {
		switch {
		case ind == 0:
			return value{kind: kindNull}, nil
		case isMapItem(t):
			return value{}, p.errorf(j, "expected a string or a list, found a map")
		}
		p.i = j + 1
		return p.value(t, j)
	}
	var items []string
	p.i = j
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		if blank(l) {
			p.i++
			continue
		}
		li := indentOf(l)
		t := l[li:]
		if li != ind || (t != "-" && !strings.HasPrefix(t, "- ")) {
			if li > ind {
				return value{}, p.errorf(p.i, "list items must be strings")
			}
			if li == ind && li > 0 {
				return value{}, p.errorf(p.i, "expected a list item")
			}
			break
		}
		item := strings.TrimSpace(strings.TrimPrefix(t, "-"))
		at := p.i
		p.i++
		switch {
		case item == "":
			return value{}, p.errorf(at, "empty list item")
		case item[0] == '"' || item[0] == '\'':
			s, after, err := p.quoted(item, at)
			if err != nil {
				return value{}, err
			}
			if after = strings.TrimSpace(after); after != "" && after[0] != '#' {
				return value{}, p.errorf(p.i-1, "unexpected text after the quoted string: %q", truncate(after, 40))
			}
			items = append(items, s)
		case strings.ContainsRune("[{-&*!|>", rune(item[0])) || isMapItem(item):
			return value{}, p.errorf(at, "list items must be strings")
		default:
			items = append(items, stripComment(item))
		}
	}
	return value{kind: kindList, list: items}, nil
}

// isMapItem reports "- key: value", a list of maps.
func isMapItem(item string) bool {
	_, _, ok := cutKey(item)
	return ok
}

// blockScalar reads a "|" (literal) or ">" (folded) scalar whose header is
// hdr, on line i.
func (p *fmParser) blockScalar(hdr string, i int) (value, error) {
	folded := hdr[0] == '>'
	chomp, explicit := byte(0), 0
	h := hdr[1:]
	for h != "" {
		if c := h[0]; (c == '-' || c == '+') && chomp == 0 {
			chomp = c
		} else if c >= '1' && c <= '9' && explicit == 0 {
			explicit = int(c - '0')
		} else {
			break
		}
		h = h[1:]
	}
	if h = strings.TrimSpace(h); h != "" && h[0] != '#' {
		return value{}, p.errorf(i, "unexpected text after the block scalar indicator: %q", truncate(h, 40))
	}
	ind := explicit
	if ind == 0 {
		for j := p.i; j < len(p.lines); j++ {
			if strings.TrimSpace(p.lines[j]) != "" {
				ind = indentOf(p.lines[j])
				break
			}
		}
	}
	var content []string
	if ind > 0 {
		for p.i < len(p.lines) {
			l := p.lines[p.i]
			if strings.TrimSpace(l) == "" {
				content = append(content, "")
				p.i++
				continue
			}
			if indentOf(l) < ind {
				if l[0] == ' ' || l[0] == '\t' {
					return value{}, p.errorf(p.i, "line is less indented than the block scalar above")
				}
				break
			}
			content = append(content, l[ind:])
			p.i++
		}
	}
	trailing := 0
	for len(content) > 0 && content[len(content)-1] == "" {
		content = content[:len(content)-1]
		trailing++
	}
	var s string
	if folded {
		s = fold(content)
	} else {
		s = strings.Join(content, "\n")
	}
	if s != "" {
		switch chomp {
		case 0:
			s += "\n"
		case '+':
			s += strings.Repeat("\n", trailing+1)
		}
	}
	return value{kind: kindString, str: s}, nil
}

// fold joins the lines of a ">" scalar as YAML does: neighbouring lines
// with a space, a blank line as a line break, more-indented lines kept as
// they are.
func fold(lines []string) string {
	var b strings.Builder
	for k, l := range lines {
		if k > 0 {
			prev := lines[k-1]
			switch {
			case l == "" || prev == "":
				if l == "" {
					b.WriteByte('\n')
				}
			case l[0] == ' ' || l[0] == '\t' || prev[0] == ' ' || prev[0] == '\t':
				b.WriteByte('\n')
			default:
				b.WriteByte(' ')
			}
		}
		b.WriteString(l)
	}
	return b.String()
}

// quoted reads a quoted scalar starting at s (on line i), continuing onto
// following lines if it is not closed; it returns the text after the
// closing quote.
func (p *fmParser) quoted(s string, i int) (string, string, error) {
	q := s[0]
	var b strings.Builder
	rest := s[1:]
	for {
		closed, after, joined, err := scanQuoted(&b, rest, q)
		if err != nil {
			return "", "", p.errorf(i, "%v", err)
		}
		if closed {
			return b.String(), after, nil
		}
		// A line break inside quotes folds to a space; blank lines are
		// line breaks; an escaped line break (\ at the end) joins.
		if !joined {
			cut := strings.TrimRight(b.String(), " \t")
			b.Reset()
			b.WriteString(cut)
		}
		breaks := 0
		for p.i < len(p.lines) && strings.TrimSpace(p.lines[p.i]) == "" {
			breaks++
			p.i++
		}
		if p.i == len(p.lines) {
			return "", "", p.errorf(i, "quoted string is not closed")
		}
		switch {
		case breaks > 0:
			b.WriteString(strings.Repeat("\n", breaks))
		case !joined:
			b.WriteByte(' ')
		}
		rest = strings.TrimLeft(p.lines[p.i], " \t")
		p.i++
	}
}

// scanQuoted appends the quoted text in s to b up to the closing quote q.
// When the line ends first, closed is false, and joined reports a
// double-quoted line ending in a backslash, which joins the next line
// without a space.
func scanQuoted(b *strings.Builder, s string, q byte) (closed bool, after string, joined bool, err error) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == q && q == '\'':
			if i+1 < len(s) && s[i+1] == '\'' {
				b.WriteByte('\'')
				i++
				continue
			}
			return true, s[i+1:], false, nil
		case c == q:
			return true, s[i+1:], false, nil
		case c == '\\' && q == '"':
			if i+1 == len(s) {
				return false, "", true, nil
			}
			n, w, err := unescape(s[i+1:])
			if err != nil {
				return false, "", false, err
			}
			b.WriteString(n)
			i += w
		default:
			b.WriteByte(c)
		}
	}
	return false, "", false, nil
}

// unescape decodes the escape after a backslash in s, returning the text
// and how many bytes it used.
func unescape(s string) (string, int, error) {
	simple := map[byte]string{
		'0': "\x00", 'a': "\a", 'b': "\b", 't': "\t", '\t': "\t", 'n': "\n", 'v': "\v", 'f': "\f",
		'r': "\r", 'e': "\x1b", ' ': " ", '"': `"`, '/': "/", '\\': `\`, 'N': "\u0085",
		'_': "\u00a0", 'L': "\u2028", 'P': "\u2029",
	}
	if r, ok := simple[s[0]]; ok {
		return r, 1, nil
	}
	digits := map[byte]int{'x': 2, 'u': 4, 'U': 8}[s[0]]
	if digits == 0 {
		return "", 0, fmt.Errorf("unknown escape \\%c in a double-quoted string", s[0])
	}
	if len(s) < 1+digits {
		return "", 0, fmt.Errorf("short escape \\%s", s)
	}
	n, err := strconv.ParseUint(s[1:1+digits], 16, 32)
	if err != nil || !utf8.ValidRune(rune(n)) {
		return "", 0, fmt.Errorf("bad escape \\%s", s[:1+digits])
	}
	return string(rune(n)), 1 + digits, nil
}

// flowList reads "[a, 'b', "c"]" starting at s on line i; it may span
// lines.
func (p *fmParser) flowList(s string, i int) (value, error) {
	// Gather lines until the closing bracket, outside quotes.
	text := s
	for {
		end, err := flowEnd(text)
		if err != nil {
			return value{}, p.errorf(i, "%v", err)
		}
		if end >= 0 {
			if after := strings.TrimSpace(text[end+1:]); after != "" && after[0] != '#' {
				return value{}, p.errorf(p.i-1, "unexpected text after the list: %q", truncate(after, 40))
			}
			text = text[1:end]
			break
		}
		if p.i == len(p.lines) {
			return value{}, p.errorf(i, "list is not closed by ]")
		}
		text += " " + strings.TrimSpace(p.lines[p.i])
		p.i++
	}
	var items []string
	for {
		text = strings.TrimLeft(text, " \t")
		if text == "" {
			break
		}
		var item string
		switch text[0] {
		case '"', '\'':
			var b strings.Builder
			closed, after, _, err := scanQuoted(&b, text[1:], text[0])
			if err != nil || !closed {
				return value{}, p.errorf(i, "bad quoted item in list")
			}
			item, text = b.String(), strings.TrimLeft(after, " \t")
			if text != "" && text[0] != ',' {
				return value{}, p.errorf(i, "expected , between list items")
			}
		case ',':
			return value{}, p.errorf(i, "empty list item")
		default:
			k := strings.IndexByte(text, ',')
			if k < 0 {
				k = len(text)
			}
			item, text = strings.TrimSpace(text[:k]), text[k:]
		}
		items = append(items, item)
		text = strings.TrimPrefix(text, ",")
	}
	return value{kind: kindList, list: items}, nil
}

// flowEnd returns the index of the "]" closing the list that s opens, or
// -1 when it is not on this text yet. Nested collections are refused.
func flowEnd(s string) (int, error) {
	var q byte
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case q == '"' && c == '\\':
			i++
		case q != 0:
			if c == q {
				if q == '\'' && i+1 < len(s) && s[i+1] == '\'' {
					i++
					continue
				}
				q = 0
			}
		case c == '"' || c == '\'':
			q = c
		case c == '[' || c == '{':
			return -1, errors.New("nested lists and maps are not supported")
		case c == ']':
			return i, nil
		case c == '#' && (s[i-1] == ' ' || s[i-1] == '\t'):
			return -1, errors.New("comment inside a list")
		}
	}
	return -1, nil
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
