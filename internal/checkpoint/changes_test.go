package checkpoint

import (
	"strings"
	"testing"
)

func TestPatchSplitter(t *testing.T) {
	patch := "diff --git a/x b/x\n@@ -1 +1 @@\n-a\n+b\n" +
		"diff --git a/long b/long\n+" + strings.Repeat("z", 100) + "\n+short\n" +
		"diff --git a/bin b/bin\nBinary files a/bin and b/bin differ\n" +
		"diff --git a/last b/last\n+no newline at the end"
	tests := []struct {
		name      string
		max       int
		want      []string
		truncated []bool
	}{
		{"room for all", 1 << 10, []string{
			"diff --git a/x b/x\n@@ -1 +1 @@\n-a\n+b\n",
			"diff --git a/long b/long\n+" + strings.Repeat("z", 100) + "\n+short\n",
			"diff --git a/bin b/bin\nBinary files a/bin and b/bin differ\n",
			"diff --git a/last b/last\n+no newline at the end",
		}, []bool{false, false, false, false}},
		{"a long line stops its part", 60, []string{
			"diff --git a/x b/x\n@@ -1 +1 @@\n-a\n+b\n",
			"diff --git a/long b/long\n",
			"diff --git a/bin b/bin\nBinary files a/bin and b/bin differ\n",
			"diff --git a/last b/last\n+no newline at the end",
		}, []bool{false, true, false, false}},
	}
	for _, tt := range tests {
		// Whole, and one byte per Write: git's output arrives in pieces.
		for _, step := range []int{len(patch), 1, 7} {
			s := &patchSplitter{max: tt.max}
			for i := 0; i < len(patch); i += step {
				if _, err := s.Write([]byte(patch[i:min(i+step, len(patch))])); err != nil {
					t.Fatal(err)
				}
			}
			parts := s.finish()
			if len(parts) != len(tt.want) {
				t.Fatalf("%s/step %d: %d parts, want %d", tt.name, step, len(parts), len(tt.want))
			}
			for i, p := range parts {
				if string(p.buf) != tt.want[i] || p.truncated != tt.truncated[i] {
					t.Errorf("%s/step %d: part %d = %q truncated %v, want %q %v", tt.name, step, i, p.buf, p.truncated, tt.want[i], tt.truncated[i])
				}
			}
		}
	}
}
