package checkpoint

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// PruneResult says what Prune did.
type PruneResult struct {
	// Removed lists the checkpoints deleted, oldest first.
	Removed    []string `json:"removed"`
	SizeBefore int64    `json:"size_before"` // bytes of objects before
	SizeAfter  int64    `json:"size_after"`  // bytes of objects after
	// OverCap is set when the newest checkpoint alone is larger than the
	// cap: it is never removed.
	OverCap bool `json:"over_cap,omitempty"`
}

// Prune keeps the shadow repository of ws under maxBytes of objects
// (loose and packed, as `git count-objects -v` counts them): it deletes the
// oldest checkpoints until what the rest need fits, then collects the
// garbage. Because every checkpoint is a root commit with its own ref,
// deleting one is deleting its ref; no history is rewritten. The newest
// checkpoint is always kept. Prune also packs loose objects (git gc), which
// no git call here does on its own (gc.auto=0), so calling it after a
// number of Takes keeps the repository compact even under the cap.
func (c *Checkpointer) Prune(ctx context.Context, ws string, maxBytes int64) (PruneResult, error) {
	if maxBytes <= 0 {
		return PruneResult{}, refuse(CodeBadRequest, "the size cap must be positive")
	}
	w, unlock, err := c.open(ctx, ws)
	if err != nil {
		return PruneResult{}, err
	}
	defer unlock()
	var res PruneResult
	if res.SizeBefore, err = repoSize(ctx, w); err != nil {
		return res, err
	}
	res.SizeAfter = res.SizeBefore
	if res.SizeBefore <= maxBytes {
		return res, nil
	}
	// Pack first: loose objects overstate the size many times over, and
	// the unreachable leftovers of Changes and dry runs go.
	if err := collect(ctx, w); err != nil {
		return res, err
	}
	if res.SizeAfter, err = repoSize(ctx, w); err != nil {
		return res, err
	}
	cps, err := listSorted(ctx, w)
	if err != nil {
		return res, err
	}
	// Each round estimates with rev-list --disk-usage how many of the
	// oldest must go for the rest to fit, deletes them and measures again:
	// a repack can store the kept objects a little differently.
	for res.SizeAfter > maxBytes {
		if len(cps) <= 1 {
			res.OverCap = true
			break
		}
		k := sort.Search(len(cps)-1, func(k int) bool {
			n, err := diskUsage(ctx, w, cps[k+1:])
			return err == nil && n <= maxBytes
		}) + 1
		k = min(k, len(cps)-1) // the newest stays
		var del strings.Builder
		for _, cp := range cps[:k] {
			fmt.Fprintf(&del, "delete %s%s\n", refPrefix, cp.ID)
			res.Removed = append(res.Removed, cp.ID)
		}
		if _, err := w.git.run(ctx, strings.NewReader(del.String()), "update-ref", "--stdin"); err != nil {
			return res, fmt.Errorf("checkpoint: %w", err)
		}
		cps = cps[k:]
		if err := collect(ctx, w); err != nil {
			return res, err
		}
		if res.SizeAfter, err = repoSize(ctx, w); err != nil {
			return res, err
		}
	}
	c.log.Info("checkpoints pruned", "workspace", w.path, "removed", len(res.Removed),
		"size_before", res.SizeBefore, "size_after", res.SizeAfter, "cap", maxBytes)
	return res, nil
}

// collect drops every unreferenced object now: the repository has no
// reflogs (core.logAllRefUpdates=false), expiring them is for one edited
// by hand.
func collect(ctx context.Context, w *workspace) error {
	if _, err := w.git.run(ctx, nil, "reflog", "expire", "--expire=now", "--all"); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if _, err := w.git.run(ctx, nil, "gc", "--prune=now", "--quiet"); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// diskUsage is the bytes of objects the checkpoints reach, as stored.
func diskUsage(ctx context.Context, w *workspace, keep []Checkpoint) (int64, error) {
	var in strings.Builder
	for _, cp := range keep {
		in.WriteString(cp.Commit + "\n")
	}
	out, err := w.git.run(ctx, strings.NewReader(in.String()), "rev-list", "--objects", "--disk-usage", "--stdin")
	if err != nil {
		return 0, fmt.Errorf("checkpoint: %w", err)
	}
	return strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
}

// repoSize is loose plus packed objects (and garbage), in bytes.
func repoSize(ctx context.Context, w *workspace) (int64, error) {
	out, err := w.git.run(ctx, nil, "count-objects", "-v")
	if err != nil {
		return 0, fmt.Errorf("checkpoint: %w", err)
	}
	var kib int64
	for line := range strings.SplitSeq(string(out), "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		switch k {
		case "size", "size-pack", "size-garbage":
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("checkpoint: count-objects %q: %w", line, err)
			}
			kib += n
		}
	}
	return kib * 1024, nil
}
