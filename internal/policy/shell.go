package policy

import (
	"path"
	"strings"
)

// This file is a small, conservative reader of /bin/sh command lines. It is
// not a shell: it recovers enough structure (simple commands, pipelines,
// redirections, substitutions, the program a wrapper finally runs) for the
// checks in patterns.go to look at programs and their flags rather than at
// raw text, so that `echo "rm -rf /"` is harmless and `/bin/rm -r x` is not.
// Whatever it cannot read with confidence is an error, and the policy then
// asks (fails closed).

// parseError says why a command line could not be read.
type parseError string

func (e parseError) Error() string { return string(e) }

const (
	errUnterminatedQuote parseError = "unterminated quote"
	errUnterminatedSubst parseError = "unterminated substitution"
	errUnbalancedParen   parseError = "unbalanced parenthesis"
	errMissingTarget     parseError = "redirection without a target"
	errTooDeep           parseError = "nested too deeply"
	errArithmetic        parseError = "arithmetic expansion that is not plain arithmetic"
)

// maxNesting bounds substitutions inside substitutions (and sh -c inside
// sh -c): real commands stay far below it, and a bound keeps hostile input
// from exhausting the stack.
const maxNesting = 12

// word is one shell word after quote removal. Expansions are kept as they
// were written ("$HOME", "$(pwd)") because their values are only known when
// the command runs.
type word struct {
	text string
	// raw is the word as written, quotes included.
	raw string
	// dynamic is set when the word contains a parameter, command,
	// arithmetic or brace expansion, or ANSI-C quoting: its final value is
	// not text.
	dynamic bool
	// glob is set when the word contains an unquoted pattern character.
	glob bool
	// quoted is set when any part of the word was quoted or escaped.
	quoted bool
	// litFrom is where in text the part after the last expansion starts:
	// text[litFrom:] is exactly what the program will see.
	litFrom int
	// subs are the command and process substitutions inside the word.
	subs []*script
}

type redirect struct {
	// op is the operator without a file descriptor number (">", ">>", "<<",
	// ">&", ...).
	op     string
	target word
	// body is the text of a here-document, filled in when the line ends.
	body *string
}

type command struct {
	words  []word
	redirs []redirect
	// fn is the function whose body (a brace group) contains this command,
	// for fork-bomb detection.
	fn string
}

type pipeline struct {
	cmds       []*command
	background bool
}

type script struct {
	pipelines []pipeline
	// nested holds every substitution of the script (in words, redirection
	// targets and here-document bodies): they run too.
	nested []*script
	// forkBomb is set when a function calls itself in a pipeline or in the
	// background from its own body.
	forkBomb bool
}

type heredoc struct {
	body    *string
	delim   string
	strip   bool // <<- strips leading tabs
	literal bool // a quoted delimiter turns expansions off
}

type openFn struct {
	name   string
	braces int
}

type parser struct {
	src      string
	pos      int
	depth    int
	cur      *script
	heredocs []heredoc
	// Function-body tracking for fork bombs: brace groups open, function
	// bodies open, and a function name waiting for its body.
	braces    int
	fns       []openFn
	pendingFn string
	// inCase counts open case statements; casePattern is set where a
	// case pattern is expected, so ")" ends the pattern.
	inCase      int
	casePattern bool
}

// parse reads a command line. depth is how deeply the text is nested in
// other command lines (sh -c, eval, backticks).
func parse(src string, depth int) (*script, error) {
	if depth > maxNesting {
		return nil, errTooDeep
	}
	p := &parser{src: src, depth: depth}
	return p.list(false)
}

func (p *parser) at(s string) bool { return strings.HasPrefix(p.src[p.pos:], s) }

func (p *parser) eof() bool { return p.pos >= len(p.src) }

func (p *parser) skipBlanks() {
	for !p.eof() {
		switch {
		case p.src[p.pos] == ' ' || p.src[p.pos] == '\t':
			p.pos++
		case p.at("\\\n"):
			p.pos += 2
		default:
			return
		}
	}
}

func (p *parser) addNested(s *script) {
	if p.cur != nil {
		p.cur.nested = append(p.cur.nested, s)
	}
}

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

