package tool

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestUnifiedDiff(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want string
	}{
		{name: "equal", a: "x\ny\n", b: "x\ny\n", want: ""},
		{name: "one line in the middle", a: numbered(1, 10), b: strings.Replace(numbered(1, 10), "line 5\n", "five\n", 1), want: `--- a/f.txt
+++ b/f.txt
@@ -2,7 +2,7 @@
 line 2
 line 3
 line 4
-line 5
+five
 line 6
 line 7
 line 8
`},
		{name: "insert at the start", a: "a\nb\n", b: "new\na\nb\n", want: `--- a/f.txt
+++ b/f.txt
@@ -1,2 +1,3 @@
+new
 a
 b
`},
		{name: "delete everything", a: "a\nb\n", b: "", want: `--- a/f.txt
+++ b/f.txt
@@ -1,2 +0,0 @@
-a
-b
`},
		{name: "missing final newline", a: "a\nb", b: "a\nb\n", want: `--- a/f.txt
+++ b/f.txt
@@ -1,2 +1,2 @@
 a
-b
\ No newline at end of file
+b
`},
		{name: "distant changes make two hunks", a: numbered(1, 20), b: strings.NewReplacer("line 2\n", "two\n", "line 19\n", "nineteen\n").Replace(numbered(1, 20)), want: `--- a/f.txt
+++ b/f.txt
@@ -1,5 +1,5 @@
 line 1
-line 2
+two
 line 3
 line 4
 line 5
@@ -16,5 +16,5 @@
 line 16
 line 17
 line 18
-line 19
+nineteen
 line 20
`},
		{name: "close changes share a hunk", a: numbered(1, 12), b: strings.NewReplacer("line 3\n", "three\n", "line 9\n", "nine\n").Replace(numbered(1, 12)), want: `--- a/f.txt
+++ b/f.txt
@@ -1,12 +1,12 @@
 line 1
 line 2
-line 3
+three
 line 4
 line 5
 line 6
 line 7
 line 8
-line 9
+nine
 line 10
 line 11
 line 12
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := splitLines(tt.a), splitLines(tt.b)
			got := unifiedDiff("f.txt", a, b, diffLines(a, b))
			if got != tt.want {
				t.Errorf("diff:\n%s\nwant:\n%s", got, tt.want)
			}
			if got != "" {
				if patched := applyUnified(t, a, got); patched != tt.b {
					t.Errorf("patched %q, want %q", patched, tt.b)
				}
			}
		})
	}
}

// Random inputs: the changes must turn a into b, be minimal (checked
// against an LCS table), and the unified text must patch a into b.
func TestDiffLinesRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	gen := func() []string {
		n := r.IntN(12)
		out := make([]string, n)
		for i := range out {
			out[i] = string(rune('a'+r.IntN(4))) + "\n"
		}
		return out
	}
	for iter := range 3000 {
		a, b := gen(), gen()
		changes := diffLines(a, b)
		if got := applyChanges(a, b, changes); !slices.Equal(got, b) {
			t.Fatalf("%d: %q -> %q: changes %v give %q", iter, a, b, changes, got)
		}
		edits := 0
		for i, c := range changes {
			edits += c.A1 - c.A0 + c.B1 - c.B0
			if c.A0 == c.A1 && c.B0 == c.B1 {
				t.Fatalf("%d: empty change %v", iter, c)
			}
			if i > 0 && c.A0 <= changes[i-1].A1 && c.B0 <= changes[i-1].B1 {
				t.Fatalf("%d: changes not separated by equal lines: %v", iter, changes)
			}
		}
		if want := len(a) + len(b) - 2*lcs(a, b); edits != want {
			t.Fatalf("%d: %q -> %q: %d edits, minimum %d (%v)", iter, a, b, edits, want, changes)
		}
		if d := unifiedDiff("f", a, b, changes); d != "" {
			if got := applyUnified(t, a, d); got != strings.Join(b, "") {
				t.Fatalf("%d: patch gives %q, want %q\n%s", iter, got, strings.Join(b, ""), d)
			}
		}
	}
}

// Past the search bounds the result is one change over the differing
// region: not minimal, still correct.
func TestDiffLinesFallback(t *testing.T) {
	var a, b []string
	a = append(a, "head\n")
	b = append(b, "head\n")
	for i := range 2 * diffMaxEdits {
		a = append(a, "a"+strconv.Itoa(i)+"\n")
		b = append(b, "b"+strconv.Itoa(i)+"\n", "a"+strconv.Itoa(i)+"\n")
	}
	changes := diffLines(a, b)
	if len(changes) != 1 || changes[0] != (lineChange{1, len(a) - 1, 1, len(b) - 1}) {
		t.Fatalf("changes %v", changes[:min(len(changes), 3)])
	}
	if got := applyChanges(a, b, changes); !slices.Equal(got, b) {
		t.Fatal("fallback does not reconstruct b")
	}
}

func applyChanges(a, b []string, changes []lineChange) []string {
	var out []string
	x := 0
	for _, c := range changes {
		out = append(out, a[x:c.A0]...)
		out = append(out, b[c.B0:c.B1]...)
		x = c.A1
	}
	return append(out, a[x:]...)
}

func lcs(a, b []string) int {
	t := make([][]int, len(a)+1)
	for i := range t {
		t[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				t[i][j] = 1 + t[i+1][j+1]
			} else {
				t[i][j] = max(t[i+1][j], t[i][j+1])
			}
		}
	}
	return t[0][0]
}

// applyUnified is a strict patch(1): context and removed lines must match
// a exactly where the hunk headers say.
func applyUnified(t *testing.T, a []string, diff string) string {
	t.Helper()
	lines := strings.SplitAfter(diff, "\n")
	if !strings.HasPrefix(lines[0], "--- a/") || !strings.HasPrefix(lines[1], "+++ b/") {
		t.Fatalf("headers: %q", lines[:2])
	}
	var out []string
	x := 0
	for i := 2; i < len(lines) && lines[i] != ""; {
		var as, an, bs, bn int
		h := lines[i]
		if _, err := fmt.Sscanf(normalizeHunk(h), "@@ -%d,%d +%d,%d @@\n", &as, &an, &bs, &bn); err != nil {
			t.Fatalf("hunk header %q: %v", h, err)
		}
		start := as - 1
		if an == 0 {
			start = as
		}
		if start < x {
			t.Fatalf("hunk %q overlaps the previous one", h)
		}
		out = append(out, a[x:start]...)
		x = start
		i++
		gotA, gotB := 0, 0
		for ; i < len(lines) && lines[i] != "" && !strings.HasPrefix(lines[i], "@@"); i++ {
			l := lines[i]
			text := l[1:]
			if i+1 < len(lines) && strings.HasPrefix(lines[i+1], `\ No newline`) {
				text = strings.TrimSuffix(text, "\n")
				i++
			}
			switch l[0] {
			case ' ', '-':
				if x >= len(a) || a[x] != text {
					t.Fatalf("line %d: %q does not match %q", x+1, text, a[min(x, len(a)-1)])
				}
				if l[0] == ' ' {
					out = append(out, text)
					gotB++
				}
				x++
				gotA++
			case '+':
				out = append(out, text)
				gotB++
			default:
				t.Fatalf("bad diff line %q", l)
			}
		}
		if gotA != an || gotB != bn {
			t.Fatalf("hunk %q has %d/%d lines", h, gotA, gotB)
		}
	}
	out = append(out, a[x:]...)
	return strings.Join(out, "")
}

// normalizeHunk puts back the ",1" counts diff leaves out.
func normalizeHunk(h string) string {
	f := strings.Fields(h)
	for i := 1; i <= 2 && i < len(f); i++ {
		if !strings.Contains(f[i], ",") {
			f[i] += ",1"
		}
	}
	return strings.Join(f, " ") + "\n"
}
