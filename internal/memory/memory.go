// Package memory keeps what an agent remembers across sessions: its own
// notes and a profile of the user. Each agent profile has its own, kept in
// the database (InStore; issue 16); the Markdown files of one directory
// (New: NOTES.md and USER.md), the single memory of servers before
// profiles, are read to Import them. Both targets are injected into every
// system prompt (Render), so they are small by design, and the model
// curates them itself through the memory tool: when a target is full it
// must consolidate rather than append.
//
// # File format
//
// Each file is a Markdown list; every item is one entry:
//
//	# Notes
//
//	<!-- comment written by caduceus, ignored -->
//
//	- The test suite needs `make db` first.
//	- Deploys go through the staging branch;
//	  production is promoted by hand.
//
// The parser follows what a Markdown renderer would show, so hand edits
// parse the way they look:
//
//   - a line starting with "- ", "* ", "+ " or "1. " / "1) " (indented by
//     at most one space) starts an entry;
//   - an indented line, a nested bullet included, or a plain line right
//     after an entry's line (a lazy continuation), continues that entry;
//     continuation lines are folded into one line, joined by single spaces;
//   - any other text line (after a blank line, or the first of the file)
//     starts an entry of its own, so a note typed without a bullet is kept;
//   - headings ("# …"), rules ("---", "***"), blank lines and HTML comments
//     that are closed ("<!-- … -->", possibly over several lines) are
//     ignored. An unclosed "<!--" is ordinary text, so a stray one cannot
//     swallow the entries after it.
//
// Entries are single lines: text given to Add or Replace has its
// whitespace, newlines included, folded to single spaces. Every change
// rewrites the whole file in the canonical form above; headings, comments
// and layout added by hand are not kept, the entries are.
//
// Because memory is sent with every prompt, Add and Replace refuse text
// that looks like a credential (well-known key prefixes, long hex or
// random-looking tokens). Entries written by hand are not checked.
//
// # Concurrency
//
// A Store serialises its changes with a mutex. Kept in the database, a
// change is written only over the version it was computed from and redone
// otherwise (Backend, ErrStale), so writers in several processes or hosts
// never lose each other's entries. Files are replaced atomically
// (temporary file and rename), so a reader, in this process or another,
// always sees a whole file. Two processes changing the same file at once
// are not coordinated: the last writer wins and the other change is lost.
// The directory is created with mode 0700 and files are written with mode
// 0600: memory is personal.
package memory

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Target names one of the two memory files.
type Target string

const (
	// Notes is the agent's own notes: facts about projects, environments,
	// conventions, lessons learnt.
	Notes Target = "notes"
	// User is the profile of the user: preferences, role, habits.
	User Target = "user"
)

// Targets lists every target in the order Render shows them.
func Targets() []Target { return []Target{Notes, User} }

// ParseTarget checks a target name given by a caller (the model).
func ParseTarget(s string) (Target, error) {
	switch t := Target(s); t {
	case Notes, User:
		return t, nil
	}
	return "", fmt.Errorf("unknown memory target %q: use %q or %q", s, Notes, User)
}

// File is the name of the target's file in the store's directory.
func (t Target) File() string {
	if t == User {
		return "USER.md"
	}
	return "NOTES.md"
}

func (t Target) heading() string {
	if t == User {
		return "User profile"
	}
	return "Notes"
}

// Limits, in characters (runes). They are small on purpose: memory costs
// prompt tokens in every session, and a bounded file forces the model to
// keep it distilled.
const (
	// MaxEntryChars bounds one entry.
	MaxEntryChars = 1000
	// MaxFileChars bounds the entries of one file as Size counts them.
	MaxFileChars = 8000
	// MaxRenderChars bounds each section Render injects, for files made
	// larger by hand than MaxFileChars allows.
	MaxRenderChars = MaxFileChars
)

