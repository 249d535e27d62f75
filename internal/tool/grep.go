package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider"
)

// NameGrep is the grep tool.
const NameGrep = "grep"

const (
	grepDefaultLimit = 200
	grepMaxLimit     = 2000
	grepMaxContext   = 5
	// grepMaxFileBytes skips files too large to be source: logs, dumps,
	// data sets. They would cost a lot and rarely hold what the model seeks.
	grepMaxFileBytes = 5 << 20
	// grepMaxLineBytes cuts the text of matched lines, so a hit in minified
	// code does not fill the context.
	grepMaxLineBytes = 500
)

// GrepData is the structured result of grep.
type GrepData struct {
	OK            bool        `json:"ok"`
	Pattern       string      `json:"pattern"`
	Matches       []GrepMatch `json:"matches"`
	FilesSearched int         `json:"files_searched"`
	Truncated     bool        `json:"truncated"`
	// Ignored counts the entries .gitignore rules hid (an ignored
	// directory counts once); zero with include_ignored.
	Ignored int `json:"ignored"`
}

// GrepMatch is one matching line. Path is relative to the workspace, Line is
// 1-based, Text is the line without its newline, cut at 500 bytes.
type GrepMatch struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

type grepArgs struct {
	Pattern    string `json:"pattern"`
	Path       string `json:"path"`
	Glob       string `json:"glob"`
	IgnoreCase bool   `json:"ignore_case"`
	Context    int    `json:"context"`
	Limit      int    `json:"limit"`
	// IncludeIgnored searches what .gitignore rules exclude too.
	IncludeIgnored bool `json:"include_ignored"`
}

type grepTool struct{}

// NewGrep returns the grep tool.
func NewGrep(Config) Tool { return grepTool{} }

const grepSchema = `{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "Regular expression (Go RE2 syntax), matched against each line."},
    "path": {"type": "string", "description": "File or directory to search, relative to the workspace root. Default \".\"."},
    "glob": {"type": "string", "description": "Only search files matching this glob, e.g. \"*.go\" or \"src/**/*.{ts,tsx}\". Without a / it matches file names at any depth; with one, paths relative to path."},
    "ignore_case": {"type": "boolean", "description": "Match case-insensitively. Default false."},
    "context": {"type": "integer", "minimum": 0, "maximum": 5, "description": "Lines of context to show before and after each match. Default 0."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 2000, "description": "Maximum number of matching lines. Default 200."},
    "include_ignored": {"type": "boolean", "description": "Also search files that .gitignore rules exclude (node_modules/, build output, ...). Default false: they are skipped and the result says how many entries were."}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`

func (grepTool) Spec() provider.ToolSpec {
	return provider.ToolSpec{
		Name: NameGrep,
		Description: "Search file contents for a regular expression, line by line. Output lines read path:line: text. " +
			".git, binary files and files over 5 MiB are skipped, as are files excluded by .gitignore unless include_ignored is set; symlinked directories are not followed.",
		Parameters: json.RawMessage(grepSchema),
	}
}

func (grepTool) Label(args json.RawMessage) string {
	var a grepArgs
	if err := decodeArgs(args, &a); err != nil || a.Pattern == "" {
		return "grep (invalid arguments)"
	}
	l := "grep " + truncate(a.Pattern, 120)
	if p := strings.TrimSpace(a.Path); p != "" && filepath.Clean(p) != "." {
		l += " in " + truncate(p, 120)
	}
	if a.Glob != "" {
		l += " (" + truncate(a.Glob, 60) + ")"
	}
	return l + ignoredLabel(a.IncludeIgnored)
}

func (grepTool) Intent(json.RawMessage) Intent { return Intent{Effect: EffectNone} }

