package checkpoint

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
)

// Status of a file between two states of a workspace.
type Status string

const (
	Added    Status = "added"
	Modified Status = "modified"
	Deleted  Status = "deleted"
	Renamed  Status = "renamed"
)

// FileChange is one file that differs between two states.
type FileChange struct {
	Path    string `json:"path"`
	OldPath string `json:"old_path,omitempty"` // set when Renamed
	Status  Status `json:"status"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	Binary  bool   `json:"binary,omitempty"`
	// Diff is the unified diff of a text file (Changes only; empty for a
	// binary file), cut at a line boundary after MaxDiffBytes with
	// Truncated set.
	Diff      string `json:"diff,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
}

// Current names the working tree as it is now in Changes and Restore.
const Current = ""

// Changes returns the files that differ from checkpoint `from` to `to` (a
// checkpoint, or Current for the working tree now), with the unified diff
// of each and renames detected.
func (c *Checkpointer) Changes(ctx context.Context, ws, from, to string) ([]FileChange, error) {
	w, unlock, err := c.open(ctx, ws)
	if err != nil {
		return nil, err
	}
	defer unlock()
	a, err := lookup(ctx, w, from)
	if err != nil {
		return nil, err
	}
	var bTree string
	if to == Current {
		// Staging into the shadow index is how git hashes the working
		// tree; the index is ours and the blobs become garbage if no
		// checkpoint keeps them.
		if bTree, err = stageWorkTree(ctx, w); err != nil {
			return nil, err
		}
	} else {
		b, err := lookup(ctx, w, to)
		if err != nil {
			return nil, err
		}
		bTree = b.tree
	}
	if a.tree == bTree {
		return []FileChange{}, nil
	}
	files, err := diffStat(ctx, w, a.tree, bTree)
	if err != nil {
		return nil, err
	}
	patch, err := w.git.run(ctx, nil, "diff-tree", "-r", "-M", "-p", "--no-ext-diff", "--no-textconv", "--no-color", a.tree, bTree)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	parts := splitPatch(patch)
	if len(parts) != len(files) {
		return nil, fmt.Errorf("checkpoint: diff of %d files came in %d parts", len(files), len(parts))
	}
	for i := range files {
		if files[i].Binary {
			continue
		}
		files[i].Diff, files[i].Truncated = capDiff(parts[i], c.maxDiffBytes)
	}
	return files, nil
}

// splitPatch cuts git's patch output at each "diff --git" header. A content
// line of a patch always starts with ' ', '+', '-' or '\', so a line
// starting with "diff --git " is a header.
func splitPatch(p []byte) [][]byte {
	const hdr = "diff --git "
	var parts [][]byte
	start := -1
	for i := 0; i < len(p); {
		if bytes.HasPrefix(p[i:], []byte(hdr)) {
			if start >= 0 {
				parts = append(parts, p[start:i])
			}
			start = i
		}
		nl := bytes.IndexByte(p[i:], '\n')
		if nl < 0 {
			break
		}
		i += nl + 1
	}
	if start >= 0 {
		parts = append(parts, p[start:])
	}
	return parts
}

// capDiff keeps whole lines up to max bytes.
func capDiff(d []byte, max int) (string, bool) {
	if len(d) <= max {
		return string(d), false
	}
	cut := bytes.LastIndexByte(d[:max], '\n')
	return string(d[:cut+1]), true
}

// rawEntry is one line of git's --raw output.
type rawEntry struct {
	oldMode, newMode string
	oldSHA, newSHA   string
	status           byte
	oldPath, path    string
}

// diffStat lists the files that differ from tree a to tree b with line
// counts, renames detected.
func diffStat(ctx context.Context, w *workspace, a, b string) ([]FileChange, error) {
	out, err := w.git.run(ctx, nil, "diff-tree", "-r", "-z", "-M", "--raw", "--numstat", "--no-ext-diff", "--no-textconv", a, b)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	raws, rest, err := parseRaw(out)
	if err != nil {
		return nil, err
	}
	files := make([]FileChange, len(raws))
	for i, r := range raws {
		f := FileChange{Path: r.path}
		switch r.status {
		case 'A':
			f.Status = Added
		case 'D':
			f.Status = Deleted
		case 'R':
			f.Status, f.OldPath = Renamed, r.oldPath
		default: // M, T (a file became a symlink or back)
			f.Status = Modified
		}
		// numstat: "added\tremoved\tpath\0", or "added\tremoved\t\0old\0new\0"
		// for a rename; "-\t-\t" for a binary file.
		if len(rest) == 0 {
			return nil, fmt.Errorf("checkpoint: numstat has %d entries for %d files", i, len(raws))
		}
		fields := strings.SplitN(rest[0], "\t", 3)
		if len(fields) != 3 {
			return nil, fmt.Errorf("checkpoint: bad numstat entry %q", rest[0])
		}
		rest = rest[1:]
		if fields[2] == "" {
			rest = rest[min(2, len(rest)):]
		}
		if fields[0] == "-" {
			f.Binary = true
		} else {
			f.Added, _ = strconv.Atoi(fields[0])
			f.Removed, _ = strconv.Atoi(fields[1])
		}
		files[i] = f
	}
	return files, nil
}

// parseRaw reads the --raw entries at the head of -z output and returns
// them with the tokens that follow.
func parseRaw(out []byte) ([]rawEntry, []string, error) {
	toks := strings.Split(string(out), "\x00")
	if n := len(toks); n > 0 && toks[n-1] == "" {
		toks = toks[:n-1]
	}
	var raws []rawEntry
	i := 0
	for i < len(toks) && strings.HasPrefix(toks[i], ":") {
		f := strings.Fields(toks[i][1:])
		if len(f) != 5 || f[4] == "" {
			return nil, nil, fmt.Errorf("checkpoint: bad raw diff entry %q", toks[i])
		}
		r := rawEntry{oldMode: f[0], newMode: f[1], oldSHA: f[2], newSHA: f[3], status: f[4][0]}
		if r.status == 'R' || r.status == 'C' {
			if i+2 >= len(toks) {
				return nil, nil, fmt.Errorf("checkpoint: truncated raw diff")
			}
			r.oldPath, r.path = toks[i+1], toks[i+2]
			i += 3
		} else {
			if i+1 >= len(toks) {
				return nil, nil, fmt.Errorf("checkpoint: truncated raw diff")
			}
			r.path = toks[i+1]
			i += 2
		}
		raws = append(raws, r)
	}
	return raws, toks[i:], nil
}
