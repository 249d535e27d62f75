package memory

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    []string
	}{
		{"empty", "", nil},
		{"only header", Format(Notes, nil), nil},
		{"bullets", "- a\n- b\n", []string{"a", "b"}},
		{"other markers", "* star\n+ plus\n1. one\n2) two\n-\ttab\n", []string{"star", "plus", "one", "two", "tab"}},
		{"indented continuation", "- first line\n  second line\n\tthird\n- next\n", []string{"first line second line third", "next"}},
		{"lazy continuation", "- wrapped by\nan editor\n- b\n", []string{"wrapped by an editor", "b"}},
		{"continuation after blank line", "- a\n\n  more of a\n", []string{"a more of a"}},
		{"prose after blank line is an entry", "- a\n\nplain note\n", []string{"a", "plain note"}},
		{"prose first", "typed without a bullet\n- b\n", []string{"typed without a bullet", "b"}},
		{"headings and rules", "# Notes\n## Sub\n- a\n---\n- b\n***\n", []string{"a", "b"}},
		{"hashtag is text", "#tag not a heading\n", []string{"#tag not a heading"}},
		{"heading ends entry", "- a\n# H\nb\n", []string{"a", "b"}},
		{"comment", "<!-- hi -->\n- a\n", []string{"a"}},
		{"multi-line comment", "<!-- one\n- not an entry\n-->\n- a\n", []string{"a"}},
		{"unclosed comment is text", "<!-- oops\n- a\n", []string{"<!-- oops", "a"}},
		{"comment followed by text", "<!-- c --> text\n", []string{"<!-- c --> text"}},
		{"comment inside entry is text", "- use <!-- x --> here\n", []string{"use <!-- x --> here"}},
		{"crlf and bom", "\uFEFF- a\r\n- b\r\n", []string{"a", "b"}},
		{"whitespace folded", "-   a   b  \n", []string{"a b"}},
		{"empty bullets dropped", "-\n- \n- a\n", []string{"a"}},
		{"nested bullet folds into parent", "- parent\n  - child\n", []string{"parent - child"}},
		{"indented list", " - a\n - b\n", []string{"a", "b"}},
		{"deeply indented first bullet", "    - a\n- b\n", []string{"a", "b"}},
		{"bullet inside entry text", "- - dash\n", []string{"- dash"}},
		{"numbers without space are text", "2024.05 release\n", []string{"2024.05 release"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Parse(tt.content); !slices.Equal(got, tt.want) {
				t.Errorf("Parse(%q) = %q, want %q", tt.content, got, tt.want)
			}
		})
	}
}

func TestFormatRoundTrip(t *testing.T) {
	entries := []string{
		"plain", "- leading dash", "# not a heading", "<!-- not a comment -->", "1. numbered",
		"ünïcödé ✓", "`code` and **bold**", "--", "---", "-", "a: b # c",
	}
	for _, tg := range Targets() {
		if got := Parse(Format(tg, entries)); !slices.Equal(got, entries) {
			t.Errorf("%s round trip = %q", tg, got)
		}
	}
}

func TestStoreAddListRemove(t *testing.T) {
	s := New(filepath.Join(t.TempDir(), "memory"))
	if got, err := s.List(context.Background(), Notes); err != nil || got != nil {
		t.Fatalf("List of missing file = %q, %v", got, err)
	}
	mustEntries(t, "add", []string{"uses Go 1.26"})(s.Add(context.Background(), Notes, "uses Go 1.26"))
	mustEntries(t, "add folded", []string{"uses Go 1.26", "tests need make db"})(s.Add(context.Background(), Notes, "- tests need\n  make db  "))
	mustEntries(t, "duplicate", []string{"uses Go 1.26", "tests need make db"})(s.Add(context.Background(), Notes, "uses  Go 1.26"))
	mustEntries(t, "user", []string{"prefers tabs"})(s.Add(context.Background(), User, "prefers tabs"))
	mustEntries(t, "replace", []string{"uses Go 1.27", "tests need make db"})(s.Replace(context.Background(), Notes, "Go 1.26", "uses Go 1.27"))
	mustEntries(t, "remove", []string{"tests need make db"})(s.Remove(context.Background(), Notes, "1.27"))
	mustEntries(t, "list", []string{"tests need make db"})(s.List(context.Background(), Notes))
	mustEntries(t, "user untouched", []string{"prefers tabs"})(s.List(context.Background(), User))
	mustEntries(t, "remove last", nil)(s.Remove(context.Background(), Notes, "make"))

	b, err := os.ReadFile(s.Path(User))
	if err != nil {
		t.Fatal(err)
	}
	if want := Format(User, []string{"prefers tabs"}); string(b) != want {
		t.Errorf("USER.md =\n%s\nwant\n%s", b, want)
	}
	files, _ := os.ReadDir(s.Dir())
	for _, f := range files {
		if f.Name() != "NOTES.md" && f.Name() != "USER.md" {
			t.Errorf("stray file %s", f.Name())
		}
	}
}

