package tool

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/ignore"
	"github.com/caduceus-dev/caduceus/internal/provider"
)

// NameGlob is the glob tool.
const NameGlob = "glob"

const (
	globDefaultLimit = 500
	globMaxLimit     = 5000
	// globMaxAlternatives bounds brace expansion: "{a,b}{c,d}..." grows
	// exponentially.
	globMaxAlternatives = 256
	// walkMaxEntries bounds the directory entries one glob or grep call
	// looks at, so a pattern over a huge tree ends with a truncated answer
	// instead of running for minutes.
	walkMaxEntries = 200_000
)

// GlobData is the structured result of glob.
type GlobData struct {
	OK        bool        `json:"ok"`
	Pattern   string      `json:"pattern"`
	Matches   []GlobMatch `json:"matches"`
	Truncated bool        `json:"truncated"`
	// Ignored counts the entries .gitignore rules hid (an ignored
	// directory counts once); zero with include_ignored.
	Ignored int `json:"ignored"`
}

// GlobMatch is one matching file; Path is relative to the workspace.
type GlobMatch struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
}

type globArgs struct {
	Pattern        string `json:"pattern"`
	Path           string `json:"path"`
	Limit          int    `json:"limit"`
	IncludeIgnored bool   `json:"include_ignored"`
}

type globTool struct{}

// NewGlob returns the glob tool.
func NewGlob(Config) Tool { return globTool{} }

const globSchema = `{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "Glob matched against file paths relative to path, with / between directories: * and ? within one name, [abc] classes, {a,b} alternatives, ** for any number of directories. Example: \"**/*.{go,md}\"."},
    "path": {"type": "string", "description": "Directory to search, relative to the workspace root. Default \".\"."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 5000, "description": "Maximum number of files. Default 500."},
    "include_ignored": {"type": "boolean", "description": "Also return files that .gitignore rules exclude (node_modules/, build output, ...). Default false: they are hidden and the result says how many entries were."}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`

func (globTool) Spec() provider.ToolSpec {
	return provider.ToolSpec{
		Name: NameGlob,
		Description: "Find files by name pattern, e.g. \"**/*_test.go\" or \"src/**/*.{ts,tsx}\". " +
			"Returns workspace-relative paths of files (not directories), sorted by path. " +
			".git is skipped, files excluded by .gitignore are hidden unless include_ignored is set, and symlinked directories are not followed.",
		Parameters: json.RawMessage(globSchema),
	}
}

func (globTool) Label(args json.RawMessage) string {
	var a globArgs
	if err := decodeArgs(args, &a); err != nil || a.Pattern == "" {
		return "glob (invalid arguments)"
	}
	l := "glob " + truncate(a.Pattern, 120)
	if p := strings.TrimSpace(a.Path); p != "" && filepath.Clean(p) != "." {
		l += " in " + truncate(p, 120)
	}
	return l + ignoredLabel(a.IncludeIgnored)
}

func (globTool) Intent(json.RawMessage) Intent { return Intent{Effect: EffectNone} }

func (globTool) Run(ctx context.Context, env Env, args json.RawMessage) (Result, error) {
	ws, err := useWorkspace(env)
	if err != nil {
		return Result{}, err
	}
	defer ws.Close()
	var a globArgs
	if err := decodeArgs(args, &a); err != nil {
		return invalidArgs(err), nil
	}
	if a.Limit, err = count("limit", a.Limit, globDefaultLimit, globMaxLimit); err != nil {
		return invalidArgs(err), nil
	}
	m, err := compileGlob(a.Pattern)
	if err != nil {
		return invalidArgs(err), nil
	}
	real, rel, fi, res := searchRoot(ws, a.Path)
	if res != nil {
		return *res, nil
	}
	if !fi.IsDir() {
		return errorResult("%s is a file, not a directory; give the directory to search in path", rel), nil
	}

	data := GlobData{OK: true, Pattern: a.Pattern, Matches: []GlobMatch{}}
	w := treeWalker{ctx: ctx, ws: ws, match: m, includeIgnored: a.IncludeIgnored}
	err = w.walk(real, rel, func(f walkedFile) bool {
		if len(data.Matches) == a.Limit {
			data.Truncated = true
			return false
		}
		data.Matches = append(data.Matches, GlobMatch{Path: f.rel, Size: f.size})
		return true
	})
	if err != nil {
		if ctx.Err() != nil {
			return Result{Status: event.ToolCancelled, Output: "cancelled"}, nil
		}
		return rootFailure(fmt.Errorf("cannot search %s: %w", rel, bareErr(err)), a.Path), nil
	}
	data.Truncated = data.Truncated || w.capped
	data.Ignored = w.hidden.n
	return Result{Status: event.ToolOK, Output: formatGlob(data, rel, w.capped, w.hidden), Data: data}, nil
}

