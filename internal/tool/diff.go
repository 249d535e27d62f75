package tool

import (
	"fmt"
	"strings"
)

// diffContext is the number of unchanged lines around each hunk, as in
// `diff -u` and git.
const diffContext = 3

// Bounds on the Myers search. Beyond them the changed region is reported as
// one replacement: still a correct diff, only not a minimal one, which is
// cheaper than spending seconds or megabytes on a tool result.
const (
	diffMaxEdits = 600      // lines inserted plus deleted
	diffMaxWork  = 20 << 20 // comparisons
)

// lineChange says that lines a[A0:A1] became b[B0:B1] (0-based, half-open).
// One of the ranges may be empty: a pure insertion or deletion.
type lineChange struct{ A0, A1, B0, B1 int }

// splitLines cuts s into lines that keep their "\n", so that a missing
// final newline is a difference like any other.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// diffLines returns the changes turning a into b, in order.
func diffLines(a, b []string) []lineChange {
	// Lines the two sides share at either end are the common case (an edit
	// touches a few lines of a long file) and need no search.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	a0, a1, b0, b1 := pre, len(a)-suf, pre, len(b)-suf
	switch {
	case a0 == a1 && b0 == b1:
		return nil
	case a0 == a1 || b0 == b1:
		return []lineChange{{a0, a1, b0, b1}}
	}
	changes, ok := myers(intern(a[a0:a1], b[b0:b1]))
	if !ok {
		return []lineChange{{a0, a1, b0, b1}}
	}
	for i := range changes {
		changes[i].A0 += a0
		changes[i].A1 += a0
		changes[i].B0 += b0
		changes[i].B1 += b0
	}
	return changes
}

// intern maps equal lines to equal integers so the search compares ints.
func intern(a, b []string) ([]int, []int) {
	ids := make(map[string]int, len(a))
	conv := func(lines []string) []int {
		out := make([]int, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = len(ids)
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	return conv(a), conv(b)
}

// myers finds a shortest edit script (E. Myers, "An O(ND) Difference
// Algorithm and Its Variations", 1986) and returns it as changes. It gives
// up (ok false) past diffMaxEdits or diffMaxWork. The trace keeps, for each
// edit distance d, only the diagonals -d-1..d+1 the next round reads, so
// memory is O(D²) rather than O((N+M)·D).
func myers(a, b []int) (changes []lineChange, ok bool) {
	n, m := len(a), len(b)
	maxD := min(n+m, diffMaxEdits)
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	var trace [][]int
	work := 0
	for d := 0; d <= maxD; d++ {
		trace = append(trace, append([]int(nil), v[off-d-1:off+d+2]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1] // down: insert b[y]
			} else {
				x = v[off+k-1] + 1 // right: delete a[x]
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
				work++
			}
			v[off+k] = x
			if work++; work > diffMaxWork {
				return nil, false
			}
			if x >= n && y >= m {
				return backtrack(trace, n, m), true
			}
		}
	}
	return nil, false
}

// backtrack walks the trace from the end to the start, marking the deleted
// lines of a and the inserted lines of b, then groups the marks into
// changes.
func backtrack(trace [][]int, n, m int) []lineChange {
	deleted, inserted := make([]bool, n), make([]bool, m)
	x, y := n, m
	for d := len(trace) - 1; d >= 0; d-- {
		at := func(k int) int { return trace[d][k+d+1] }
		k := x - y
		prevK := k - 1
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			prevK = k + 1
		}
		prevX := at(prevK)
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			x--
			y--
		}
		if d == 0 {
			break
		}
		if prevK == k+1 {
			inserted[prevY] = true
		} else {
			deleted[prevX] = true
		}
		x, y = prevX, prevY
	}
	return groupChanges(deleted, inserted)
}

// groupChanges turns per-line marks into changes, each spanning the edits
// between two runs of equal lines.
func groupChanges(deleted, inserted []bool) []lineChange {
	var changes []lineChange
	x, y := 0, 0
	for x < len(deleted) || y < len(inserted) {
		if x < len(deleted) && y < len(inserted) && !deleted[x] && !inserted[y] {
			x++
			y++
			continue
		}
		c := lineChange{A0: x, B0: y}
		for moved := true; moved; {
			moved = false
			for ; x < len(deleted) && deleted[x]; x++ {
				moved = true
			}
			for ; y < len(inserted) && inserted[y]; y++ {
				moved = true
			}
		}
		if x == c.A0 && y == c.B0 {
			// Unmarked lines left on one side only: not a valid script.
			// Never expected, but a tool result must not hang on it.
			x, y = len(deleted), len(inserted)
		}
		c.A1, c.B1 = x, y
		changes = append(changes, c)
	}
	return changes
}

// unifiedDiff formats changes between a and b in the unified format of
// `diff -u` and git, with diffContext lines of context around each hunk and
// hunks closer than twice that merged. It returns "" when nothing changed.
func unifiedDiff(name string, a, b []string, changes []lineChange) string {
	if len(changes) == 0 {
		return ""
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- a/%s\n+++ b/%s\n", name, name)
	for i := 0; i < len(changes); {
		j := i + 1
		for j < len(changes) && changes[j].A0-changes[j-1].A1 <= 2*diffContext {
			j++
		}
		writeHunk(&sb, a, b, changes[i:j])
		i = j
	}
	return sb.String()
}

func writeHunk(sb *strings.Builder, a, b []string, group []lineChange) {
	first, last := group[0], group[len(group)-1]
	lead := min(diffContext, first.A0)
	trail := min(diffContext, len(a)-last.A1)
	a0, a1 := first.A0-lead, last.A1+trail
	b0, b1 := first.B0-lead, last.B1+trail
	fmt.Fprintf(sb, "@@ -%s +%s @@\n", hunkRange(a0, a1), hunkRange(b0, b1))
	x := a0
	for _, c := range group {
		for ; x < c.A0; x++ {
			writeDiffLine(sb, ' ', a[x])
		}
		for _, l := range a[c.A0:c.A1] {
			writeDiffLine(sb, '-', l)
		}
		for _, l := range b[c.B0:c.B1] {
			writeDiffLine(sb, '+', l)
		}
		x = c.A1
	}
	for ; x < a1; x++ {
		writeDiffLine(sb, ' ', a[x])
	}
}

// hunkRange writes a hunk's line range as diff does: "start,count", the
// count left out when it is 1, and an empty range named by the line before
// it.
func hunkRange(from, to int) string {
	switch n := to - from; n {
	case 0:
		return fmt.Sprintf("%d,0", from)
	case 1:
		return fmt.Sprintf("%d", from+1)
	default:
		return fmt.Sprintf("%d,%d", from+1, n)
	}
}

func writeDiffLine(sb *strings.Builder, mark byte, line string) {
	sb.WriteByte(mark)
	sb.WriteString(line)
	if !strings.HasSuffix(line, "\n") {
		sb.WriteString("\n\\ No newline at end of file\n")
	}
}
