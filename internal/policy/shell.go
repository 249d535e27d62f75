package policy

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// This file, with shell_tree.go (statements and words), shell_arith.go
// (arithmetic and the variables it reads) and shell_resolve.go (wrappers,
// options), turns a command line into what the checks in patterns*.go look
// at. The command line is parsed as bash by mvdan.cc/sh/v3/syntax, a full
// parser of the language, and its syntax tree is walked down to every
// simple command that may run: inside pipelines, lists, subshells, brace
// groups, if/while/for/case bodies, function bodies, coproc, command and
// process substitutions, parameter expansions, arithmetic and here-documents.
// Words keep their expansions as written ("$HOME", "$(pwd)") because their
// values are only known when the command runs. Whatever the parser rejects,
// or the walk cannot follow, is an error, and the policy then asks (fails
// closed).

// parseError says why a command line could not be read.
type parseError string

func (e parseError) Error() string { return string(e) }

const (
	errTooDeep     parseError = "nested too deeply"
	errUnsupported parseError = "a construct the checks do not follow"
)

// maxNesting bounds command lines inside command lines (sh -c inside
// sh -c, eval, trap handlers) and arithmetic values read as arithmetic:
// real commands stay far below it, and a bound keeps hostile input from
// multiplying the work.
const maxNesting = 12

// maxDepth bounds brackets and compound commands nested in one command
// line. The parser recurses once per level, in time that grows faster than
// the input, and overflows the stack (a fatal error, not a panic) on a few
// hundred thousand levels; no real command comes near this bound.
const maxDepth = 100

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
	// body is the text of a here-document as written.
	body *string
}

// command is a simple command, or the redirections of a compound one (no
// words).
type command struct {
	words  []word
	redirs []redirect
	// fn is the function whose body contains this command, for fork-bomb
	// detection.
	fn string
}

type pipeline struct {
	cmds       []*command
	background bool
}

// script is what one command line runs, flattened: the bodies of compound
// commands are pipelines of the script in the order they appear.
type script struct {
	pipelines []pipeline
	// nested holds every substitution of the script (in words, redirection
	// targets and here-document bodies): they run too.
	nested []*script
	// forkBomb is set when a function calls itself in a pipeline or in the
	// background from its own body.
	forkBomb bool
	// findings are risks seen while reading the script rather than in a
	// program and its arguments (arithmetic on unknown values, prompt
	// expansion).
	findings []finding
}

// parse reads a command line as bash. depth is how deeply the text is
// nested in other command lines (sh -c, eval).
func parse(src string, depth int) (*script, error) {
	if depth > maxNesting {
		return nil, errTooDeep
	}
	if lexicalDepth(src) > maxDepth {
		return nil, errTooDeep
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		return nil, parseError(syntaxMessage(err))
	}
	c := newConverter(src, depth, collectVars(f))
	s := c.file(f)
	if c.err != nil {
		return nil, c.err
	}
	return s, nil
}

// syntaxMessage is the parser's error without the "1:5: " position, which
// means little to a person reading an approval request.
func syntaxMessage(err error) string {
	switch e := err.(type) {
	case syntax.ParseError:
		return e.Text
	case syntax.LangError:
		return e.Feature + " is not bash"
	}
	return err.Error()
}

// lexicalDepth over-estimates how deeply src nests: every bracket and
// compound-command keyword opens a level, quotes included. It only has to
// be cheap and never under-estimate the parser's recursion.
func lexicalDepth(src string) int {
	depth, maxd, prefixes := 0, 0, 0
	open := func() {
		depth++
		maxd = max(maxd, depth)
	}
	closeLevel := func() { depth = max(depth-1, 0) }
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case '(', '{', '[':
			open()
		case ')', '}', ']':
			closeLevel()
		default:
			if !isNameStart(c) || i > 0 && isNameChar(src[i-1]) {
				continue
			}
			j := i
			for j < len(src) && isNameChar(src[j]) {
				j++
			}
			switch src[i:j] {
			case "if", "case", "while", "until", "for", "select":
				open()
			case "time", "coproc":
				// Prefixes that nest without a closing word.
				prefixes++
				maxd = max(maxd, prefixes)
			case "fi", "esac", "done":
				closeLevel()
			}
			i = j - 1
		}
	}
	return maxd
}
