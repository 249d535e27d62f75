package control_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// TestWorkspaceRoots: a session's workspace must lie under a configured
// root once its symlinks are resolved; refused ones create nothing.
func TestWorkspaceRoots(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rootA, rootB, outside := t.TempDir(), t.TempDir(), t.TempDir()
	for _, d := range []string{filepath.Join(rootA, "proj", "sub"), filepath.Join(rootB, "x")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A link inside a root that leads out of every root, and one that
	// leads from outside into a root.
	if err := os.Symlink(outside, filepath.Join(rootA, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(rootB, "x"), filepath.Join(outside, "into-b")); err != nil {
		t.Fatal(err)
	}
	// Before AllowWorkspaces only the default workspace is allowed.
	if _, err := e.svc.CreateSession(e.ctx, control.NewSession{Workspace: rootA}); err == nil {
		t.Fatal("a workspace outside the default one was accepted without roots")
	} else {
		wantCode(t, err, control.CodeWorkspaceNotAllowed)
	}
	if err := e.svc.AllowWorkspaces([]string{rootA, rootB}); err != nil {
		t.Fatal(err)
	}
	if roots, def := e.svc.WorkspaceRoots(); !slices.Equal(roots, []string{rootA, rootB}) || def != e.ws {
		t.Fatalf("WorkspaceRoots = %v, %q", roots, def)
	}
	tests := []struct {
		name, ws, code string
	}{
		{"a root itself", rootA, ""},
		{"below a root", filepath.Join(rootA, "proj", "sub"), ""},
		{"the second root", filepath.Join(rootB, "x"), ""},
		{"a link from outside into a root", filepath.Join(outside, "into-b"), ""},
		{"outside every root", outside, control.CodeWorkspaceNotAllowed},
		{"a link in a root leading out", filepath.Join(rootA, "escape"), control.CodeWorkspaceNotAllowed},
		{"dot-dot out of a root", filepath.Join(rootA, "proj", "..", "..", filepath.Base(outside)), control.CodeWorkspaceNotAllowed},
		{"the default workspace, no longer a root", e.ws, control.CodeWorkspaceNotAllowed},
		{"missing", filepath.Join(rootA, "nope"), control.CodeInvalidInput},
		{"relative", "proj", control.CodeInvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, _, err := e.st.ListSessions(e.ctx, store.SessionPage{Limit: 1000})
			if err != nil {
				t.Fatal(err)
			}
			s, err := e.svc.CreateSession(e.ctx, control.NewSession{Workspace: tt.ws})
			if tt.code != "" {
				wantCode(t, err, tt.code)
				after, _, err := e.st.ListSessions(e.ctx, store.SessionPage{Limit: 1000})
				if err != nil || len(after) != len(before) {
					t.Fatalf("a refused workspace created a session: %d -> %d (%v)", len(before), len(after), err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Workspace != filepath.Clean(tt.ws) {
				t.Fatalf("workspace = %q, want %q", s.Workspace, tt.ws)
			}
		})
	}
	// Sessions without a workspace still get the default.
	if s, err := e.svc.CreateSession(e.ctx, control.NewSession{}); err != nil || s.Workspace != e.ws {
		t.Fatalf("default session: %+v, %v", s, err)
	}
	if err := e.svc.AllowWorkspaces([]string{filepath.Join(rootA, "nope")}); err == nil {
		t.Fatal("a missing root was accepted")
	}
}
