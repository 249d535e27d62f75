package ignore

import (
	"testing"
	"testing/fstest"
)

func TestRules(t *testing.T) {
	fsys := fstest.MapFS{
		".gitignore":     {Data: []byte("# comment\n*.log\n/build\nnode_modules/\n!keep.log\r\n")},
		"sub/.gitignore": {Data: []byte("secret.txt\n!important.log\n")},
	}
	tests := []struct {
		dir   string // where the walk stands (entered)
		name  string
		isDir bool
		want  bool
	}{
		{".", "debug.log", false, true},
		{".", "keep.log", false, false},
		{".", "build", true, true},
		{".", "build", false, true},
		{".", "node_modules", true, true},
		{".", "node_modules", false, false}, // a file: the pattern names directories
		{".", "app.js", false, false},
		{"src", "src/build", true, false}, // /build is anchored to the root
		{"sub", "sub/secret.txt", false, true},
		{"sub", "sub/important.log", false, false}, // re-included by the deeper file
		{"sub", "sub/other.log", false, true},
		{".", "secret.txt", false, false}, // sub's rules do not reach up
	}
	for _, tt := range tests {
		t.Run(tt.dir+"/"+tt.name, func(t *testing.T) {
			r := New(fsys, tt.dir)
			mark := r.Enter(tt.dir)
			if got := r.Ignored(tt.name, tt.isDir); got != tt.want {
				t.Errorf("Ignored(%q, %v) = %v, want %v", tt.name, tt.isDir, got, tt.want)
			}
			r.Leave(mark)
			if tt.dir == "sub" && r.Ignored("sub/secret.txt", false) {
				t.Error("sub's rules still apply after Leave")
			}
		})
	}
}
