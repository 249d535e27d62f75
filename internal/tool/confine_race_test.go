package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/caduceus-dev/caduceus/internal/event"
)

// outsideSecret marks content outside the workspace; no result may show it.
const outsideSecret = "OUTSIDE-SECRET"

// raceCalls bounds the calls of one race test and raceBudget its time, so
// that a slow disk (write_file syncs) shortens the test, not fails it.
const (
	raceCalls  = 400
	raceBudget = 4 * time.Second
)

// A symlink flipped between a file in the workspace and one outside, while
// write_file, read_file and edit_file go through it: the old check-then-open
// code could be led out between its check and its open. Nothing outside may
// be written, and no result may carry its content.
func TestConfinementRaceFileSymlink(t *testing.T) {
	ws := workspace(t, map[string]string{"inside.txt": "token=1\n"})
	outside := workspace(t, map[string]string{"secret.txt": "token=1 " + outsideSecret + "\ntoken=2 " + outsideSecret + "\n"})
	secretAbs := filepath.Join(outside, "secret.txt")
	secretRel, err := filepath.Rel(ws, secretAbs)
	must(t, err)
	link := filepath.Join(ws, "link")
	must(t, os.Symlink("inside.txt", link))

	// Each flip replaces the link atomically (a new link renamed over it),
	// cycling through a target inside, an absolute one outside and a
	// relative one outside.
	targets := []string{"inside.txt", secretAbs, "inside.txt", secretRel}
	tmp := filepath.Join(ws, ".link-next")
	n := 0
	flip := func() error {
		n++
		os.Remove(tmp)
		if err := os.Symlink(targets[n%len(targets)], tmp); err != nil {
			return err
		}
		return os.Rename(tmp, link)
	}
	calls := func(i int) (Tool, string) {
		switch i % 4 {
		case 0:
			return NewWriteFile(Config{}), `{"path": "link", "content": "token=1\n"}`
		case 1:
			return NewReadFile(Config{}), `{"path": "link"}`
		case 2:
			return NewEditFile(Config{}), `{"path": "link", "old_string": "token=1", "new_string": "token=2"}`
		default:
			return NewEditFile(Config{}), `{"path": "link", "old_string": "token=2", "new_string": "token=1"}`
		}
	}
	raceConfinement(t, ws, outside, flip, calls)
}

// A directory on the path swapped with a symlink to a directory outside
// (renameat2 RENAME_EXCHANGE, so one of the two is always there). The
// tools' own resolve may see the directory and the open that follows the
// symlink: only the os.Root keeps them in. Searches and listings walk it
// too.
func TestConfinementRaceDirectorySwap(t *testing.T) {
	ws := workspace(t, map[string]string{"d/f.txt": "token=1\n", "d/in-only.txt": "in"})
	outside := workspace(t, map[string]string{
		"f.txt":            "token=1 " + outsideSecret + "\ntoken=2 " + outsideSecret + "\n",
		"outside-only.txt": outsideSecret,
	})
	must(t, os.Symlink(outside, filepath.Join(ws, "x")))
	d, x := filepath.Join(ws, "d"), filepath.Join(ws, "x")
	if err := unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, x, unix.RENAME_EXCHANGE); err != nil {
		t.Skipf("renameat2 RENAME_EXCHANGE not supported here: %v", err)
	}
	flip := func() error {
		return unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, x, unix.RENAME_EXCHANGE)
	}
	calls := func(i int) (Tool, string) {
		switch i % 7 {
		case 0:
			return NewWriteFile(Config{}), `{"path": "d/f.txt", "content": "token=1\n"}`
		case 1:
			return NewReadFile(Config{}), `{"path": "d/f.txt"}`
		case 2:
			return NewEditFile(Config{}), `{"path": "d/f.txt", "old_string": "token=1", "new_string": "token=2"}`
		case 3:
			return NewEditFile(Config{}), `{"path": "d/f.txt", "old_string": "token=2", "new_string": "token=1"}`
		case 4:
			return NewGrep(Config{}), `{"pattern": "token|SECRET", "path": "d"}`
		case 5:
			return NewListDir(Config{}), `{"path": "d"}`
		default:
			return NewGlob(Config{}), `{"pattern": "**", "path": "d"}`
		}
	}
	raceConfinement(t, ws, outside, flip, calls)
}