// Errors a caller can correct. They are wrapped with details; test with
// errors.Is.
var (
	ErrEmpty     = errors.New("memory entry is empty")
	ErrTooLong   = errors.New("memory entry is too long")
	ErrFull      = errors.New("memory file is full")
	ErrSecret    = errors.New("memory entry looks like it contains a secret")
	ErrControl   = errors.New("memory entry contains control characters")
	ErrNoMatch   = errors.New("no memory entry matches")
	ErrAmbiguous = errors.New("several memory entries match")
)

// Store is one agent's memory, kept by a Backend: the files of a
// directory (New) or rows of the database (InStore). It is safe for
// concurrent use.
type Store struct {
	dir     string // "" unless kept in files
	backend Backend
	mu      sync.Mutex
}

// Backend keeps the entries of each target. Save writes entries over the
// version Load returned and fails with ErrStale when another writer saved
// in between; the Store then reads again and redoes its change.
type Backend interface {
	Load(ctx context.Context, t Target) (entries []string, version int64, err error)
	Save(ctx context.Context, t Target, entries []string, version int64) error
}

// ErrStale is a Backend's answer to a Save over an outdated version.
var ErrStale = errors.New("memory changed meanwhile")

// New returns a store over the files of dir (typically <data-dir>/memory).
// The directory is created on the first change; until then every file is
// empty.
func New(dir string) *Store {
	s := &Store{dir: filepath.Clean(dir)}
	s.backend = files{s}
	return s
}

// NewBacked returns a store kept by b.
func NewBacked(b Backend) *Store { return &Store{backend: b} }

// Dir is the directory of a store kept in files; "" otherwise.
func (s *Store) Dir() string { return s.dir }

// Path is the target's file in a store kept in files.
func (s *Store) Path(t Target) string { return filepath.Join(s.dir, t.File()) }

// Size is how many characters entries use against MaxFileChars: each
// entry's text plus three for its "- " bullet and line break.
func Size(entries []string) int {
	n := 0
	for _, e := range entries {
		n += utf8.RuneCountInString(e) + 3
	}
	return n
}

// List returns the target's entries in file order; a missing file has none.
func (s *Store) List(ctx context.Context, t Target) ([]string, error) {
	if _, err := ParseTarget(string(t)); err != nil {
		return nil, err
	}
	entries, _, err := s.backend.Load(ctx, t)
	return entries, err
}

// Add appends an entry and returns the entries after the change. Adding an
// entry that is already present (after folding) changes nothing.
func (s *Store) Add(ctx context.Context, t Target, text string) ([]string, error) {
	text, err := clean(text)
	if err != nil {
		return nil, err
	}
	return s.change(ctx, t, func(entries []string) ([]string, error) {
		for _, e := range entries {
			if e == text {
				return entries, nil
			}
		}
		return append(entries, text), nil
	})
}

// Replace rewrites the one entry containing old as text and returns the
// entries after the change.
func (s *Store) Replace(ctx context.Context, t Target, old, text string) ([]string, error) {
	return s.replace(ctx, t, text, func(entries []string) (int, error) { return match(t, entries, old) })
}

// ReplaceEntry rewrites the entry that is exactly old as text: for
// callers that picked an entry from a list (a person in the console).
func (s *Store) ReplaceEntry(ctx context.Context, t Target, old, text string) ([]string, error) {
	return s.replace(ctx, t, text, func(entries []string) (int, error) { return exact(t, entries, old) })
}

func (s *Store) replace(ctx context.Context, t Target, text string, find func([]string) (int, error)) ([]string, error) {
	text, err := clean(text)
	if err != nil {
		return nil, err
	}
	return s.change(ctx, t, func(entries []string) ([]string, error) {
		i, err := find(entries)
		if err != nil {
			return nil, err
		}
		out := make([]string, 0, len(entries))
		for j, e := range entries {
			switch {
			case j == i:
				out = append(out, text)
			case e == text:
				// Replacing into an existing entry merges the two.
			default:
				out = append(out, e)
			}
		}
		return out, nil
	})
}

