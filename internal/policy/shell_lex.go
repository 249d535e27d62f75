package policy

import "strings"

func isMeta(c byte) bool { return strings.IndexByte(" \t\n;&|<>()", c) >= 0 }

// word reads one word starting at the current position.
func (p *parser) word() (word, error) {
	var w word
	var b strings.Builder
	start := p.pos
	braceOpen := false // an unquoted "{" seen, for brace expansion
	bracketOpen := false
	for !p.eof() {
		c := p.src[p.pos]
		if (c == '<' || c == '>') && p.pos+1 < len(p.src) && p.src[p.pos+1] == '(' {
			// Process substitution: the program reads or writes a pipe
			// to a command that runs alongside.
			s := p.pos
			p.pos += 2
			sub, err := p.nestedList()
			if err != nil {
				return w, err
			}
			w.subs = append(w.subs, sub)
			p.addNested(sub)
			w.dynamic = true
			b.WriteString(p.src[s:p.pos])
			w.litFrom = b.Len()
			continue
		}
		if isMeta(c) {
			break
		}
		switch c {
		case '\\':
			w.quoted = true
			switch {
			case p.pos+1 >= len(p.src):
				b.WriteByte('\\')
				p.pos++
			case p.src[p.pos+1] == '\n':
				p.pos += 2
			default:
				b.WriteByte(p.src[p.pos+1])
				p.pos += 2
			}
		case '\'':
			end := strings.IndexByte(p.src[p.pos+1:], '\'')
			if end < 0 {
				return w, errUnterminatedQuote
			}
			w.quoted = true
			b.WriteString(p.src[p.pos+1 : p.pos+1+end])
			p.pos += end + 2
		case '"':
			w.quoted = true
			p.pos++
			if err := p.doubleQuoted(&w, &b); err != nil {
				return w, err
			}
		case '$':
			if err := p.dollar(&w, &b, false); err != nil {
				return w, err
			}
		case '`':
			if err := p.backtick(&w, &b); err != nil {
				return w, err
			}
		default:
			switch c {
			case '*', '?':
				w.glob = true
			case '[':
				bracketOpen = true
			case ']':
				if bracketOpen {
					w.glob = true
				}
			case '{':
				braceOpen = true
			case ',':
				if braceOpen {
					w.dynamic = true // {a,b} expands to several words in bash
				}
			case '.':
				if braceOpen && p.at("..") {
					w.dynamic = true // {1..9}
				}
			}
			b.WriteByte(c)
			p.pos++
		}
	}
	w.text = b.String()
	w.raw = p.src[start:p.pos]
	return w, nil
}

// nestedList reads the commands of a substitution whose opening
// parenthesis has just been consumed.
func (p *parser) nestedList() (*script, error) {
	if p.depth >= maxNesting {
		return nil, errTooDeep
	}
	p.depth++
	defer func() { p.depth-- }()
	// A case statement outside does not make ")" a pattern end inside.
	inCase, casePattern := p.inCase, p.casePattern
	p.inCase, p.casePattern = 0, false
	defer func() { p.inCase, p.casePattern = inCase, casePattern }()
	return p.list(true)
}

func (p *parser) doubleQuoted(w *word, b *strings.Builder) error {
	for !p.eof() {
		c := p.src[p.pos]
		switch c {
		case '"':
			p.pos++
			return nil
		case '\\':
			if p.pos+1 < len(p.src) && strings.IndexByte("$`\"\\\n", p.src[p.pos+1]) >= 0 {
				if p.src[p.pos+1] != '\n' {
					b.WriteByte(p.src[p.pos+1])
				}
				p.pos += 2
			} else {
				b.WriteByte('\\')
				p.pos++
			}
		case '$':
			if err := p.dollar(w, b, true); err != nil {
				return err
			}
		case '`':
			if err := p.backtick(w, b); err != nil {
				return err
			}
		default:
			b.WriteByte(c)
			p.pos++
		}
	}
	return errUnterminatedQuote
}

func isNameStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isNameChar(c byte) bool { return isNameStart(c) || c >= '0' && c <= '9' }