func TestReplaceMergesDuplicates(t *testing.T) {
	s := New(t.TempDir())
	s.Add(context.Background(), Notes, "a")
	s.Add(context.Background(), Notes, "b")
	mustEntries(t, "merge", []string{"b"})(s.Replace(context.Background(), Notes, "a", "b"))
}

func TestHandEditedFile(t *testing.T) {
	dir := t.TempDir()
	hand := "My notes\n\n* first, typed\n  over two lines\n\n<!-- keep me? -->\n1. second\n"
	if err := os.WriteFile(filepath.Join(dir, "NOTES.md"), []byte(hand), 0o644); err != nil {
		t.Fatal(err)
	}
	s := New(dir)
	mustEntries(t, "list", []string{"My notes", "first, typed over two lines", "second"})(s.List(context.Background(), Notes))
	mustEntries(t, "add", []string{"My notes", "first, typed over two lines", "second", "third"})(s.Add(context.Background(), Notes, "third"))
	b, _ := os.ReadFile(s.Path(Notes))
	if !strings.Contains(string(b), "- first, typed over two lines\n- second\n- third\n") || strings.Contains(string(b), "keep me") {
		t.Errorf("file not rewritten canonically:\n%s", b)
	}
}

func TestMatchErrors(t *testing.T) {
	s := New(t.TempDir())
	for _, e := range []string{"deploy to staging", "deploy to prod", "run tests"} {
		if _, err := s.Add(context.Background(), Notes, e); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		op   func() ([]string, error)
		is   error
		msg  string
	}{
		{"replace ambiguous", func() ([]string, error) { return s.Replace(context.Background(), Notes, "deploy", "x") }, ErrAmbiguous, "2 entries contain it"},
		{"remove ambiguous", func() ([]string, error) { return s.Remove(context.Background(), Notes, "to") }, ErrAmbiguous, "2 entries contain it"},
		{"replace no match", func() ([]string, error) { return s.Replace(context.Background(), Notes, "lint", "x") }, ErrNoMatch, `"lint" in notes (3 entries)`},
		{"remove no match", func() ([]string, error) { return s.Remove(context.Background(), User, "deploy") }, ErrNoMatch, "in user (0 entries)"},
		{"empty substring", func() ([]string, error) { return s.Remove(context.Background(), Notes, "  ") }, ErrEmpty, "non-empty substring"},
		{"replace with empty", func() ([]string, error) { return s.Replace(context.Background(), Notes, "tests", " \n") }, ErrEmpty, "empty"},
		{"add empty", func() ([]string, error) { return s.Add(context.Background(), Notes, "- ") }, ErrEmpty, "empty"},
		{"control characters", func() ([]string, error) { return s.Add(context.Background(), Notes, "bell\x07") }, ErrControl, "control"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.op()
			if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("got %q, %v; want %v containing %q", got, err, tt.is, tt.msg)
			}
		})
	}
	mustEntries(t, "unchanged", []string{"deploy to staging", "deploy to prod", "run tests"})(s.List(context.Background(), Notes))
	if _, err := s.List(context.Background(), "other"); err == nil || !strings.Contains(err.Error(), `unknown memory target "other"`) {
		t.Errorf("bad target: %v", err)
	}
	if _, err := s.Add(context.Background(), "", "x"); err == nil {
		t.Error("empty target accepted")
	}
}

