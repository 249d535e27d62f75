package policy

import "strings"

// list reads commands until the end of the input or, inside a $( ) or
// <( ) substitution, until its closing parenthesis.
func (p *parser) list(inSubst bool) (*script, error) {
	s := &script{}
	outer := p.cur
	p.cur = s
	defer func() { p.cur = outer }()

	var pl pipeline
	cur := &command{}
	parens := 0
	endCmd := func() {
		if len(cur.words) > 0 || len(cur.redirs) > 0 {
			p.track(cur)
			pl.cmds = append(pl.cmds, cur)
		}
		cur = &command{}
	}
	endPipe := func(background bool) {
		endCmd()
		if len(pl.cmds) > 0 {
			pl.background = background
			if forkBombPipeline(pl) {
				s.forkBomb = true
			}
			s.pipelines = append(s.pipelines, pl)
		}
		pl = pipeline{}
	}

	for {
		p.skipBlanks()
		if p.eof() {
			if inSubst {
				return nil, errUnterminatedSubst
			}
			if parens != 0 {
				return nil, errUnbalancedParen
			}
			endPipe(false)
			return s, nil
		}
		c := p.src[p.pos]
		switch {
		case c == '#':
			// Only reached at a word boundary, where # starts a comment.
			for !p.eof() && p.src[p.pos] != '\n' {
				p.pos++
			}
		case c == '\n':
			p.pos++
			endPipe(false)
			if err := p.readHeredocs(); err != nil {
				return nil, err
			}
		case c == ';':
			p.pos++
			if p.at(";") || p.at("&") { // ;; and ;& end case items
				p.pos++
				p.casePattern = p.inCase > 0
			}
			endPipe(false)
		case p.at("&&"), p.at("||"):
			p.pos += 2
			endPipe(false)
		case p.at("&>"):
			r, err := p.redirect()
			if err != nil {
				return nil, err
			}
			cur.redirs = append(cur.redirs, r)
		case c == '&':
			p.pos++
			endPipe(true)
		case c == '|':
			p.pos++
			if p.at("&") {
				p.pos++
			}
			endCmd()
		case c == '(' && p.casePattern && len(cur.words) == 0:
			p.pos++ // the optional "(" before a case pattern
		case c == '(':
			if name, ok := funcName(cur); ok && p.emptyParens() {
				// "name()" defines a function; its body follows.
				p.pendingFn = name
				cur = &command{}
				continue
			}
			p.pos++
			parens++
			endPipe(false)
		case c == ')':
			p.pos++
			switch {
			case p.casePattern:
				// The words before are a pattern, not a command; any
				// substitution in them is already recorded.
				p.casePattern = false
				cur = &command{}
			case parens > 0:
				parens--
				endPipe(false)
			case inSubst:
				endPipe(false)
				return s, nil
			default:
				return nil, errUnbalancedParen
			}
		case (c == '<' || c == '>') && !p.at("<(") && !p.at(">("):
			r, err := p.redirect()
			if err != nil {
				return nil, err
			}
			cur.redirs = append(cur.redirs, r)
		case c >= '0' && c <= '9' && p.fdRedirect():
			for p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
				p.pos++
			}
			r, err := p.redirect()
			if err != nil {
				return nil, err
			}
			cur.redirs = append(cur.redirs, r)
		default:
			w, err := p.word()
			if err != nil {
				return nil, err
			}
			switch {
			case w.raw == "case" && atCommandStart(cur):
				p.inCase++
			case w.raw == "esac" && atCommandStart(cur) && p.inCase > 0:
				p.inCase--
				p.casePattern = false
			case w.raw == "in" && p.inCase > 0 && caseHead(cur):
				// "case WORD in" runs nothing; patterns follow.
				p.casePattern = true
				cur = &command{}
				continue
			}
			cur.words = append(cur.words, w)
		}
	}
}

// fdRedirect reports whether the digits at the current position are a file
// descriptor number in front of a redirection operator ("2>err").
func (p *parser) fdRedirect() bool {
	i := p.pos
	for i < len(p.src) && p.src[i] >= '0' && p.src[i] <= '9' {
		i++
	}
	return i < len(p.src) && (p.src[i] == '<' || p.src[i] == '>') &&
		!strings.HasPrefix(p.src[i:], "<(") && !strings.HasPrefix(p.src[i:], ">(")
}

// emptyParens consumes "( )" when that is what comes next.
func (p *parser) emptyParens() bool {
	i := p.pos + 1
	for i < len(p.src) && (p.src[i] == ' ' || p.src[i] == '\t') {
		i++
	}
	if i < len(p.src) && p.src[i] == ')' {
		p.pos = i + 1
		return true
	}
	return false
}

// funcName returns the name being defined when the command so far is
// "name" or "function name", just before "()".
func funcName(c *command) (string, bool) {
	ws := c.words
	if len(ws) == 2 && ws[0].raw == "function" {
		ws = ws[1:]
	}
	if len(ws) != 1 || len(c.redirs) > 0 || ws[0].raw != ws[0].text || ws[0].dynamic || ws[0].text == "" {
		return "", false
	}
	return ws[0].text, true
}

