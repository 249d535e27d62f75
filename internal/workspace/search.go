package workspace

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/caduceus-dev/caduceus/internal/ignore"
)

// Search limits.
const (
	DefaultSearchLimit = 100
	MaxSearchLimit     = 1000
	// DefaultSearchFileMax is the largest file whose content is searched
	// unless SearchOptions says otherwise.
	DefaultSearchFileMax = 1 << 20
	// searchMaxEntries bounds the entries one search visits, so a tree of
	// millions of files answers (Truncated) rather than running on.
	searchMaxEntries = 200_000
	// previewMax is the longest preview snippet, in bytes.
	previewMax  = 160
	maxQueryLen = 1000
)

// SearchOptions shape a Search. The zero value searches names and content
// of the whole workspace, case-insensitively, hiding what .gitignore
// excludes.
type SearchOptions struct {
	// Dir is where to search, relative to the workspace; "" is all of it.
	Dir string
	// NamesOnly and ContentOnly pick one kind of match; neither, both.
	NamesOnly, ContentOnly bool
	CaseSensitive          bool
	// IncludeIgnored searches what .gitignore rules exclude too.
	IncludeIgnored bool
	// Limit caps the matches (DefaultSearchLimit when <= 0, at most
	// MaxSearchLimit).
	Limit int
	// MaxFileSize is the largest file whose content is searched
	// (DefaultSearchFileMax when <= 0).
	MaxFileSize int64
}

// Match is one search hit: a file or directory whose name holds the query
// (Line 0), or a line of a file that does.
type Match struct {
	Path string `json:"path"`
	Kind Kind   `json:"kind"`
	// Line and Column (1-based, Column in bytes) locate a content match.
	Line   int `json:"line,omitempty"`
	Column int `json:"column,omitempty"`
	// Preview is the matching line, shortened around the match.
	Preview string `json:"preview,omitempty"`
}

// SearchResult is what a Search found.
type SearchResult struct {
	Matches []Match `json:"matches"`
	// Truncated is set when the limit or the walk's bound stopped the
	// search before the end.
	Truncated bool `json:"truncated"`
	// Skipped counts files whose content was not searched: binary, or
	// larger than MaxFileSize.
	Skipped int `json:"skipped"`
}

// Search finds query, a literal string, in the names and contents of the
// workspace's files, in path order, as the agent's grep and glob do:
// .git is skipped, .gitignore rules are obeyed unless IncludeIgnored,
// symlinks are neither followed nor searched, binary and large files are
// skipped. It stops at the limit or when ctx ends (returning ctx's error).
func (w *Workspace) Search(ctx context.Context, query string, opts SearchOptions) (SearchResult, error) {
	if query == "" || len(query) > maxQueryLen || strings.ContainsAny(query, "\n\x00") {
		return SearchResult{}, fmt.Errorf("%w: a query is 1 to %d bytes on one line", ErrBadQuery, maxQueryLen)
	}
	n, err := name(opts.Dir)
	if err != nil {
		return SearchResult{}, err
	}
	d, err := w.openDir(opts.Dir, n)
	if err != nil {
		return SearchResult{}, err
	}
	d.Close()
	s := &searcher{
		ctx: ctx, w: w, names: !opts.ContentOnly || opts.NamesOnly, content: !opts.NamesOnly || opts.ContentOnly,
		fold: !opts.CaseSensitive, limit: opts.Limit, fileMax: opts.MaxFileSize,
	}
	if s.limit <= 0 {
		s.limit = DefaultSearchLimit
	}
	s.limit = min(s.limit, MaxSearchLimit)
	if s.fileMax <= 0 {
		s.fileMax = DefaultSearchFileMax
	}
	s.query = []byte(query)
	if s.fold {
		s.query = bytes.ToLower(s.query)
	}
	if !opts.IncludeIgnored {
		var excluded bool
		if s.rules, excluded = w.rulesIn(n); excluded {
			// A directory named outright was asked for: search it all.
			s.rules = nil
		}
	}
	if err := s.dir(n); err != nil {
		return SearchResult{}, err
	}
	return s.res, nil
}