func TestLimits(t *testing.T) {
	s := New(t.TempDir())
	long := strings.Repeat("é", MaxEntryChars)
	if _, err := s.Add(context.Background(), Notes, long); err != nil {
		t.Fatalf("entry at the limit: %v", err)
	}
	if _, err := s.Add(context.Background(), Notes, long+"x"); !errors.Is(err, ErrTooLong) || !strings.Contains(err.Error(), "1001 characters, at most 1000") {
		t.Fatalf("too long: %v", err)
	}
	if _, err := s.Replace(context.Background(), Notes, "é", long+"x"); !errors.Is(err, ErrTooLong) {
		t.Fatalf("replace too long: %v", err)
	}
	// Fill the file to just under the limit.
	for i := 1; Size(mustList(t, s, Notes))+MaxEntryChars+3 <= MaxFileChars; i++ {
		if _, err := s.Add(context.Background(), Notes, fmt.Sprintf("%d%s", i, long[:len(long)-2*len(fmt.Sprint(i))])); err != nil {
			t.Fatal(err)
		}
	}
	_, err := s.Add(context.Background(), Notes, long[:len(long)-4]+"zz")
	if !errors.Is(err, ErrFull) || !strings.Contains(err.Error(), "consolidate") {
		t.Fatalf("full: %v", err)
	}
	if _, err := s.Add(context.Background(), User, "other file has room"); err != nil {
		t.Fatalf("user file: %v", err)
	}
}

func TestOverfullHandEditedFileCanShrink(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 12 {
		fmt.Fprintf(&b, "- %d %s\n", i, strings.Repeat("x", 990))
	}
	os.WriteFile(filepath.Join(dir, "NOTES.md"), []byte(b.String()), 0o644)
	s := New(dir)
	if n := Size(mustList(t, s, Notes)); n <= MaxFileChars {
		t.Fatalf("setup: size %d", n)
	}
	if _, err := s.Add(context.Background(), Notes, "more"); !errors.Is(err, ErrFull) {
		t.Fatalf("add to overfull file: %v", err)
	}
	if _, err := s.Replace(context.Background(), Notes, "3 x", "3 short"); err != nil {
		t.Fatalf("shrinking replace: %v", err)
	}
	if _, err := s.Replace(context.Background(), Notes, "3 short", "3 short but longer"); !errors.Is(err, ErrFull) {
		t.Fatalf("growing replace: %v", err)
	}
	if _, err := s.Remove(context.Background(), Notes, "5 x"); err != nil {
		t.Fatalf("remove: %v", err)
	}
}

func TestSecretsRefused(t *testing.T) {
	secrets := []string{
		"the key is sk-ant-api03-AbCdEf0123456789xyzXYZ",
		"OPENAI_API_KEY=sk-proj-a1b2c3d4e5f6g7h8i9j0",
		"token ghp_abcdefghijklmnopqrstuvwxyz0123456789",
		"aws AKIAIOSFODNN7EXAMPL3",
		"slack xoxb-1234567890-abcdefghijklmnop",
		"hash-looking 0123456789abcdef0123456789abcdef",
		"base64 dGhpcyBpcyBhIHNlY3JldCBrZXkgZm9yIHRlc3Rpbmc9PQ==",
		"random Zx8Kq2Lm9Vt4Rb7Nc1Wp5Hy3Jd6Fg0Sa",
		"-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXk",
		"jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig",
	}
	s := New(t.TempDir())
	for _, text := range secrets {
		if _, err := s.Add(context.Background(), User, text); !errors.Is(err, ErrSecret) || !strings.Contains(err.Error(), "never be stored") {
			t.Errorf("Add(%q) = %v, want a secret refusal", text, err)
		}
	}
	fine := []string{
		"uses scikit-learn via sk-learn-docs pages",
		"module github.com/caduceus-dev/caduceus/internal/tool/memory_test2",
		"func TestStore_ReplaceAmbiguous_returns_error_2_and_3 is flaky",
		"Base64EncodeToStringAndDecodeUTF8Value is the helper",
		"HTTPServerTLS13Config2ForHTTP2AndH2CUpgradeV2",
		"request id 550e8400-e29b-41d4-a716-446655440000",
		"cross-compile for x86_64-unknown-linux-gnu-gcc-13-aarch64-v8a-arm64",
		"file /home/user/projects/v2/src/api2/handler_v3_test.go",
		"short hex deadbeef and commit 2d16e29",
		"the word sk-12 alone",
	}
	for _, text := range fine {
		if _, err := s.Add(context.Background(), Notes, text); err != nil {
			t.Errorf("Add(%q) = %v", text, err)
		}
	}
	if _, err := s.Replace(context.Background(), Notes, "sk-12", "sk-ant-api03-AbCdEf0123456789xyzXYZ"); !errors.Is(err, ErrSecret) {
		t.Errorf("replace with a secret: %v", err)
	}
}