// redirectOps lists the redirection operators, longest first so that a
// prefix never shadows a longer operator.
func redirectOps() []string {
	return []string{"<<<", "<<-", "&>>", "<<", ">>", ">|", ">&", "<&", "<>", "&>", "<", ">"}
}

func (p *parser) redirect() (redirect, error) {
	var r redirect
	for _, op := range redirectOps() {
		if p.at(op) {
			r.op = op
			p.pos += len(op)
			break
		}
	}
	p.skipBlanks()
	if p.eof() {
		return r, errMissingTarget
	}
	if c := p.src[p.pos]; strings.IndexByte(" \t\n;&|()", c) >= 0 ||
		(c == '<' || c == '>') && !p.at("<(") && !p.at(">(") {
		return r, errMissingTarget
	}
	w, err := p.word()
	if err != nil {
		return r, err
	}
	r.target = w
	if r.op == "<<" || r.op == "<<-" {
		r.body = new(string)
		p.heredocs = append(p.heredocs, heredoc{body: r.body, delim: w.text, strip: r.op == "<<-", literal: w.quoted})
	}
	return r, nil
}

// readHeredocs consumes the bodies of the here-documents started on the line
// just ended. Bodies are data, not commands, except for the substitutions
// an unquoted delimiter leaves active.
func (p *parser) readHeredocs() error {
	hs := p.heredocs
	p.heredocs = nil
	for _, h := range hs {
		var body strings.Builder
		for !p.eof() {
			line := p.src[p.pos:]
			if i := strings.IndexByte(line, '\n'); i >= 0 {
				line = line[:i]
				p.pos += i + 1
			} else {
				p.pos = len(p.src)
			}
			cmp := line
			if h.strip {
				cmp = strings.TrimLeft(line, "\t")
			}
			if cmp == h.delim {
				break
			}
			body.WriteString(line)
			body.WriteByte('\n')
		}
		*h.body = body.String()
		if h.literal {
			continue
		}
		subs, err := p.expansionsIn(body.String())
		if err != nil {
			return err
		}
		for _, s := range subs {
			p.addNested(s)
		}
	}
	return nil
}

// expansionsIn returns the substitutions of text that is expanded like the
// inside of double quotes (a here-document body).
func (p *parser) expansionsIn(text string) ([]*script, error) {
	q := &parser{src: text, depth: p.depth}
	var w word
	var b strings.Builder
	for !q.eof() {
		switch q.src[q.pos] {
		case '\\':
			q.pos += 2
		case '$':
			if err := q.dollar(&w, &b, true); err != nil {
				return nil, err
			}
		case '`':
			if err := q.backtick(&w, &b); err != nil {
				return nil, err
			}
		default:
			q.pos++
		}
	}
	return w.subs, nil
}

// isKeyword reports whether w is a reserved word that may precede a command
// without changing which program runs.
func isKeyword(w word) bool {
	if w.raw != w.text {
		return false // a quoted keyword is an ordinary word
	}
	switch w.text {
	case "!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "esac":
		return true
	}
	return false
}

func atCommandStart(c *command) bool {
	for _, w := range c.words {
		if !isKeyword(w) {
			return false
		}
	}
	return true
}

// caseHead reports whether the command so far is "case WORD", so that the
// next "in" starts the patterns.
func caseHead(c *command) bool {
	n := len(c.words)
	return n >= 2 && c.words[n-2].raw == "case" && atCommandStart(&command{words: c.words[:n-2]})
}

// track follows brace groups and function bodies as commands end, so each
// command knows which function (if any) it belongs to.
func (p *parser) track(c *command) {
	if len(c.words) >= 2 && c.words[0].raw == "function" {
		// "function name" (bash) starts a definition; the name is not a
		// program to run.
		p.pendingFn = strings.TrimSuffix(c.words[1].text, "()")
		c.words = c.words[2:]
	}
	ws := c.words
	i := 0
	for ; i < len(ws); i++ {
		w := ws[i]
		if w.raw != w.text {
			break
		}
		if w.text == "{" {
			if p.pendingFn != "" {
				p.fns = append(p.fns, openFn{name: p.pendingFn, braces: p.braces})
				p.pendingFn = ""
			}
			p.braces++
			continue
		}
		if w.text == "}" {
			if p.braces > 0 {
				p.braces--
			}
			if n := len(p.fns); n > 0 && p.fns[n-1].braces == p.braces {
				p.fns = p.fns[:n-1]
			}
			continue
		}
		if !isKeyword(w) {
			break
		}
	}
	if i < len(ws) {
		// Only a brace-group body is followed; any other command ends the
		// wait for one.
		p.pendingFn = ""
	}
	if n := len(p.fns); n > 0 {
		c.fn = p.fns[n-1].name
	}
}

// forkBombPipeline reports whether a pipeline in a function's body calls
// that function through a pipe or in the background: each call then starts
// two more, without end.
func forkBombPipeline(pl pipeline) bool {
	if len(pl.cmds) < 2 && !pl.background {
		return false
	}
	for _, c := range pl.cmds {
		if c.fn == "" {
			continue
		}
		for _, w := range c.words {
			if isKeyword(w) {
				continue
			}
			if w.raw == c.fn {
				return true
			}
			break
		}
	}
	return false
}