// isAssignment reports whether w is a NAME=value prefix of a command.
func isAssignment(w word) bool {
	i := 0
	for i < len(w.raw) && isNameChar(w.raw[i]) {
		i++
	}
	if i == 0 || !isNameStart(w.raw[0]) || i >= len(w.raw) {
		return false
	}
	return w.raw[i] == '=' || strings.HasPrefix(w.raw[i:], "+=")
}

// invocation is the program a simple command finally runs, once reserved
// words, variable assignments and wrappers (env, nohup, sudo, ...) are
// looked through.
type invocation struct {
	// name is the basename of the program; empty when nothing runs.
	name string
	args []word
	// dynamic is set when the program is only known at run time.
	dynamic bool
	// elevated names the wrapper that runs the program as another user.
	elevated string
	// inner are command lines a wrapper hands to a shell (su -c, env -S).
	inner []string
}

// resolve looks through wrappers to the program that runs. Wrappers that
// take a command as their arguments are unwrapped; unknown ones are the
// program (a limit of a lexical check).
func resolve(words []word) invocation {
	var inv invocation
	ws := words
	for len(ws) > 0 && (isKeyword(ws[0]) || isAssignment(ws[0])) {
		ws = ws[1:]
	}
	for len(ws) > 0 {
		w := ws[0]
		name, ok := programName(w)
		if !ok {
			inv.dynamic = true
			inv.args = ws[1:]
			return inv
		}
		rest := ws[1:]
		switch name {
		case "sudo":
			inv.elevated = "sudo"
			ws = skipAssignments(skipOpts(rest, "ugCDhprtTUR", "user", "group", "close-from", "chdir",
				"host", "prompt", "role", "type", "command-timeout", "other-user", "chroot"))
		case "doas":
			inv.elevated = "doas"
			ws = skipOpts(rest, "uC")
		case "pkexec":
			inv.elevated = "pkexec"
			ws = skipOpts(rest, "", "user")
		case "su":
			inv.elevated = "su"
			if c, ok := optionValue(rest, 'c', "command", true); ok {
				inv.inner = append(inv.inner, c)
			}
			return inv
		case "command":
			f := flags(leadingOpts(rest), "")
			if f.has('v') || f.has('V') {
				return inv // only looks the name up
			}
			ws = skipOpts(rest, "")
		case "builtin", "nohup", "busybox", "toybox":
			ws = rest
		case "exec":
			ws = skipOpts(rest, "a")
		case "setsid":
			ws = skipOpts(rest, "")
		case "time":
			ws = skipOpts(rest, "fo", "format", "output")
		case "nice":
			ws = skipOpts(rest, "n", "adjustment")
		case "ionice":
			ws = skipOpts(rest, "cnp", "class", "classdata", "pid")
		case "stdbuf":
			ws = skipOpts(rest, "ioe", "input", "output", "error")
		case "timeout":
			ws = skipOpts(rest, "sk", "signal", "kill-after")
			if len(ws) > 0 {
				ws = ws[1:] // the duration
			}
		case "chrt", "taskset":
			ws = skipOpts(rest, "")
			if len(ws) > 0 {
				ws = ws[1:] // the priority or CPU mask
			}
		case "xargs":
			// The command runs with more arguments read from stdin.
			ws = skipOpts(rest, "adEILnPs", "arg-file", "delimiter", "max-lines", "max-args",
				"max-procs", "max-chars", "process-slot-var")
		case "env":
			if s, ok := optionValue(rest, 'S', "split-string", false); ok {
				tail := skipAssignments(skipOpts(rest, "uCS", "unset", "chdir", "split-string"))
				inv.inner = append(inv.inner, s+" "+joinText(tail))
				return inv
			}
			ws = skipAssignments(skipOpts(rest, "uC", "unset", "chdir"))
		default:
			inv.name = name
			inv.args = rest
			return inv
		}
	}
	return inv
}

// programName returns the basename of the program a command word runs. A
// word with expansions still names a known program when its last path
// component is plain text after them ("$(go env GOPATH)/bin/tool"): only
// the directory is computed.
func programName(w word) (string, bool) {
	t := w.text
	if w.dynamic || w.glob {
		lit := t[w.litFrom:]
		i := strings.LastIndexByte(lit, '/')
		if i < 0 {
			return "", false
		}
		t = lit[i:]
	}
	base := path.Base(t)
	if w.dynamic || w.glob {
		for _, c := range []byte(base) {
			if !isNameChar(c) && c != '.' && c != '-' && c != '+' {
				return "", false
			}
		}
		if base == "." || base == ".." {
			return "", false
		}
	}
	return base, true
}