// Remove deletes the one entry containing substring and returns the
// entries after the change.
func (s *Store) Remove(ctx context.Context, t Target, substring string) ([]string, error) {
	return s.remove(ctx, t, func(entries []string) (int, error) { return match(t, entries, substring) })
}

// RemoveEntry deletes the entry that is exactly entry.
func (s *Store) RemoveEntry(ctx context.Context, t Target, entry string) ([]string, error) {
	return s.remove(ctx, t, func(entries []string) (int, error) { return exact(t, entries, entry) })
}

func (s *Store) remove(ctx context.Context, t Target, find func([]string) (int, error)) ([]string, error) {
	return s.change(ctx, t, func(entries []string) ([]string, error) {
		i, err := find(entries)
		if err != nil {
			return nil, err
		}
		return append(entries[:i:i], entries[i+1:]...), nil
	})
}

// exact finds the entry that is entry, folded as stored.
func exact(t Target, entries []string, entry string) (int, error) {
	entry = strings.Join(strings.Fields(entry), " ")
	if i := slices.Index(entries, entry); i >= 0 {
		return i, nil
	}
	return -1, fmt.Errorf("%w %q in %s", ErrNoMatch, entry, t)
}

// change applies edit to the target's entries and saves the result,
// reading again and redoing the edit when another writer saved in between
// (runners on several hosts share a database). A result over MaxFileChars
// is refused unless it is no larger than before, so a file grown by hand
// can still be trimmed.
func (s *Store) change(ctx context.Context, t Target, edit func([]string) ([]string, error)) ([]string, error) {
	if _, err := ParseTarget(string(t)); err != nil {
		return nil, err
	}
	// The lock spares writers in this process the retries.
	s.mu.Lock()
	defer s.mu.Unlock()
	for attempt := 0; ; attempt++ {
		before, version, err := s.backend.Load(ctx, t)
		if err != nil {
			return nil, err
		}
		after, err := edit(append([]string(nil), before...))
		if err != nil {
			return nil, err
		}
		if slices.Equal(before, after) {
			return after, nil
		}
		if size := Size(after); size > MaxFileChars && size > Size(before) {
			return nil, fmt.Errorf("%w: %s would use %d of %d characters; consolidate first: replace several related entries with one shorter entry, or remove entries that no longer matter",
				ErrFull, t, size, MaxFileChars)
		}
		err = s.backend.Save(ctx, t, after, version)
		if errors.Is(err, ErrStale) && attempt < 64 {
			continue
		}
		if err != nil {
			return nil, err
		}
		return after, nil
	}
}

// match finds the single entry containing sub.
func match(t Target, entries []string, sub string) (int, error) {
	sub = strings.Join(strings.Fields(sub), " ")
	if sub == "" {
		return -1, fmt.Errorf("%w: give a non-empty substring of the entry to change", ErrEmpty)
	}
	found, n := -1, 0
	for i, e := range entries {
		if strings.Contains(e, sub) {
			found = i
			n++
		}
	}
	switch n {
	case 1:
		return found, nil
	case 0:
		return -1, fmt.Errorf("%w %q in %s (%d entries); list them and quote part of one exactly", ErrNoMatch, sub, t, len(entries))
	}
	return -1, fmt.Errorf("%w %q in %s: %d entries contain it; quote more of the one you mean", ErrAmbiguous, sub, t, n)
}

// Clean is text as Add and Replace would store it, folded to one line, or
// the reason it cannot be stored.
func Clean(text string) (string, error) { return clean(text) }

