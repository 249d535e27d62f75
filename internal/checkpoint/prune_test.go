package checkpoint

import (
	"crypto/rand"
	"errors"
	"testing"
)

func TestPrune(t *testing.T) {
	ctx := testCtx(t)
	c := newCheckpointer(t, Options{})
	ws := t.TempDir()
	// Five checkpoints, each holding its own 256 KiB of incompressible
	// bytes: the repository holds about 1.25 MiB.
	const chunk = 256 << 10
	var ids []string
	for i := range 5 {
		b := make([]byte, chunk)
		_, _ = rand.Read(b)
		writeTree(t, ws, map[string]string{"blob.bin": string(b), "small.txt": string(rune('a'+i)) + "\n"})
		cp, err := c.Take(ctx, ws, Meta{})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, cp.ID)
	}
	tests := []struct {
		name     string
		cap      int64
		removed  []string
		overCap  bool
		nothing  bool
		afterMax int64
	}{
		{"under the cap", 64 << 20, nil, false, true, 64 << 20},
		{"keeps the newest two", 2*chunk + 128<<10, ids[:3], false, false, 2*chunk + 128<<10},
		{"never the newest", 1024, ids[3:4], true, false, 2 * chunk},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := c.Prune(ctx, ws, tt.cap)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Removed) != len(tt.removed) || res.OverCap != tt.overCap {
				t.Fatalf("removed %v over %v, want %v over %v (%+v)", res.Removed, res.OverCap, tt.removed, tt.overCap, res)
			}
			for i := range tt.removed {
				if res.Removed[i] != tt.removed[i] {
					t.Errorf("removed %v, want %v", res.Removed, tt.removed)
				}
				if _, err := c.Get(ctx, ws, tt.removed[i]); !errors.Is(err, ErrNotFound) {
					t.Errorf("pruned %s still found: %v", tt.removed[i], err)
				}
			}
			if res.SizeAfter > tt.afterMax || (tt.nothing && res.SizeAfter != res.SizeBefore) {
				t.Errorf("size %d → %d, want at most %d", res.SizeBefore, res.SizeAfter, tt.afterMax)
			}
		})
	}
	list, err := c.List(ctx, ws)
	if err != nil || len(list) != 1 || list[0].ID != ids[4] {
		t.Fatalf("left %+v, %v; want the newest only", list, err)
	}
	// The survivor still diffs against the working tree and restores.
	writeTree(t, ws, map[string]string{"small.txt": "changed\n"})
	if _, err := c.Restore(ctx, ws, RestoreRequest{From: ids[4], To: Current}); err != nil {
		t.Fatal(err)
	}
	// Its parent is gone: Get says so with no Files rather than failing.
	if cp, err := c.Get(ctx, ws, ids[4]); err != nil || cp.Files != nil || cp.Parent != ids[3] {
		t.Errorf("get after prune: %+v %v", cp, err)
	}
}
