package policy

import "strings"

// This file, with shell_lex.go (words, quoting, expansions), shell_parse.go
// (command lists, pipelines, redirections, here-documents) and
// shell_resolve.go (wrappers, options), is a small, conservative reader of
// /bin/sh command lines. It is not a shell: it recovers enough structure
// (simple commands, pipelines, redirections, substitutions, the program a
// wrapper finally runs) for the checks in patterns*.go to look at programs
// and their flags rather than at raw text, so that `echo "rm -rf /"` is
// harmless and `/bin/rm -r x` is not. Whatever it cannot read with
// confidence is an error, and the policy then asks (fails closed).

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