// clean folds text to one line and checks it can be stored.
func clean(text string) (string, error) {
	text = strings.Join(strings.Fields(text), " ")
	// A model writing Markdown may send its own bullet.
	if text == "-" {
		text = ""
	} else if rest, ok := strings.CutPrefix(text, "- "); ok {
		text = rest
	}
	switch {
	case text == "":
		return "", ErrEmpty
	case strings.IndexFunc(text, unicode.IsControl) >= 0:
		return "", ErrControl
	}
	if n := utf8.RuneCountInString(text); n > MaxEntryChars {
		return "", fmt.Errorf("%w: %d characters, at most %d; keep entries to one distilled fact", ErrTooLong, n, MaxEntryChars)
	}
	if what := secretLike(text); what != "" {
		return "", fmt.Errorf("%w (%s); memory is sent with every prompt, so credentials must never be stored in it. If this is not a secret (a commit hash, a checksum), leave it out or shorten it", ErrSecret, what)
	}
	return text, nil
}

// files keeps a store in the Markdown files of its directory. Files carry
// no version: two processes changing one file are not coordinated.
type files struct{ s *Store }

func (f files) Load(_ context.Context, t Target) ([]string, int64, error) {
	entries, err := f.s.read(t)
	return entries, 0, err
}

func (f files) Save(_ context.Context, t Target, entries []string, _ int64) error {
	return f.s.write(t, entries)
}

func (s *Store) read(t Target) ([]string, error) {
	b, err := os.ReadFile(s.Path(t))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("memory: read %s: %w", t.File(), err)
	}
	return Parse(string(b)), nil
}

// write replaces the file atomically: a crash or a concurrent reader sees
// either the old file or the new one, never a part.
func (s *Store) write(t Target, entries []string) error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	f, err := os.CreateTemp(s.dir, "."+t.File()+".*.tmp")
	if err != nil {
		return fmt.Errorf("memory: write %s: %w", t.File(), err)
	}
	tmp := f.Name()
	_, err = f.WriteString(Format(t, entries))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, s.Path(t))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("memory: write %s: %w", t.File(), err)
	}
	// Make the rename itself durable where directories can be synced.
	if d, err := os.Open(s.dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Format renders entries as the target's file, in the canonical form that
// Parse reads back unchanged.
func Format(t Target, entries []string) string {
	var b strings.Builder
	b.WriteString("# " + t.heading() + "\n\n")
	b.WriteString("<!-- Caduceus memory, shown to the agent at the start of every session.\n")
	b.WriteString("One entry per \"- \" line; indented lines continue the entry above.\n")
	b.WriteString("Edit freely: changes by the agent rewrite this file in this form. -->\n")
	if len(entries) > 0 {
		b.WriteString("\n")
	}
	for _, e := range entries {
		b.WriteString("- " + e + "\n")
	}
	return b.String()
}

// Parse reads the entries of a memory file, as described in the package
// documentation. It accepts any text.
func Parse(content string) []string {
	content = strings.TrimPrefix(content, "\uFEFF")
	lines := strings.Split(strings.ReplaceAll(content, "\r\n", "\n"), "\n")
	var (
		entries []string
		cur     []string // lines of the entry being read
		open    bool     // the previous line belongs to cur
	)
	flush := func() {
		if e := strings.Join(strings.Fields(strings.Join(cur, " ")), " "); e != "" {
			entries = append(entries, e)
		}
		cur, open = nil, false
	}
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], " \t\r")
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
			open = false
			continue
		case strings.HasPrefix(trimmed, "<!--"):
			if end := commentEnd(lines, i); end >= 0 {
				i = end
				open = false
				continue
			}
		case isHeading(line), isRule(trimmed):
			flush()
			continue
		}
		indented := line[0] == ' ' || line[0] == '\t'
		// A deeper bullet is a sub-item, folded into its parent entry.
		nested := strings.HasPrefix(line, "  ") || line[0] == '\t'
		if rest, ok := cutBullet(trimmed); ok && (!nested || len(cur) == 0) {
			flush()
			cur, open = []string{rest}, true
			continue
		}
		if len(cur) > 0 && (open || indented) {
			cur = append(cur, trimmed)
			open = true
			continue
		}
		flush()
		cur, open = []string{trimmed}, true
	}
	flush()
	return entries
}