// searchRoot resolves the directory (or file) a search starts from. A
// non-nil Result is the model's mistake.
func searchRoot(ws *workspaceFS, p string) (real, rel string, fi fs.FileInfo, res *Result) {
	fail := func(r Result) (string, string, fs.FileInfo, *Result) { return "", "", nil, &r }
	if strings.TrimSpace(p) == "" {
		p = "."
	}
	rel, real, err := ws.resolve(p)
	if err != nil {
		return fail(pathFailure(err))
	}
	fi, err = ws.root.Stat(real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fail(errorResult("%s does not exist", rel))
	case err != nil:
		return fail(rootFailure(fmt.Errorf("cannot search %s: %w", rel, bareErr(err)), p))
	}
	return real, rel, fi, nil
}

func formatGlob(d GlobData, rel string, capped bool, hidden hiddenCount) string {
	var b strings.Builder
	if len(d.Matches) == 0 {
		fmt.Fprintf(&b, "No files match %s in %s/.", d.Pattern, strings.TrimSuffix(rel, "/"))
	} else {
		fmt.Fprintf(&b, "%s match %s:\n", nounCount(len(d.Matches), "file"), d.Pattern)
		for _, m := range d.Matches {
			b.WriteString(m.Path)
			b.WriteByte('\n')
		}
	}
	switch {
	case capped:
		fmt.Fprintf(&b, "\n… [search stopped after %d directory entries; narrow path or pattern]", walkMaxEntries)
	case d.Truncated:
		fmt.Fprintf(&b, "… [stopped at %d files; narrow the pattern or raise limit]", len(d.Matches))
	}
	if note := hidden.note(); note != "" {
		b.WriteString("\n" + note)
	}
	return strings.TrimRight(b.String(), "\n")
}

// globMatcher matches slash-separated relative paths against one or more
// patterns (the brace alternatives of one glob), each split into segments.
// It runs as a small NFA over segments so that a walk can carry the state
// down the tree and skip directories no pattern can match below.
type globMatcher struct {
	pats [][]string
}

// globState is a position in pattern p: segments before i are matched.
type globState struct{ p, i int }

// compileGlob parses a glob. Segments are matched by path.Match (*, ?,
// [...], \ escapes); "**" alone in a segment matches any number of
// directories, and {a,b} alternatives are expanded first, so they may
// contain slashes.
func compileGlob(pattern string) (*globMatcher, error) {
	if strings.TrimSpace(pattern) == "" {
		return nil, errors.New("pattern is required")
	}
	if strings.ContainsRune(pattern, 0) {
		return nil, errors.New("pattern contains a NUL byte")
	}
	if strings.HasPrefix(pattern, "/") {
		return nil, fmt.Errorf("pattern %q is absolute; patterns are relative to path", pattern)
	}
	alts, err := expandBraces(pattern)
	if err != nil {
		return nil, fmt.Errorf("pattern %q: %v", pattern, err)
	}
	m := &globMatcher{}
	for _, alt := range alts {
		var segs []string
		for _, s := range strings.Split(alt, "/") {
			switch {
			case s == "" || s == ".":
				// "a//b", "./a" and "a/" name the same files as "a/b" and "a".
			case s == "..":
				return nil, fmt.Errorf("pattern %q contains \"..\"; use path to search another directory", pattern)
			case s == "**":
				if len(segs) == 0 || segs[len(segs)-1] != "**" {
					segs = append(segs, s)
				}
			default:
				if _, err := path.Match(s, ""); err != nil {
					return nil, fmt.Errorf("pattern %q: bad segment %q (unclosed [ or trailing \\)", pattern, s)
				}
				segs = append(segs, s)
			}
		}
		if len(segs) == 0 {
			return nil, fmt.Errorf("pattern %q matches no file names", pattern)
		}
		m.pats = append(m.pats, segs)
	}
	return m, nil
}