// raceConfinement runs calls while flip runs in a loop, then checks that
// the directory outside is exactly as it was and that no result showed
// its content or its names.
func raceConfinement(t *testing.T, ws, outside string, flip func() error, calls func(int) (Tool, string)) {
	t.Helper()
	before := snapshotDir(t, outside)

	stop := make(chan struct{})
	var (
		wg       sync.WaitGroup
		flips    int
		flipErr  error
		statuses = map[string]int{}
	)
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := flip(); err != nil {
				flipErr = err
				return
			}
			flips++
			// A pause lets calls find either side for a while; without it
			// the flipper outpaces them and most calls meet a mid-flip.
			time.Sleep(20 * time.Microsecond)
		}
	})
	// Stopped before any Fatal returns, so the flipper does not race the
	// removal of the temporary directories.
	stopFlipper := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer stopFlipper()

	deadline := time.Now().Add(raceBudget)
	env := Env{Workspace: ws}
	i := 0
	for ; i < raceCalls && time.Now().Before(deadline); i++ {
		tl, args := calls(i)
		res, err := tl.Run(context.Background(), env, json.RawMessage(args))
		if err != nil {
			t.Fatalf("call %d %s(%s): machinery error: %v", i, tl.Spec().Name, args, err)
		}
		statuses[res.Status]++
		data, _ := json.Marshal(res.Data)
		for _, leak := range []string{outsideSecret, "outside-only"} {
			if strings.Contains(res.Output, leak) || strings.Contains(string(data), leak) {
				t.Fatalf("call %d %s(%s) returned content from outside the workspace (%s):\n%s\n%s",
					i, tl.Spec().Name, args, res.Status, res.Output, data)
			}
		}
		switch res.Status {
		case event.ToolOK, event.ToolError, event.ToolDenied:
		default:
			t.Fatalf("call %d %s(%s): status %s: %s", i, tl.Spec().Name, args, res.Status, res.Output)
		}
		// Let the flipper run between calls even on one CPU.
		runtime.Gosched()
	}
	stopFlipper()
	if flipErr != nil {
		t.Fatalf("flip: %v", flipErr)
	}
	if after := snapshotDir(t, outside); !maps.Equal(before, after) {
		t.Fatalf("the directory outside the workspace changed:\nbefore %q\nafter  %q", before, after)
	}
	// Writes that were refused leave no temporary file behind.
	for name := range snapshotDir(t, ws) {
		if strings.Contains(name, ".tmp-") {
			t.Errorf("temporary file left in the workspace: %s", name)
		}
	}
	t.Logf("%d calls, %d flips, statuses %v", i, flips, statuses)
	if i < raceCalls/4 {
		t.Errorf("only %d calls in %s", i, raceBudget)
	}
	// Both sides of the flip were met, or the test proved nothing.
	if statuses[event.ToolOK] == 0 || statuses[event.ToolDenied] == 0 {
		t.Errorf("statuses %v: the calls did not meet both sides of the flip", statuses)
	}
}

// snapshotDir maps every entry below dir to its content (a link to its
// target, a directory to "/").
func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, de os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case de.Type()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			out[rel] = "-> " + target
			return err
		case de.IsDir():
			out[rel] = "/"
		default:
			b, err := os.ReadFile(p)
			out[rel] = string(b)
			return err
		}
		return nil
	})
	if err != nil && !errors.Is(err, syscall.ENOENT) {
		t.Fatal(fmt.Errorf("snapshot %s: %w", dir, err))
	}
	return out
}
