package checkpoint

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Action is what a restore does to one file.
type Action string

const (
	// ActionRestore puts back the file's content (and executable bit).
	ActionRestore Action = "restore"
	// ActionDelete removes a file that did not exist at From.
	ActionDelete Action = "delete"
	// ActionRecreate writes a file that existed at From and is gone now.
	ActionRecreate Action = "recreate"
	// ActionNone: the file is already as it was at From.
	ActionNone Action = "none"
	// ActionSkip: a nested git repository (recorded by git as a commit id,
	// not as files) or a path under an excluded directory; never written.
	ActionSkip Action = "skip"
)

// RestoreRequest says what to put back.
//
// Two forms: To a checkpoint reverts the span From→To (a run's or a tool
// call's changes): each file changed in the span gets From's version back,
// and a file whose current content differs from To's was changed again
// after the span (by the agent or a person) and is a conflict. To Current
// restores everything since From: every file changed since then gets
// From's version, and nothing can conflict.
type RestoreRequest struct {
	From string
	To   string // a checkpoint id, or Current
	// Paths limits the restore to these files or directories (relative to
	// the workspace, '/'-separated). Each must name something in the span.
	Paths  []string
	DryRun bool
	// Force applies conflicting files too. Without it a conflicting file
	// is written only when Paths names it exactly.
	Force bool
	// Meta is recorded on the checkpoints taken around the rollback
	// (Reason is set by Restore).
	Meta Meta
}

// PlanFile is one file of a restore.
type PlanFile struct {
	Path     string `json:"path"`
	Action   Action `json:"action"`
	Conflict bool   `json:"conflict,omitempty"`
	Reason   string `json:"reason,omitempty"` // why it conflicts or was skipped
	Applied  bool   `json:"applied,omitempty"`
	Error    string `json:"error,omitempty"` // why applying it failed
}

// Plan is what a restore will do (DryRun) or did.
type Plan struct {
	From  string     `json:"from"`
	To    string     `json:"to,omitempty"`
	Files []PlanFile `json:"files"`
	// Before is the checkpoint taken just before the files were written
	// and After the one just after: restoring From: Before.ID, To:
	// After.ID undoes the rollback. Both nil for a dry run and when
	// nothing was to be written.
	Before *Checkpoint `json:"before,omitempty"`
	After  *Checkpoint `json:"after,omitempty"`
}

const (
	noMode     = "000000"
	gitlinkMod = "160000"
	symlinkMod = "120000"
	execMode   = "100755"
)

// state is a file's mode and blob in one tree; mode noMode is absent.
type state struct{ mode, sha string }

func (s state) absent() bool { return s.mode == noMode }

// Restore plans, and unless req.DryRun applies, putting back files as they
// were at req.From. Applying first takes a checkpoint ("before rollback")
// so the rollback can itself be undone, then writes every file of the plan
// that is not a conflict, confined to the workspace, then takes a
// checkpoint "after rollback". Failures writing single files are reported
// per file in the plan; the error is for a request that could not be
// planned at all.
func (c *Checkpointer) Restore(ctx context.Context, ws string, req RestoreRequest) (Plan, error) {
	paths, err := cleanPaths(req.Paths)
	if err != nil {
		return Plan{}, err
	}
	w, unlock, err := c.open(ctx, ws)
	if err != nil {
		return Plan{}, err
	}
	defer unlock()
	a, err := lookup(ctx, w, req.From)
	if err != nil {
		return Plan{}, err
	}
	bTree := ""
	if req.To != Current {
		b, err := lookup(ctx, w, req.To)
		if err != nil {
			return Plan{}, err
		}
		bTree = b.tree
	}
	// Plan against the working tree as it is now, refusing bad paths
	// before anything is recorded.
	curTree, err := stageWorkTree(ctx, w)
	if err != nil {
		return Plan{}, err
	}
	plan, err := planRestore(ctx, w, a.tree, bTree, curTree, paths)
	if err != nil {
		return Plan{}, err
	}
	plan.From, plan.To = req.From, req.To
	if req.DryRun || !slices.ContainsFunc(plan.Files, func(f PlanFile) bool { return toApply(f, req.Force, paths) }) {
		// Nothing would be written: no checkpoints around nothing.
		return plan, nil
	}
	meta := req.Meta
	meta.Reason = "before rollback"
	before, err := c.take(ctx, w, meta)
	if err != nil {
		return Plan{}, err
	}
	plan.Before = &before
	if before.tree != curTree {
		// Something wrote to the workspace in between: plan again
		// against exactly what the undo checkpoint holds.
		p, err := planRestore(ctx, w, a.tree, bTree, before.tree, paths)
		if err != nil {
			return Plan{}, err
		}
		plan.Files = p.Files
	}
	if err := c.apply(ctx, w, &plan, req.Force, paths); err != nil {
		return plan, err
	}
	meta.Reason = "after rollback"
	after, err := c.take(ctx, w, meta)
	if err != nil {
		return plan, err
	}
	plan.After = &after
	c.log.Info("checkpoint restored", "workspace", w.path, "from", req.From, "to", req.To,
		"files", len(plan.Files), "before", before.ID, "after", after.ID)
	return plan, nil
}

