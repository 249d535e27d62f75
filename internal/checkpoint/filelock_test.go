package checkpoint

import (
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// Two Checkpointers on one directory stand for the web tier (a person's
// save) and a runner process (the agent's tool call) of one host: their
// Takes of one workspace wait for each other instead of failing on git's
// index.lock.
func TestTakeAcrossProcessesOnOneDir(t *testing.T) {
	ctx := testCtx(t)
	dir := filepath.Join(t.TempDir(), "checkpoints")
	a, b := newCheckpointer(t, Options{Dir: dir}), newCheckpointer(t, Options{Dir: dir})
	ws := t.TempDir()
	const n = 6
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		for j, c := range []*Checkpointer{a, b} {
			wg.Go(func() {
				name := "f" + strconv.Itoa(i) + "-" + strconv.Itoa(j) + ".txt"
				writeTree(t, ws, map[string]string{name: "x\n"})
				_, err := c.Take(ctx, ws, Meta{ToolCallID: "call_" + name})
				errs <- err
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if list, err := a.List(ctx, ws); err != nil || len(list) != 2*n {
		t.Fatalf("%d checkpoints, %v; want %d", len(list), err, 2*n)
	}
}