// expandBraces expands {a,b} alternatives, nested ones included. Braces
// inside [...] classes or escaped with \ are literal.
func expandBraces(s string) ([]string, error) {
	open := -1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '[':
			if j := classEnd(s, i); j > 0 {
				i = j
			}
		case '{':
			open = i
		case '}':
			return nil, errors.New("unmatched }")
		}
		if open >= 0 {
			break
		}
	}
	if open < 0 {
		return []string{s}, nil
	}
	// Find the matching close brace and the commas at this level.
	depth, commas, closeAt := 0, []int{}, -1
	for i := open + 1; i < len(s) && closeAt < 0; i++ {
		switch s[i] {
		case '\\':
			i++
		case '[':
			if j := classEnd(s, i); j > 0 {
				i = j
			}
		case '{':
			depth++
		case '}':
			if depth == 0 {
				closeAt = i
			}
			depth--
		case ',':
			if depth == 0 {
				commas = append(commas, i)
			}
		}
	}
	if closeAt < 0 {
		return nil, errors.New("unmatched {")
	}
	prefix, suffix := s[:open], s[closeAt+1:]
	bounds := append(append([]int{open}, commas...), closeAt)
	var out []string
	for k := 0; k+1 < len(bounds); k++ {
		alt := s[bounds[k]+1 : bounds[k+1]]
		// The suffix may hold further braces; expanding the joined string
		// handles those and nested ones alike.
		exp, err := expandBraces(prefix + alt + suffix)
		if err != nil {
			return nil, err
		}
		out = append(out, exp...)
		if len(out) > globMaxAlternatives {
			return nil, fmt.Errorf("more than %d alternatives", globMaxAlternatives)
		}
	}
	return out, nil
}

// classEnd returns the index of the ] closing the class opened at s[i], or
// -1. A ] right after [ or [^ belongs to the class, as in path.Match.
func classEnd(s string, i int) int {
	j := i + 1
	if j < len(s) && s[j] == '^' {
		j++
	}
	if j < len(s) && s[j] == ']' {
		j++
	}
	for ; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case ']':
			return j
		}
	}
	return -1
}

// start is the state before any segment is read.
func (m *globMatcher) start() []globState {
	var st []globState
	for p := range m.pats {
		st = m.add(st, globState{p, 0})
	}
	return st
}

// add puts s in the set, and with it the state after a "**" that matches
// no directory at all.
func (m *globMatcher) add(set []globState, s globState) []globState {
	for {
		for _, have := range set {
			if have == s {
				return set
			}
		}
		set = append(set, s)
		if s.i >= len(m.pats[s.p]) || m.pats[s.p][s.i] != "**" {
			return set
		}
		s.i++
	}
}

// step reads one path segment.
func (m *globMatcher) step(set []globState, name string) []globState {
	var next []globState
	for _, s := range set {
		segs := m.pats[s.p]
		if s.i >= len(segs) {
			continue
		}
		if segs[s.i] == "**" {
			next = m.add(next, s)
			continue
		}
		if ok, _ := path.Match(segs[s.i], name); ok {
			next = m.add(next, globState{s.p, s.i + 1})
		}
	}
	return next
}

// accepts reports whether the segments read so far form a match.
func (m *globMatcher) accepts(set []globState) bool {
	for _, s := range set {
		if s.i == len(m.pats[s.p]) {
			return true
		}
	}
	return false
}

// open reports whether a path continuing below the segments read so far
// could still match.
func (m *globMatcher) open(set []globState) bool {
	for _, s := range set {
		if s.i < len(m.pats[s.p]) {
			return true
		}
	}
	return false
}

// match reports whether the slash-separated relative path p matches.
func (m *globMatcher) match(p string) bool {
	set := m.start()
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." {
			continue
		}
		if set = m.step(set, seg); len(set) == 0 {
			return false
		}
	}
	return m.accepts(set)
}

// walkedFile is a file found by treeWalker.
type walkedFile struct {
	name string // resolved, relative to the workspace root: what to open
	rel  string // relative to the workspace as the walk's start was spelt
	size int64
}

