package policy

import (
	"strings"

	"github.com/caduceus-dev/caduceus/internal/tool"
)

// Approval rules remember a "session" or "always" answer as a tool name and
// a pattern. The caller compares the tool names; Match compares the pattern
// with the call.
//
// A rule only ever stands in for the person when Decide returned Ask with
// RuleEligible set. Dangerous and unreadable commands are never eligible, so
// no rule, however broad, approves "rm -rf build" or "curl ... | sh"; and a
// Deny is never turned into anything else.

// PatternFor returns the pattern an approval of this call remembers: the
// exact command for a command (no generalisation: a person who approved
// "go test ./..." has not approved "go test -exec evil ./..."), and the
// exact Action for every other tool. Literal "*" and the backslashes that
// would make it ambiguous are escaped, so the pattern matches this call and
// nothing else until a person edits it.
func PatternFor(toolName string, in tool.Intent) string {
	subject, _ := subjectOf(toolName, in)
	return escapePattern(subject)
}

// Match reports whether a rule's pattern covers the call. A pattern is the
// subject (the command of a command call, the Action of any other) spelled
// exactly, except that "*" matches any run of characters, spaces and slashes
// included ("go test *" matches "go test ./..."), "\*" is a literal star and
// "\\" a literal backslash. There are no other metacharacters.
//
// For commands, "*" does not match the shell's control characters
// (; & | < > ( ) $ ` and newlines): "go test *" must not approve
// "go test ./... ; rm notes.txt" or "go test $(evil)".
//
// An empty pattern matches nothing.
func Match(pattern, toolName string, in tool.Intent) bool {
	if pattern == "" {
		return false
	}
	subject, shell := subjectOf(toolName, in)
	return globMatch(parsePattern(pattern), subject, shell)
}

// subjectOf is the text a rule is matched against, and whether it is a
// shell command.
func subjectOf(toolName string, in tool.Intent) (string, bool) {
	switch {
	case in.Effect == tool.EffectExec && in.Command != "":
		return in.Command, true
	case in.Action != "":
		return in.Action, false
	}
	return toolName, false
}

func escapePattern(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '*':
			b.WriteString(`\*`)
		case c == '\\' && i+1 < len(s) && (s[i+1] == '\\' || s[i+1] == '*'):
			// Only a backslash that would otherwise escape is doubled, so
			// commands with backslashes stay readable in the rule list.
			b.WriteString(`\\`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// parsePattern splits a pattern at its unescaped stars into literal pieces:
// a pattern with n stars yields n+1 pieces.
func parsePattern(pattern string) []string {
	var pieces []string
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c == '\\' && i+1 < len(pattern) && (pattern[i+1] == '\\' || pattern[i+1] == '*'):
			b.WriteByte(pattern[i+1])
			i++
		case c == '*':
			pieces = append(pieces, b.String())
			b.Reset()
		default:
			b.WriteByte(c)
		}
	}
	return append(pieces, b.String())
}

// shellControl are the characters a star may not match in a command.
const shellControl = ";&|<>()$`\n\r"

// globMatch matches pieces joined by stars against s. It tracks every
// position the pattern may have reached, which stays linear in the number
// of stars even when stars are restricted (a greedy matcher with
// backtracking to the last star is only correct when stars match anything).
func globMatch(pieces []string, s string, shell bool) bool {
	reach := make([]bool, len(s)+1)
	next := make([]bool, len(s)+1)
	reach[0] = true
	for i, lit := range pieces {
		if i > 0 {
			// The star before lit: extend every reached position over
			// characters a star may match.
			for p := 1; p <= len(s); p++ {
				if !reach[p] && reach[p-1] && (!shell || strings.IndexByte(shellControl, s[p-1]) < 0) {
					reach[p] = true
				}
			}
		}
		found := false
		for p := range next {
			next[p] = false
		}
		for p := 0; p+len(lit) <= len(s); p++ {
			if reach[p] && s[p:p+len(lit)] == lit {
				next[p+len(lit)] = true
				found = true
			}
		}
		if !found {
			return false
		}
		reach, next = next, reach
	}
	return reach[len(s)]
}