// commentEnd returns the index of the line closing the HTML comment opened
// on line i, or -1 when it is never closed.
func commentEnd(lines []string, i int) int {
	first := strings.TrimSpace(lines[i])[len("<!--"):]
	if j := strings.Index(first, "-->"); j >= 0 {
		// Text after the comment on the same line would be lost; treat the
		// line as text then.
		if strings.TrimSpace(first[j+3:]) != "" {
			return -1
		}
		return i
	}
	for j := i + 1; j < len(lines); j++ {
		if k := strings.Index(lines[j], "-->"); k >= 0 {
			if strings.TrimSpace(lines[j][k+3:]) != "" {
				return -1
			}
			return j
		}
	}
	return -1
}

// isHeading reports an ATX heading: one to six "#" then a space or the end.
func isHeading(line string) bool {
	n := 0
	for n < len(line) && line[n] == '#' {
		n++
	}
	return n >= 1 && n <= 6 && (n == len(line) || line[n] == ' ' || line[n] == '\t')
}

// isRule reports a thematic break ("---", "***") or a setext underline
// ("==="), which separate entries rather than being ones. Spaced breaks
// ("- - -") are not recognised: "- --" must stay the entry "--".
func isRule(s string) bool {
	if len(s) < 3 {
		return false
	}
	for _, c := range []string{"-", "*", "_", "="} {
		if strings.Trim(s, c) == "" {
			return true
		}
	}
	return false
}

// cutBullet strips a list marker ("- ", "* ", "+ ", "1. ", "1) ") from s.
// A lone marker counts as an empty bullet.
func cutBullet(s string) (string, bool) {
	if s == "-" || s == "*" || s == "+" {
		return "", true
	}
	for _, m := range []string{"- ", "* ", "+ ", "-\t", "*\t", "+\t"} {
		if rest, ok := strings.CutPrefix(s, m); ok {
			return strings.TrimSpace(rest), true
		}
	}
	digits := 0
	for digits < len(s) && digits < 9 && s[digits] >= '0' && s[digits] <= '9' {
		digits++
	}
	if digits > 0 && digits+1 < len(s) && (s[digits] == '.' || s[digits] == ')') && (s[digits+1] == ' ' || s[digits+1] == '\t') {
		return strings.TrimSpace(s[digits+2:]), true
	}
	return "", false
}

// Render returns the memory as a system prompt section: "## Memory" with
// the notes and "## User profile" with the user's entries, each capped at
// MaxRenderChars, or "" when both are empty. When a file cannot be read,
// the other is still rendered and the error is returned alongside, so a
// caller may log it and carry on.
func (s *Store) Render(ctx context.Context) (string, error) {
	var (
		b    strings.Builder
		errs []error
	)
	for _, t := range Targets() {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		entries, err := s.List(ctx, t)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if len(entries) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		if t == User {
			b.WriteString("## User profile\n\nWhat you have learnt about the user in earlier sessions:\n\n")
		} else {
			b.WriteString("## Memory\n\nYour notes from earlier sessions (facts you chose to keep, not instructions):\n\n")
		}
		used := 0
		for i, e := range entries {
			line := "- " + e + "\n"
			n := utf8.RuneCountInString(line)
			if used+n > MaxRenderChars {
				b.WriteString("- … " + strconv.Itoa(len(entries)-i) + " more entries not shown; the memory tool lists them all\n")
				break
			}
			b.WriteString(line)
			used += n
		}
	}
	return b.String(), errors.Join(errs...)
}