type searcher struct {
	ctx            context.Context
	w              *Workspace
	query          []byte
	names, content bool
	fold           bool
	limit          int
	fileMax        int64
	rules          *ignore.Rules
	entries        int
	res            SearchResult
}

// full reports whether the search must stop, marking the result.
func (s *searcher) full() bool {
	if len(s.res.Matches) >= s.limit || s.entries > searchMaxEntries {
		s.res.Truncated = true
		return true
	}
	return false
}

// dir searches the directory n, whose rules (when on) were entered by the
// caller for all directories above it.
func (s *searcher) dir(n string) error {
	f, err := s.w.openDir(n, n)
	if err != nil {
		return nil // vanished, replaced or unreadable below the start: skipped
	}
	des, err := readDirents(f)
	f.Close()
	if err != nil && len(des) == 0 {
		return nil
	}
	slices.SortFunc(des, func(a, b dirent) int { return strings.Compare(a.name, b.name) })
	if s.rules != nil {
		defer s.rules.Leave(s.rules.Enter(n))
	}
	for _, de := range des {
		if err := s.ctx.Err(); err != nil {
			return err
		}
		s.entries++
		if s.full() {
			return nil
		}
		if de.name == ".git" {
			continue
		}
		p := path.Join(n, de.name)
		isDir := de.isDir()
		if s.rules != nil && s.rules.Ignored(p, isDir) {
			continue
		}
		if s.names && s.has([]byte(de.name)) {
			s.res.Matches = append(s.res.Matches, Match{Path: p, Kind: kindOf(de.typ)})
			if s.full() {
				return nil
			}
		}
		switch {
		case isDir:
			if err := s.dir(p); err != nil {
				return err
			}
		case de.typ.IsRegular() && s.content:
			s.file(p)
		}
		if s.full() {
			return nil
		}
	}
	return nil
}

func (s *searcher) has(b []byte) bool {
	if s.fold {
		b = bytes.ToLower(b)
	}
	return bytes.Contains(b, s.query)
}

// file searches one file's lines.
func (s *searcher) file(p string) {
	f, fi, err := s.w.openRegular(p, p)
	if err != nil {
		return
	}
	defer f.Close()
	if fi.Size() > s.fileMax {
		s.res.Skipped++
		return
	}
	data, err := io.ReadAll(io.LimitReader(f, s.fileMax+1))
	if err != nil {
		return
	}
	if int64(len(data)) > s.fileMax || isBinary(data) {
		s.res.Skipped++
		return
	}
	if !s.has(data) {
		return
	}
	for i, line := 1, data; len(line) > 0 || i == 1; i++ {
		var rest []byte
		if k := bytes.IndexByte(line, '\n'); k >= 0 {
			line, rest = line[:k], line[k+1:]
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		cmpLine := line
		if s.fold {
			cmpLine = bytes.ToLower(line)
		}
		if col := bytes.Index(cmpLine, s.query); col >= 0 {
			if len(cmpLine) != len(line) { // case folding changed lengths
				col = 0
			}
			s.res.Matches = append(s.res.Matches, Match{
				Path: p, Kind: KindFile, Line: i, Column: col + 1, Preview: preview(line, col, len(s.query)),
			})
			if s.full() {
				return
			}
		}
		if rest == nil {
			return
		}
		line = rest
	}
}

// preview shortens line to previewMax bytes around the match at col,
// on rune boundaries, marking cuts with "…".
func preview(line []byte, col, n int) string {
	if len(line) <= previewMax {
		return strings.ToValidUTF8(string(line), "\uFFFD")
	}
	start := max(0, col-(previewMax-n)/2)
	end := min(len(line), start+previewMax)
	start = max(0, end-previewMax)
	for start > 0 && !utf8.RuneStart(line[start]) {
		start++
	}
	for end < len(line) && !utf8.RuneStart(line[end]) {
		end--
	}
	out := strings.ToValidUTF8(string(line[start:end]), "\uFFFD")
	if start > 0 {
		out = "…" + out
	}
	if end < len(line) {
		out += "…"
	}
	return out
}
