package checkpoint

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
)

// apply writes the plan's files into the workspace through an os.Root, so
// no write leaves it: not through "..", not through a symbolic link that
// points outside. Deletions go first (deepest first), so a file can take
// the place of a directory that held only deleted files and the reverse.
func (c *Checkpointer) apply(ctx context.Context, w *workspace, plan *Plan, force bool, paths []string) error {
	root, err := os.OpenRoot(w.path)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	defer root.Close()

	// The wanted state of each file comes from the From tree.
	a, err := lookup(ctx, w, plan.From)
	if err != nil {
		return err
	}
	var todo []int
	for i, f := range plan.Files {
		if toApply(f, force, paths) {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	want, err := treeStates(ctx, w, a.tree, plan.Files, todo)
	if err != nil {
		return err
	}
	var shas []string
	for _, i := range todo {
		if s := want[plan.Files[i].Path]; !s.absent() {
			shas = append(shas, s.sha)
		}
	}
	blobs, err := readBlobs(ctx, w, shas)
	if err != nil {
		return err
	}
	// Deletions first, deepest path first; then writes in path order.
	slices.SortStableFunc(todo, func(x, y int) int {
		dx, dy := plan.Files[x].Action == ActionDelete, plan.Files[y].Action == ActionDelete
		switch {
		case dx && !dy:
			return -1
		case dy && !dx:
			return 1
		case dx && dy:
			return strings.Compare(plan.Files[y].Path, plan.Files[x].Path)
		}
		return strings.Compare(plan.Files[x].Path, plan.Files[y].Path)
	})
	for _, i := range todo {
		f := &plan.Files[i]
		s := want[f.Path]
		var err error
		if s.absent() {
			err = removeFile(root, f.Path)
		} else {
			err = writeFile(root, f.Path, s.mode, blobs[s.sha])
		}
		if err != nil {
			f.Error = err.Error()
			c.log.Warn("checkpoint restore: a file was not restored", "workspace", w.path, "path", f.Path, "err", err)
			continue
		}
		f.Applied = true
	}
	return nil
}

// treeStates reads the mode and blob of the planned files in tree.
func treeStates(ctx context.Context, w *workspace, tree string, files []PlanFile, todo []int) (map[string]state, error) {
	out, err := w.git.run(ctx, nil, "ls-tree", "-r", "-z", "--full-tree", tree)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	wanted := make(map[string]bool, len(todo))
	for _, i := range todo {
		wanted[files[i].Path] = true
	}
	states := make(map[string]state, len(todo))
	for _, p := range todo {
		states[files[p].Path] = state{mode: noMode}
	}
	// "<mode> SP <type> SP <sha> TAB <path> NUL"
	for entry := range strings.SplitSeq(string(out), "\x00") {
		meta, p, ok := strings.Cut(entry, "\t")
		if !ok || !wanted[p] {
			continue
		}
		f := strings.Fields(meta)
		if len(f) != 3 {
			return nil, fmt.Errorf("checkpoint: bad ls-tree entry %q", entry)
		}
		states[p] = state{mode: f[0], sha: f[2]}
	}
	return states, nil
}

// readBlobs reads blobs through one git cat-file --batch.
func readBlobs(ctx context.Context, w *workspace, shas []string) (map[string][]byte, error) {
	blobs := make(map[string][]byte, len(shas))
	if len(shas) == 0 {
		return blobs, nil
	}
	var in strings.Builder
	for _, s := range shas {
		in.WriteString(s + "\n")
	}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := w.git.runTo(ctx, strings.NewReader(in.String()), pw, nil, "cat-file", "--batch")
		pw.CloseWithError(err)
		done <- err
	}()
	br := bufio.NewReader(pr)
	var perr error
	for range shas {
		// "<sha> blob <size>\n<content>\n"
		hdr, err := br.ReadString('\n')
		if err != nil {
			perr = fmt.Errorf("checkpoint: reading blobs: %w", err)
			break
		}
		f := strings.Fields(hdr)
		if len(f) != 3 || f[1] != "blob" {
			perr = fmt.Errorf("checkpoint: object %q is not a blob", strings.TrimSpace(hdr))
			break
		}
		size, err := strconv.Atoi(f[2])
		if err != nil {
			perr = fmt.Errorf("checkpoint: bad blob header %q", hdr)
			break
		}
		buf := make([]byte, size+1)
		if _, err := io.ReadFull(br, buf); err != nil {
			perr = fmt.Errorf("checkpoint: reading blob %s: %w", f[0], err)
			break
		}
		blobs[f[0]] = buf[:size]
	}
	if perr != nil {
		pr.CloseWithError(perr)
	} else {
		_, _ = io.Copy(io.Discard, pr)
	}
	if err := <-done; err != nil && perr == nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	if perr != nil {
		return nil, perr
	}
	return blobs, nil
}

// checkParents refuses a path whose parent directories include a symbolic
// link. os.Root already refuses links that lead outside; this also refuses
// links inside, because a checkpoint never holds a file beyond a link (git
// records the link itself) and writing through one would change another
// file than the one planned.
func checkParents(root *os.Root, p string) error {
	dir := path.Dir(p)
	if dir == "." {
		return nil
	}
	parts := strings.Split(dir, "/")
	for i := range parts {
		d := strings.Join(parts[:i+1], "/")
		fi, err := root.Lstat(d)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symbolic link: not written through", d)
		}
		if !fi.IsDir() {
			return fmt.Errorf("%s is not a directory", d)
		}
	}
	return nil
}