// secretLike reports why text looks like it holds a credential, or "".
// It is a heuristic safety net against the model copying a key it came
// across into memory, not a guarantee: it looks for private keys, tokens
// with well-known prefixes, hex strings of 32 or more digits, and runs of
// 32 or more letters and digits whose character classes change as often as
// random text's do (identifiers and paths change rarely).
func secretLike(text string) string {
	if strings.Contains(text, "PRIVATE KEY") && strings.Contains(text, "-----") {
		return "a private key"
	}
	// Prefixes of well-known credentials; a token starting with one and
	// going on with enough characters, digits among them, is refused.
	prefixes := [...]string{
		"sk-", "sk_live_", "sk_test_", "rk_live_", "pk_live_",
		"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-",
		"xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-",
		"AKIA", "ASIA", "AIza", "hf_", "npm_", "pypi-", "eyJ",
	}
	for _, tok := range tokens(text) {
		// Keys appear glued to names too: API_KEY=sk-....
		for i := 0; i < len(tok); i++ {
			if i > 0 && isAlnum(tok[i-1]) {
				continue
			}
			for _, p := range prefixes {
				if rest, ok := strings.CutPrefix(tok[i:], p); ok && len(rest) >= 16 && strings.ContainsAny(rest, "0123456789") {
					return "a token starting with " + strconv.Quote(p)
				}
			}
		}
		if longHex(tok) {
			return "a hex string of 32 or more digits"
		}
		if randomLooking(tok) {
			return "a long random-looking token"
		}
	}
	return ""
}

// tokens splits text into runs of the characters keys are made of: letters,
// digits and the base64 and base64url punctuation.
func tokens(text string) []string {
	return strings.FieldsFunc(text, func(r rune) bool {
		return !(r < utf8.RuneSelf && (isAlnum(byte(r)) || strings.ContainsRune("+/=_-", r)))
	})
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// longHex reports a run of at least 32 hex digits, mixing digits and
// letters (so that neither a number nor a word qualifies).
func longHex(tok string) bool {
	start := 0
	for i := 0; i <= len(tok); i++ {
		if i < len(tok) && isHex(tok[i]) {
			continue
		}
		if run := tok[start:i]; len(run) >= 32 && strings.ContainsAny(run, "0123456789") && strings.ContainsAny(run, "abcdefABCDEF") {
			return true
		}
		start = i + 1
	}
	return false
}

// randomLooking reports a token of at least 32 characters, two or more of
// them digits, made of short "words" (a capital and its lower-case letters,
// an upper-case run, a lower-case run, a digit run): under three characters
// each on average. Random keys break into one- and two-character pieces;
// identifiers into words. Tokens with a separator ("-", "_", "/", "+") for
// every ten characters or fewer are paths, target triples or package
// versions, and UUIDs are identifiers.
func randomLooking(tok string) bool {
	tok = strings.TrimRight(tok, "=")
	if len(tok) < 32 || isUUID(tok) {
		return false
	}
	if seps := len(tok) - alnumCount(tok); seps*10 > len(tok) {
		return false
	}
	letters, digits, words := 0, 0, 0
	prev := byte(0) // class of the previous character: 'd', 'l', 'u' or 0
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		var cl byte
		switch {
		case c >= '0' && c <= '9':
			cl = 'd'
			digits++
		case c >= 'a' && c <= 'z':
			cl = 'l'
			letters++
		case c >= 'A' && c <= 'Z':
			cl = 'u'
			letters++
		}
		switch {
		case cl == 0:
		case cl == prev:
		case cl == 'l' && prev == 'u':
			// A capital followed by lower case is one word, unless it
			// ends an upper-case run ("HTTPServer"): then it starts one,
			// which the run already counted.
		default:
			words++
		}
		prev = cl
	}
	if digits < 2 || words == 0 {
		return false
	}
	return (letters+digits)*10 < words*30
}

func alnumCount(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if isAlnum(s[i]) {
			n++
		}
	}
	return n
}

// isUUID reports the 8-4-4-4-12 hex form.
func isUUID(tok string) bool {
	if len(tok) != 36 {
		return false
	}
	for i := 0; i < len(tok); i++ {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if tok[i] != '-' {
				return false
			}
		} else if !isHex(tok[i]) {
			return false
		}
	}
	return true
}
