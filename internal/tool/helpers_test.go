package tool

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// workspace creates a temporary workspace holding files (path → content);
// a path ending in "/" is an empty directory.
func workspace(t *testing.T, files map[string]string) string {
	t.Helper()
	ws := t.TempDir()
	for p, content := range files {
		full := filepath.Join(ws, filepath.FromSlash(p))
		if p[len(p)-1] == '/' {
			must(t, os.MkdirAll(full, 0o755))
			continue
		}
		must(t, os.MkdirAll(filepath.Dir(full), 0o755))
		must(t, os.WriteFile(full, []byte(content), 0o644))
	}
	return ws
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// call runs a tool and fails the test on a machinery error.
func call(t *testing.T, tl Tool, ws string, args string) Result {
	t.Helper()
	return callEnv(t, context.Background(), tl, Env{Workspace: ws}, args)
}

func callEnv(t *testing.T, ctx context.Context, tl Tool, env Env, args string) Result {
	t.Helper()
	res, err := tl.Run(ctx, env, json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s(%s): machinery error: %v", tl.Spec().Name, args, err)
	}
	if res.Data != nil {
		if _, err := json.Marshal(res.Data); err != nil {
			t.Fatalf("Data does not marshal: %v", err)
		}
	}
	return res
}