// planRestore compares the span aTree→bTree (bTree "" = curTree) with
// the current tree.
func planRestore(ctx context.Context, w *workspace, aTree, bTree, curTree string, paths []string) (Plan, error) {
	againstCurrent := bTree == ""
	if againstCurrent {
		bTree = curTree
	}
	span, err := rawDiff(ctx, w, aTree, bTree)
	if err != nil {
		return Plan{}, err
	}
	// after maps a path changed after the span to its current state.
	after := map[string]state{}
	if !againstCurrent && bTree != curTree {
		later, err := rawDiff(ctx, w, bTree, curTree)
		if err != nil {
			return Plan{}, err
		}
		for _, r := range later {
			after[r.path] = state{r.newMode, r.newSHA}
		}
	}
	matched := make([]bool, len(paths))
	plan := Plan{Files: []PlanFile{}}
	for _, r := range span {
		if !filepath.IsLocal(r.path) {
			return Plan{}, fmt.Errorf("checkpoint: git reported a path outside the workspace: %q", r.path)
		}
		if len(paths) > 0 && !selected(r.path, paths, matched) {
			continue
		}
		want, atB := state{r.oldMode, r.oldSHA}, state{r.newMode, r.newSHA}
		cur, changedAfter := after[r.path]
		if !changedAfter {
			cur = atB
		}
		f := PlanFile{Path: r.path}
		switch {
		case underAny(r.path, w.excluded):
			f.Action, f.Reason = ActionSkip, "under a directory excluded from checkpoints"
		case want.mode == gitlinkMod || cur.mode == gitlinkMod:
			f.Action, f.Reason = ActionSkip, "a nested git repository: its files are not in checkpoints"
		case cur == want:
			f.Action = ActionNone
		case want.absent():
			f.Action = ActionDelete
		case cur.absent():
			f.Action = ActionRecreate
		default:
			f.Action = ActionRestore
		}
		if changedAfter && f.Action != ActionNone && f.Action != ActionSkip {
			f.Conflict = true
			switch {
			case cur.absent():
				f.Reason = "deleted after the checkpoint ending the span"
			case atB.absent():
				f.Reason = "created again after the checkpoint ending the span"
			default:
				f.Reason = "changed after the checkpoint ending the span"
			}
		}
		plan.Files = append(plan.Files, f)
	}
	for i, ok := range matched {
		if !ok {
			return Plan{}, refuse(CodeNotInSpan, fmt.Sprintf("%q did not change between the two states", paths[i]))
		}
	}
	return plan, nil
}

// toApply reports whether a restore writes f: not when it has nothing to
// do, and a conflict only when forced or named exactly.
func toApply(f PlanFile, force bool, paths []string) bool {
	if f.Action == ActionNone || f.Action == ActionSkip {
		return false
	}
	return !f.Conflict || force || slices.Contains(paths, f.Path)
}

// underAny reports whether p is one of dirs or under one.
func underAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// selected reports whether p is one of paths or under one, marking which.
func selected(p string, paths []string, matched []bool) bool {
	hit := false
	for i, q := range paths {
		if p == q || strings.HasPrefix(p, q+"/") {
			matched[i], hit = true, true
		}
	}
	return hit
}

// rawDiff lists files differing between two trees, without rename
// detection: a restore handles a rename as its deletion and its creation.
func rawDiff(ctx context.Context, w *workspace, a, b string) ([]rawEntry, error) {
	if a == b {
		return nil, nil
	}
	out, err := w.git.run(ctx, nil, "diff-tree", "-r", "-z", "--no-renames", "--raw", a, b)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	raws, _, err := parseRaw(out)
	return raws, err
}

// cleanPaths validates the requested paths: relative, '/'-separated,
// without "..", and canonical.
func cleanPaths(paths []string) ([]string, error) {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		q := strings.TrimSuffix(p, "/")
		if q == "" || !filepath.IsLocal(q) || path.Clean(q) != q || strings.ContainsRune(q, '\\') || strings.ContainsRune(q, 0) {
			return nil, refuse(CodeInvalidPath, fmt.Sprintf("%q is not a relative path inside the workspace", p))
		}
		if !slices.Contains(out, q) {
			out = append(out, q)
		}
	}
	return out, nil
}