// treeWalker visits the files under a directory depth-first with names in
// byte order, so results come sorted by path, directory by directory (the
// order list_dir shows). It reads through the workspace's os.Root, skips
// .git, hides what .gitignore files exclude unless told otherwise, does not
// descend into symlinked directories (they may lead out of the workspace
// or form cycles), and reports a symlinked file only when it resolves to a
// regular file inside the workspace.
type treeWalker struct {
	ctx context.Context
	ws  *workspaceFS
	// match, when set, selects files by their path relative to the walk's
	// root and prunes directories it cannot match below.
	match *globMatcher
	// includeIgnored turns .gitignore rules off.
	includeIgnored bool
	// maxEntries overrides walkMaxEntries when positive.
	maxEntries int

	ignore  *ignore.Rules // nil when ignore rules are off
	hidden  hiddenCount   // entries the rules hid
	entries int
	capped  bool // walkMaxEntries reached
	stopped bool
}

// walk calls fn for each selected file under real (a resolved directory
// name, spelt rel in results) until fn returns false. Only an unreadable
// start is an error; unreadable subdirectories are skipped. A start that
// is itself ignored was named on purpose, so it is walked in full.
func (w *treeWalker) walk(real, rel string, fn func(walkedFile) bool) error {
	if !w.includeIgnored {
		rules := newIgnoreRules(w.ws, real)
		if real == "." || !rules.Ignored(real, true) {
			w.ignore = rules
		}
	}
	var st []globState
	if w.match != nil {
		st = w.match.start()
	}
	return w.dir(real, rel, st, true, fn)
}

// readDirSorted reads a directory through the root, sorted by name as
// os.ReadDir would.
func readDirSorted(ws *workspaceFS, name string) ([]fs.DirEntry, error) {
	f, err := ws.root.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	des, err := f.ReadDir(-1)
	slices.SortFunc(des, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return des, err
}

func (w *treeWalker) dir(real, rel string, st []globState, top bool, fn func(walkedFile) bool) error {
	des, err := readDirSorted(w.ws, real)
	if err != nil && top {
		return err
	}
	if w.ignore != nil {
		defer w.ignore.Leave(w.ignore.Enter(real))
	}
	for _, de := range des {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		if w.stopped {
			return nil
		}
		if w.entries++; w.entries > cmp.Or(w.maxEntries, walkMaxEntries) {
			w.capped, w.stopped = true, true
			return nil
		}
		if de.Name() == ".git" {
			continue
		}
		var next []globState
		if w.match != nil {
			if next = w.match.step(st, de.Name()); len(next) == 0 {
				continue
			}
		}
		childReal, childRel := path.Join(real, de.Name()), path.Join(rel, de.Name())
		if w.ws.procfs(childReal) {
			continue
		}
		switch t := de.Type(); {
		case t.IsDir():
			if w.match != nil && !w.match.open(next) {
				continue
			}
			if w.hide(childReal, childRel, true) {
				continue
			}
			if err := w.dir(childReal, childRel, next, false, fn); err != nil {
				return err
			}
		case t.IsRegular(), t&fs.ModeSymlink != 0:
			if w.match != nil && !w.match.accepts(next) {
				continue
			}
			if w.hide(childReal, childRel, false) {
				continue
			}
			name, size, ok := w.file(childReal, childRel, t)
			if !ok {
				continue
			}
			if !fn(walkedFile{name: name, rel: childRel, size: size}) {
				w.stopped = true
				return nil
			}
		}
	}
	return nil
}

// hide reports whether ignore rules exclude an entry, and counts it.
func (w *treeWalker) hide(real, rel string, isDir bool) bool {
	if w.ignore == nil || !w.ignore.Ignored(real, isDir) {
		return false
	}
	w.hidden.add(rel, isDir)
	return true
}

// file returns the resolved name and size of a regular file, following a
// symlink only when it stays inside the workspace.
func (w *treeWalker) file(real, rel string, t fs.FileMode) (string, int64, bool) {
	if t&fs.ModeSymlink != 0 {
		var err error
		if real, err = w.ws.follow(rel, real); err != nil || w.ws.procfs(real) {
			return "", 0, false
		}
	}
	fi, err := w.ws.root.Stat(real)
	if err != nil || !fi.Mode().IsRegular() {
		return "", 0, false
	}
	return real, fi.Size(), true
}