// skipOpts drops the options in front of a wrapped command. withValue holds
// the short options that take a value; long names those of the long options
// that do.
func skipOpts(args []word, withValue string, long ...string) []word {
	for len(args) > 0 {
		t := args[0].text
		if t == "--" {
			return args[1:]
		}
		if len(t) < 2 || t[0] != '-' {
			return args
		}
		args = args[1:]
		if strings.HasPrefix(t, "--") {
			name, _, hasValue := strings.Cut(t[2:], "=")
			if !hasValue && contains(long, name) && len(args) > 0 {
				args = args[1:]
			}
			continue
		}
		for i := 1; i < len(t); i++ {
			if strings.IndexByte(withValue, t[i]) >= 0 {
				if i == len(t)-1 && len(args) > 0 {
					args = args[1:]
				}
				break
			}
		}
	}
	return args
}

// leadingOpts returns the options before the first operand.
func leadingOpts(args []word) []word {
	for i, w := range args {
		if w.text == "--" || len(w.text) < 2 || w.text[0] != '-' {
			return args[:i]
		}
	}
	return args
}

func skipAssignments(args []word) []word {
	for len(args) > 0 && isAssignment(args[0]) {
		args = args[1:]
	}
	return args
}

// optionValue finds the value of short option c or long option long ("-c
// cmd", "-lc cmd", "--command=cmd"). With permute, options may follow
// operands (GNU getopt); otherwise the first operand ends them.
func optionValue(args []word, c byte, long string, permute bool) (string, bool) {
	for i := 0; i < len(args); i++ {
		t := args[i].text
		if t == "--" || !permute && (len(t) < 2 || t[0] != '-') {
			return "", false
		}
		if strings.HasPrefix(t, "--") {
			name, v, hasValue := strings.Cut(t[2:], "=")
			if name == long {
				if hasValue {
					return v, true
				}
				if i+1 < len(args) {
					return args[i+1].text, true
				}
			}
			continue
		}
		if len(t) < 2 || t[0] != '-' {
			continue
		}
		if j := strings.IndexByte(t[1:], c); j >= 0 {
			if v := t[j+2:]; v != "" {
				return v, true
			}
			if i+1 < len(args) {
				return args[i+1].text, true
			}
		}
	}
	return "", false
}

func joinText(ws []word) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.text
	}
	return strings.Join(parts, " ")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// flagSet is a command's arguments split GNU-style: options may follow
// operands, and "--" ends the options.
type flagSet struct {
	short    []byte
	long     []string
	operands []word
	// dynamic is set when an option was built from an expansion ("-$F"):
	// which options it holds is only known at run time.
	dynamic bool
}

func flags(args []word, withValue string, long ...string) flagSet {
	var f flagSet
	for i := 0; i < len(args); i++ {
		w := args[i]
		t := w.text
		if t == "--" {
			f.operands = append(f.operands, args[i+1:]...)
			break
		}
		if len(t) < 2 || t[0] != '-' {
			f.operands = append(f.operands, w)
			continue
		}
		if w.dynamic {
			f.dynamic = true
		}
		if strings.HasPrefix(t, "--") {
			name, _, hasValue := strings.Cut(t[2:], "=")
			f.long = append(f.long, name)
			if !hasValue && contains(long, name) {
				i++
			}
			continue
		}
		for j := 1; j < len(t); j++ {
			f.short = append(f.short, t[j])
			if strings.IndexByte(withValue, t[j]) >= 0 {
				if j == len(t)-1 {
					i++
				}
				break
			}
		}
	}
	return f
}

func (f flagSet) has(c byte) bool {
	for _, x := range f.short {
		if x == c {
			return true
		}
	}
	return false
}

// hasLong reports whether the long option name was given, also as an
// abbreviation: GNU tools and git accept any unambiguous prefix
// ("--recur" for "--recursive").
func (f flagSet) hasLong(name string) bool {
	for _, g := range f.long {
		if g == name || len(g) >= 3 && strings.HasPrefix(name, g) {
			return true
		}
	}
	return false
}