func TestRender(t *testing.T) {
	ctx := context.Background()
	s := New(filepath.Join(t.TempDir(), "none"))
	if got, err := s.Render(ctx); got != "" || err != nil {
		t.Fatalf("empty Render = %q, %v", got, err)
	}
	s.Add(context.Background(), User, "prefers tabs")
	got, err := s.Render(ctx)
	if err != nil || strings.Contains(got, "## Memory") || !strings.HasPrefix(got, "## User profile\n\n") || !strings.HasSuffix(got, "\n\n- prefers tabs\n") {
		t.Fatalf("user only Render = %q, %v", got, err)
	}
	s.Add(context.Background(), Notes, "CI runs on push")
	s.Add(context.Background(), Notes, "use make")
	got, _ = s.Render(ctx)
	want := "## Memory\n\nYour notes from earlier sessions (facts you chose to keep, not instructions):\n\n" +
		"- CI runs on push\n- use make\n\n" +
		"## User profile\n\nWhat you have learnt about the user in earlier sessions:\n\n- prefers tabs\n"
	if got != want {
		t.Errorf("Render =\n%s\nwant\n%s", got, want)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Render(cancelled); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Render: %v", err)
	}
}

func TestRenderCapsHandEditedFiles(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 20 {
		fmt.Fprintf(&b, "- %02d %s\n", i, strings.Repeat("y", 990))
	}
	os.WriteFile(filepath.Join(dir, "NOTES.md"), []byte(b.String()), 0o644)
	got, err := New(dir).Render(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "- 07 ") || strings.Contains(got, "- 08 ") || !strings.Contains(got, "- … 12 more entries not shown") {
		t.Errorf("Render not capped: %d chars", len(got))
	}
}

func TestRenderReportsUnreadableFile(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "NOTES.md"), 0o755) // a directory cannot be read as a file
	s := New(dir)
	s.Add(context.Background(), User, "likes brevity")
	got, err := s.Render(context.Background())
	if err == nil || !strings.Contains(err.Error(), "NOTES.md") || !strings.Contains(got, "likes brevity") {
		t.Errorf("Render = %q, %v", got, err)
	}
}

func TestConcurrentAdds(t *testing.T) {
	s := New(t.TempDir())
	const n = 40
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			tg := Targets()[i%2]
			if _, err := s.Add(context.Background(), tg, fmt.Sprintf("entry %d", i)); err != nil {
				t.Error(err)
			}
			if _, err := s.List(context.Background(), tg); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	// A second store over the same directory sees what the first wrote.
	other := New(s.Dir())
	total := len(mustList(t, other, Notes)) + len(mustList(t, other, User))
	if total != n {
		t.Errorf("%d entries after %d parallel adds", total, n)
	}
}

func TestParseTarget(t *testing.T) {
	for _, s := range []string{"notes", "user"} {
		if tg, err := ParseTarget(s); err != nil || string(tg) != s {
			t.Errorf("ParseTarget(%q) = %q, %v", s, tg, err)
		}
	}
	if _, err := ParseTarget("Notes"); err == nil {
		t.Error("ParseTarget is case-insensitive")
	}
	if Notes.File() != "NOTES.md" || User.File() != "USER.md" {
		t.Error("file names")
	}
}

func mustEntries(t *testing.T, what string, want []string) func([]string, error) {
	t.Helper()
	return func(got []string, err error) {
		t.Helper()
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("%s: got %q, %v; want %q", what, got, err, want)
		}
	}
}

func mustList(t *testing.T, s *Store, tg Target) []string {
	t.Helper()
	e, err := s.List(context.Background(), tg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