// writeFile puts content at p with git's mode: a regular file (executable
// or not) or a symbolic link. It writes a temporary file beside p and
// renames it over p, so a reader never sees half a file; a link at p is
// replaced, never followed.
func writeFile(root *os.Root, p, mode string, content []byte) error {
	if err := checkParents(root, p); err != nil {
		return err
	}
	if dir := path.Dir(p); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	old, err := root.Lstat(p)
	switch {
	case err == nil && old.IsDir():
		return fmt.Errorf("%s is a directory", p)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if mode == symlinkMod {
		target := string(content)
		if path.IsAbs(target) || !isLocalFrom(path.Dir(p), target) {
			return fmt.Errorf("the symbolic link's target %q is outside the workspace: not recreated", target)
		}
		if err == nil {
			if err := root.Remove(p); err != nil {
				return err
			}
		}
		return root.Symlink(target, p)
	}
	if !strings.HasPrefix(mode, "100") {
		return fmt.Errorf("mode %s is not a file", mode)
	}
	perm := fs.FileMode(0o644)
	if err == nil && old.Mode().IsRegular() {
		perm = old.Mode().Perm() &^ 0o111
	}
	if mode == execMode {
		// x wherever r is, as git checks out an executable.
		perm |= (perm & 0o444) >> 2
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := path.Join(path.Dir(p), ".caduceus-restore-"+hex.EncodeToString(rnd[:]))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.Write(content)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = root.Chmod(tmp, perm)
	}
	if werr == nil {
		werr = root.Rename(tmp, p)
	}
	if werr != nil {
		_ = root.Remove(tmp)
	}
	return werr
}

// isLocalFrom reports whether target, relative to dir, stays inside the
// root.
func isLocalFrom(dir, target string) bool {
	j := path.Join(dir, target)
	return j != ".." && !strings.HasPrefix(j, "../") && !path.IsAbs(j)
}

// removeFile deletes p (a link itself, never its target) and then the
// directories it leaves empty, as git does.
func removeFile(root *os.Root, p string) error {
	if err := checkParents(root, p); err != nil {
		return err
	}
	fi, err := root.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return fmt.Errorf("%s is a directory", p)
	}
	if err := root.Remove(p); err != nil {
		return err
	}
	for d := path.Dir(p); d != "."; d = path.Dir(d) {
		if root.Remove(d) != nil {
			break
		}
	}
	return nil
}
