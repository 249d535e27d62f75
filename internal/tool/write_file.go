package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider"
)

// NameWriteFile is the write_file tool.
const NameWriteFile = "write_file"

// newFileMode is the mode of files write_file creates: what an editor would
// give a source file.
const newFileMode fs.FileMode = 0o644

// WriteFileData is the structured result of write_file.
type WriteFileData struct {
	OK      bool     `json:"ok"`
	File    FileRef  `json:"file"`
	Area    LineArea `json:"area"` // the whole file; zero for an empty one
	Bytes   int      `json:"bytes"`
	Created bool     `json:"created"`
}

type writeArgs struct {
	Path string `json:"path"`
	// A pointer tells a missing content (a mistake) from an empty one (a
	// deliberate empty file).
	Content *string `json:"content"`
}

type writeFile struct{}

// NewWriteFile returns the write_file tool.
func NewWriteFile(Config) Tool { return writeFile{} }

const writeSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File path relative to the workspace root. Missing parent directories are created."},
    "content": {"type": "string", "description": "The complete new content of the file."}
  },
  "required": ["path", "content"],
  "additionalProperties": false
}`

func (writeFile) Spec() provider.ToolSpec {
	return provider.ToolSpec{
		Name: NameWriteFile,
		Description: "Create a file, or replace the whole content of an existing one. " +
			"Prefer edit_file to change part of an existing file. The write is atomic: readers see the old or the new content, never a mix.",
		Parameters: json.RawMessage(writeSchema),
	}
}

func (writeFile) Label(args json.RawMessage) string {
	var a writeArgs
	if err := decodeArgs(args, &a); err != nil || strings.TrimSpace(a.Path) == "" {
		return "write (invalid arguments)"
	}
	return "write " + truncate(filepath.ToSlash(filepath.Clean(a.Path)), 120)
}

// Intent cannot say "new file" or "overwrite": it has no workspace to look
// in, and a remembered approval must not change meaning with the disk.
func (writeFile) Intent(args json.RawMessage) Intent {
	var a writeArgs
	if err := decodeArgs(args, &a); err != nil || strings.TrimSpace(a.Path) == "" || a.Content == nil {
		return Intent{Effect: EffectWrite, Action: "write_file " + truncate(string(args), 500), Invalid: true}
	}
	return Intent{Effect: EffectWrite, Action: "write " + a.Path, Paths: []string{a.Path}}
}

func (writeFile) Run(ctx context.Context, env Env, args json.RawMessage) (Result, error) {
	ws, err := useWorkspace(env)
	if err != nil {
		return Result{}, err
	}
	defer ws.Close()
	var a writeArgs
	if err := decodeArgs(args, &a); err != nil {
		return invalidArgs(err), nil
	}
	switch {
	case strings.TrimSpace(a.Path) == "":
		return invalidArgs(errors.New("path is required")), nil
	case a.Content == nil:
		return invalidArgs(errors.New("content is required (use \"\" for an empty file)")), nil
	case strings.HasSuffix(a.Path, "/"):
		return invalidArgs(fmt.Errorf("path %q names a directory; give a file path", a.Path)), nil
	}
	// A symlink inside the workspace is written through, as editors do, so
	// the link survives: real is where it leads.
	rel, real, err := ws.resolve(a.Path)
	if err != nil {
		return pathFailure(err), nil
	}
	created, mode, res := writeTarget(ws, a.Path, real, rel)
	if res != nil {
		return *res, nil
	}
	if err := ctx.Err(); err != nil {
		return Result{Status: event.ToolCancelled, Output: "cancelled before writing"}, nil
	}
	if err := ws.root.MkdirAll(path.Dir(real), 0o755); err != nil {
		return rootFailure(fmt.Errorf("cannot create the directory of %s: %w", rel, describeWriteErr(err)), a.Path), nil
	}
	if err := atomicReplace(ws.root, real, []byte(*a.Content), mode); err != nil {
		return rootFailure(fmt.Errorf("cannot write %s: %w", rel, describeWriteErr(err)), a.Path), nil
	}

	lines := textLineCount(*a.Content)
	data := WriteFileData{
		OK:      true,
		File:    FileRef{Path: a.Path, ViewerPath: rel},
		Bytes:   len(*a.Content),
		Created: created,
	}
	if lines > 0 {
		data.Area = LineArea{StartLine: 1, EndLine: lines}
	}
	verb := "Overwrote"
	if created {
		verb = "Created"
	}
	return Result{
		Status: event.ToolOK,
		Output: fmt.Sprintf("%s %s (%s, %s).", verb, rel, nounCount(lines, "line"), nounCount(len(*a.Content), "byte")),
		Data:   data,
	}, nil
}

// rootFailure denies what the workspace's root refused as leaving it (a
// symlink swapped in after resolve looked) and reports any other failure
// as an error.
func rootFailure(err error, p string) Result {
	return pathFailure(confined(err, p))
}

// writeTarget says whether a write to real (p resolved) creates a file
// and which mode the file gets. A non-nil Result is the model's mistake (a
// directory, a device, ...).
func writeTarget(ws *workspaceFS, p, real, rel string) (created bool, mode fs.FileMode, res *Result) {
	fail := func(format string, a ...any) (bool, fs.FileMode, *Result) {
		r := errorResult(format, a...)
		return false, 0, &r
	}
	fi, err := ws.root.Stat(real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return true, newFileMode, nil
	case errors.Is(err, syscall.ENOTDIR):
		return fail("cannot write %s: a parent of it is a file, not a directory", rel)
	case err != nil:
		r := rootFailure(fmt.Errorf("cannot write %s: %w", rel, bareErr(err)), p)
		return false, 0, &r
	case fi.IsDir():
		return fail("%s is a directory; give the path of a file inside it", rel)
	case !fi.Mode().IsRegular():
		// Renaming over a FIFO or device would replace it with a file.
		return fail("%s is not a regular file", rel)
	}
	return false, fi.Mode().Perm(), nil
}

// atomicReplace replaces the file name (relative to root) by a temporary
// file renamed over it, so a reader (or a crash) sees the old content or
// the new one, never a torn mix. The temporary file lives in the same
// directory because rename is atomic only within one file system. That
// directory is opened once, as a Root of its own, and the temporary file
// is created, renamed and (on failure) removed in it by bare names: no
// path is walked again, so a symlink swapped in on the way cannot move
// either of them, and the rename replaces a link at the final name rather
// than follow it. A hard link to the old file keeps the old content, the
// price of atomicity that editors pay too.
func atomicReplace(root *os.Root, name string, data []byte, mode fs.FileMode) (err error) {
	dir, err := root.OpenRoot(path.Dir(name))
	if err != nil {
		return err
	}
	defer dir.Close()
	base := path.Base(name)
	f, tmp, err := createTemp(dir, "."+base+".tmp-")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			dir.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	// The file was made 0600; Chmod is not subject to the umask, so an
	// existing file keeps exactly its mode.
	if err = f.Chmod(mode); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return dir.Rename(tmp, base)
}

// createTemp is os.CreateTemp in a Root's own directory: a new file with a
// random suffix, created exclusively so that nothing already there is
// reused.
func createTemp(dir *os.Root, prefix string) (*os.File, string, error) {
	for range 10 {
		name := prefix + strconv.FormatUint(rand.Uint64(), 36)
		f, err := dir.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, name, err
	}
	return nil, "", errors.New("cannot create a temporary file")
}

// describeWriteErr drops the runner's absolute paths from file-system
// errors, which include the temporary file's name.
func describeWriteErr(err error) error {
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	if errors.Is(err, syscall.ENOTDIR) {
		return errors.New("a parent of it is a file, not a directory")
	}
	return bareErr(err)
}

// textLineCount counts lines the way editors number them: a final line
// without a newline still counts, a trailing newline does not start one.
func textLineCount(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// nounCount writes "1 file", "2 files"; nouns ending in s, x, z, ch or sh
// take "es".
func nounCount(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	suffix := "s"
	for _, end := range []string{"s", "x", "z", "ch", "sh"} {
		if strings.HasSuffix(noun, end) {
			suffix = "es"
		}
	}
	return fmt.Sprintf("%d %s%s", n, noun, suffix)
}
