package tool

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
)

// No file tool reads /proc, where the server's environment and memory are:
// confinement to the workspace keeps it out, and a workspace that contains
// it (the filesystem root) refuses it by name.
func TestFileToolsDoNotReadProc(t *testing.T) {
	t.Setenv("CADUCEUS_PROC_TEST_MARKER", "marker-in-the-environment")
	ws := workspace(t, map[string]string{"ok.txt": "fine\n"})
	must(t, os.Symlink("/proc/self/environ", filepath.Join(ws, "env-link")))
	must(t, os.Symlink("/proc/self", filepath.Join(ws, "self-link")))
	pid := strconv.Itoa(os.Getpid())
	read := NewReadFile(Config{})
	for _, c := range []struct {
		ws, path string
	}{
		{ws, "/proc/self/environ"},
		{ws, "/proc/" + pid + "/environ"},
		{ws, "/proc/" + pid + "/cmdline"},
		{ws, "../../../../../../../../proc/self/environ"},
		{ws, "env-link"},
		{ws, "self-link/environ"},
		{"/", "proc/self/environ"},
		{"/", "/proc/" + pid + "/environ"},
		{"/", "proc/" + pid + "/mem"},
		{"/", "/proc"},
		{"/", "proc/../proc/self/environ"},
	} {
		args, _ := json.Marshal(map[string]string{"path": c.path})
		res := call(t, read, c.ws, string(args))
		if res.Status != event.ToolDenied || strings.Contains(res.Output, "marker-in-the-environment") {
			t.Errorf("read_file %s in %s: %s %q", c.path, c.ws, res.Status, res.Output)
		}
	}
	if res := call(t, read, ws, `{"path": "ok.txt"}`); res.Status != event.ToolOK {
		t.Fatalf("an ordinary read fails: %s", res.Output)
	}
	// Listing and walking skip it too.
	if res := call(t, NewListDir(Config{}), "/", `{"path": "proc/self"}`); res.Status != event.ToolDenied {
		t.Errorf("list_dir proc/self in /: %s %q", res.Status, res.Output)
	}
	res := call(t, NewGlob(Config{}), "/", `{"pattern": "proc/*/environ"}`)
	if !strings.HasPrefix(res.Output, "No files match") {
		t.Errorf("glob in / finds /proc files: %s", res.Output)
	}
}