// dollar reads an expansion starting at "$". The word keeps it as written.
func (p *parser) dollar(w *word, b *strings.Builder, inDQ bool) error {
	start := p.pos
	rest := p.src[p.pos+1:]
	switch {
	case strings.HasPrefix(rest, "(("):
		if err := p.arithmetic(); err != nil {
			return err
		}
	case strings.HasPrefix(rest, "("):
		p.pos += 2
		sub, err := p.nestedList()
		if err != nil {
			return err
		}
		w.subs = append(w.subs, sub)
		p.addNested(sub)
	case strings.HasPrefix(rest, "{"):
		p.pos += 2
		if err := p.braceParam(w); err != nil {
			return err
		}
	case !inDQ && strings.HasPrefix(rest, "'"):
		// ANSI-C quoting ($'\x72m'): escapes make any text, so the word
		// counts as dynamic rather than being decoded.
		p.pos += 2
		for {
			if p.eof() {
				return errUnterminatedQuote
			}
			c := p.src[p.pos]
			p.pos++
			if c == '\\' {
				p.pos++
			} else if c == '\'' {
				break
			}
		}
		w.quoted = true
	case !inDQ && strings.HasPrefix(rest, "\""):
		// $"..." is a translatable string: the quotes follow.
		p.pos++
		return nil
	case len(rest) > 0 && isNameStart(rest[0]):
		p.pos++
		for !p.eof() && isNameChar(p.src[p.pos]) {
			p.pos++
		}
	case len(rest) > 0 && strings.IndexByte("0123456789@*#?$!-", rest[0]) >= 0:
		p.pos += 2
	default:
		b.WriteByte('$')
		p.pos++
		return nil
	}
	w.dynamic = true
	b.WriteString(p.src[start:p.pos])
	w.litFrom = b.Len()
	return nil
}

// arithmetic skips $(( ... )). Arithmetic holds no commands, so anything
// that might be one (a substitution, quotes, a separator) is refused rather
// than guessed at.
func (p *parser) arithmetic() error {
	p.pos += 3
	depth := 0
	for !p.eof() {
		c := p.src[p.pos]
		switch {
		case c == '(':
			depth++
		case c == ')' && depth > 0:
			depth--
		case c == ')':
			if p.at("))") {
				p.pos += 2
				return nil
			}
			return errArithmetic
		case c == '$' && p.at("$(") && !p.at("$(("), c == '`', c == '\'', c == '"', c == ';', c == '\\':
			return errArithmetic
		}
		p.pos++
	}
	return errUnterminatedSubst
}

// braceParam skips the rest of ${...}, reading the substitutions a default
// value may hold (${x:-$(cmd)}).
func (p *parser) braceParam(w *word) error {
	var discard strings.Builder
	depth := 0
	for !p.eof() {
		c := p.src[p.pos]
		switch c {
		case '}':
			p.pos++
			if depth == 0 {
				return nil
			}
			depth--
		case '{':
			p.pos++
			depth++
		case '\\':
			p.pos += 2
		case '\'':
			end := strings.IndexByte(p.src[p.pos+1:], '\'')
			if end < 0 {
				return errUnterminatedQuote
			}
			p.pos += end + 2
		case '"':
			p.pos++
			if err := p.doubleQuoted(w, &discard); err != nil {
				return err
			}
		case '$':
			if err := p.dollar(w, &discard, false); err != nil {
				return err
			}
		case '`':
			if err := p.backtick(w, &discard); err != nil {
				return err
			}
		default:
			p.pos++
		}
	}
	return errUnterminatedSubst
}

// backtick reads `...`, whose text is unescaped and read as a command line.
func (p *parser) backtick(w *word, b *strings.Builder) error {
	start := p.pos
	p.pos++
	var inner strings.Builder
	for {
		if p.eof() {
			return errUnterminatedSubst
		}
		c := p.src[p.pos]
		if c == '`' {
			p.pos++
			break
		}
		if c == '\\' && p.pos+1 < len(p.src) && strings.IndexByte("`\\$", p.src[p.pos+1]) >= 0 {
			inner.WriteByte(p.src[p.pos+1])
			p.pos += 2
			continue
		}
		inner.WriteByte(c)
		p.pos++
	}
	sub, err := parse(inner.String(), p.depth+1)
	if err != nil {
		return err
	}
	w.subs = append(w.subs, sub)
	p.addNested(sub)
	w.dynamic = true
	b.WriteString(p.src[start:p.pos])
	w.litFrom = b.Len()
	return nil
}
