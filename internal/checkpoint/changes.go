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
	// The patch is split and capped as it streams, so a huge change
	// costs at most MaxDiffBytes per file in memory.
	split := &patchSplitter{max: c.maxDiffBytes}
	if err := w.git.runTo(ctx, nil, split, nil, "diff-tree", "-r", "-M", "-p", "--no-ext-diff", "--no-textconv", "--no-color", a.tree, bTree); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	parts := split.finish()
	if len(parts) != len(files) {
		return nil, fmt.Errorf("checkpoint: diff of %d files came in %d parts", len(files), len(parts))
	}
	for i := range files {
		if files[i].Binary {
			continue
		}
		files[i].Diff, files[i].Truncated = string(parts[i].buf), parts[i].truncated
	}
	return files, nil
}

// patchSplitter cuts git's patch output at each "diff --git" header as it
// is written, keeping whole lines of each file's part up to max bytes. A
// content line of a patch always starts with ' ', '+', '-' or '\', so a
// line starting with "diff --git " is a header.
type patchSplitter struct {
	max   int
	parts []patchPart
	line  []byte // the line being written, its first max bytes
	n     int    // the full length of that line
}

type patchPart struct {
	buf       []byte
	truncated bool
}

const patchHeader = "diff --git "

func (s *patchSplitter) Write(p []byte) (int, error) {
	total := len(p)
	for len(p) > 0 {
		chunk, ended := p, false
		if i := bytes.IndexByte(p, '\n'); i >= 0 {
			chunk, ended = p[:i+1], true
		}
		p = p[len(chunk):]
		if room := s.max - len(s.line); room > 0 {
			s.line = append(s.line, chunk[:min(room, len(chunk))]...)
		}
		s.n += len(chunk)
		if ended {
			s.endLine()
		}
	}
	return total, nil
}

func (s *patchSplitter) endLine() {
	if bytes.HasPrefix(s.line, []byte(patchHeader)) {
		s.parts = append(s.parts, patchPart{})
	}
	if k := len(s.parts) - 1; k >= 0 {
		part := &s.parts[k]
		if !part.truncated && len(part.buf)+s.n <= s.max {
			part.buf = append(part.buf, s.line...)
		} else {
			part.truncated = true
		}
	}
	s.line, s.n = s.line[:0], 0
}

// finish ends a last line without a newline and returns the parts.
func (s *patchSplitter) finish() []patchPart {
	if s.n > 0 {
		s.endLine()
	}
	return s.parts
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