func (grepTool) Run(ctx context.Context, env Env, args json.RawMessage) (Result, error) {
	ws, err := useWorkspace(env)
	if err != nil {
		return Result{}, err
	}
	defer ws.Close()
	var a grepArgs
	if err := decodeArgs(args, &a); err != nil {
		return invalidArgs(err), nil
	}
	switch {
	case a.Pattern == "":
		return invalidArgs(errors.New("pattern is required")), nil
	case a.Context < 0:
		return invalidArgs(errors.New("context must be between 0 and 5")), nil
	}
	a.Context = min(a.Context, grepMaxContext)
	if a.Limit, err = count("limit", a.Limit, grepDefaultLimit, grepMaxLimit); err != nil {
		return invalidArgs(err), nil
	}
	expr := a.Pattern
	if a.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return invalidArgs(fmt.Errorf("pattern is not a valid regular expression: %s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))), nil
	}
	var filter *globMatcher
	if a.Glob != "" {
		g := a.Glob
		if !strings.Contains(g, "/") {
			// Like ripgrep's -g: a bare name pattern selects files anywhere.
			g = "**/" + g
		}
		if filter, err = compileGlob(g); err != nil {
			return invalidArgs(fmt.Errorf("glob: %v", err)), nil
		}
	}
	real, rel, fi, res := searchRoot(ws, a.Path)
	if res != nil {
		return *res, nil
	}

	s := searcher{ctx: ctx, ws: ws, re: re, context: a.Context, limit: a.Limit}
	var hidden hiddenCount
	if !fi.IsDir() {
		// A file named outright is searched whatever glob and ignore rules
		// say, and why it cannot be is worth an error rather than an
		// empty answer.
		if !fi.Mode().IsRegular() {
			return errorResult("%s is not a regular file", rel), nil
		}
		if fi.Size() > grepMaxFileBytes {
			return errorResult("%s is too large to search (%d bytes, limit %d)", rel, fi.Size(), grepMaxFileBytes), nil
		}
		var skip bool
		if skip, err = s.file(real, rel); skip {
			return errorResult("%s looks like a binary file; grep only searches text", rel), nil
		}
	} else {
		w := treeWalker{ctx: ctx, ws: ws, match: filter, includeIgnored: a.IncludeIgnored}
		err = w.walk(real, rel, func(f walkedFile) bool {
			if f.size > grepMaxFileBytes {
				s.skipped++
				return true
			}
			// Files that vanish or cannot be read mid-walk are skipped
			// like binary ones: one bad file should not hide the rest.
			if skip, err := s.file(f.name, f.rel); skip || err != nil {
				s.skipped++
			}
			return !s.full && s.ctx.Err() == nil
		})
		s.truncated = s.truncated || w.capped
		s.capped = w.capped
		hidden = w.hidden
	}
	if err != nil || ctx.Err() != nil {
		if ctx.Err() != nil {
			return Result{Status: event.ToolCancelled, Output: "cancelled"}, nil
		}
		return rootFailure(fmt.Errorf("cannot search %s: %w", rel, bareErr(err)), a.Path), nil
	}

	data := GrepData{
		OK:            true,
		Pattern:       a.Pattern,
		Matches:       s.matches,
		FilesSearched: s.searched,
		Truncated:     s.truncated,
		Ignored:       hidden.n,
	}
	if data.Matches == nil {
		data.Matches = []GrepMatch{}
	}
	out := s.format(a.Pattern, rel)
	if note := hidden.note(); note != "" {
		out += "\n" + note
	}
	return Result{Status: event.ToolOK, Output: out, Data: data}, nil
}

// searcher accumulates matches across files.
type searcher struct {
	ctx     context.Context
	ws      *workspaceFS
	re      *regexp.Regexp
	context int
	limit   int

	matches   []GrepMatch
	searched  int
	skipped   int // binary, too large or unreadable
	full      bool
	truncated bool
	capped    bool
	out       strings.Builder
}

// file searches one file and reports skip for a binary one. Output for the
// model is written as it goes: matches grouped by file, context lines as
// "path-line- text" and "--" between separate groups, as grep does.
func (s *searcher) file(real, rel string) (skip bool, err error) {
	f, _, err := s.ws.openRead(real)
	if err != nil {
		return false, err
	}
	if f == nil {
		// No longer a regular file: it changed since the walk saw it.
		return true, nil
	}
	defer f.Close()
	// The size was checked by the caller, but the file may have grown;
	// reading one byte past the limit tells.
	content, err := io.ReadAll(io.LimitReader(f, grepMaxFileBytes+1))
	if err != nil {
		return false, err
	}
	if len(content) > grepMaxFileBytes || bytes.IndexByte(content[:min(len(content), binarySniff)], 0) >= 0 {
		return true, nil
	}
	s.searched++

	lines := bytes.SplitAfter(content, []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	shownUpTo := -1 // index of the last line written for this file
	for i, line := range lines {
		if i%4096 == 0 && s.ctx.Err() != nil {
			return false, s.ctx.Err()
		}
		if !s.re.Match(bytes.TrimRight(line, "\r\n")) {
			continue
		}
		if len(s.matches) == s.limit {
			s.full, s.truncated = true, true
			break
		}
		text := grepLineText(line)
		s.matches = append(s.matches, GrepMatch{Path: rel, Line: i + 1, Text: text})

		from := max(i-s.context, shownUpTo+1)
		if shownUpTo >= 0 && from > shownUpTo+1 && s.context > 0 {
			s.out.WriteString("--\n")
		}
		if shownUpTo < 0 && s.out.Len() > 0 {
			s.out.WriteString("\n") // a blank line between files
		}
		for j := from; j < i; j++ {
			fmt.Fprintf(&s.out, "%s-%d- %s\n", rel, j+1, grepLineText(lines[j]))
		}
		fmt.Fprintf(&s.out, "%s:%d: %s\n", rel, i+1, text)
		shownUpTo = i
		// Trailing context is written up to the next match, or in full
		// below when no further match is close enough to need it.
		for j := i + 1; j <= min(i+s.context, len(lines)-1); j++ {
			if s.re.Match(bytes.TrimRight(lines[j], "\r\n")) {
				break
			}
			fmt.Fprintf(&s.out, "%s-%d- %s\n", rel, j+1, grepLineText(lines[j]))
			shownUpTo = j
		}
	}
	return false, nil
}

func grepLineText(line []byte) string {
	line = bytes.TrimRight(line, "\r\n")
	cut := len(line) > grepMaxLineBytes
	if cut {
		line = trimPartialRune(line[:grepMaxLineBytes])
	}
	text := strings.ToValidUTF8(string(line), "\uFFFD")
	if cut {
		text += " …"
	}
	return text
}

func (s *searcher) format(pattern, rel string) string {
	var b strings.Builder
	if len(s.matches) == 0 {
		fmt.Fprintf(&b, "No matches for %s in %s (%s searched", pattern, rel, nounCount(s.searched, "file"))
	} else {
		b.WriteString(s.out.String())
		fmt.Fprintf(&b, "\n%s in %s searched", nounCount(len(s.matches), "match"), nounCount(s.searched, "file"))
	}
	if s.skipped > 0 {
		fmt.Fprintf(&b, "; %d binary, large or unreadable skipped", s.skipped)
	}
	if len(s.matches) == 0 {
		b.WriteByte(')')
	}
	b.WriteByte('.')
	switch {
	case s.capped:
		fmt.Fprintf(&b, "\n… [search stopped after %d directory entries; narrow path or glob]", walkMaxEntries)
	case s.full:
		fmt.Fprintf(&b, "\n… [stopped at %d matches; narrow the pattern, path or glob, or raise limit]", len(s.matches))
	}
	return b.String()
}
