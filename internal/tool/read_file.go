package tool

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider"
)

const (
	readDefaultLimit = 2000
	// binarySniff is how much of a file is checked for NUL bytes, as git does.
	binarySniff = 8 << 10
	// maxLineBytes cuts pathological lines (minified code, data dumps) so one
	// line cannot eat the whole read budget.
	maxLineBytes = 2000
)

// ReadFileData is the structured result of read_file (seed 002).
type ReadFileData struct {
	OK         bool     `json:"ok"`
	File       FileRef  `json:"file"`
	Area       LineArea `json:"area"`
	TotalLines int      `json:"total_lines"`
	Bytes      int64    `json:"bytes"`
	Truncated  bool     `json:"truncated"`
}

// FileRef names a file for viewers: Path as the model gave it, ViewerPath
// relative to the workspace.
type FileRef struct {
	Path       string `json:"path"`
	ViewerPath string `json:"viewer_path"`
}

// LineArea is an inclusive, 1-based line range.
type LineArea struct {
	StartLine int `json:"start_line"`
	EndLine   int `json:"end_line"`
}

type readArgs struct {
	Path   string `json:"path"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

type readFile struct{ cap int }

// NewReadFile returns the read_file tool.
func NewReadFile(cfg Config) Tool { return readFile{cap: cfg.withDefaults().ReadCap} }

const readSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File path relative to the workspace root."},
    "offset": {"type": "integer", "minimum": 1, "description": "First line to read, 1-based. Default 1."},
    "limit": {"type": "integer", "minimum": 1, "description": "Maximum number of lines. Default 2000."}
  },
  "required": ["path"],
  "additionalProperties": false
}`

func (readFile) Spec() provider.ToolSpec {
	return provider.ToolSpec{
		Name: NameReadFile,
		Description: "Read a text file in the workspace. Lines are numbered like `cat -n`. " +
			"Long files are cut; read further with offset and limit. Binary files and directories are refused.",
		Parameters: json.RawMessage(readSchema),
	}
}

func (readFile) Label(args json.RawMessage) string {
	var a readArgs
	if err := decodeArgs(args, &a); err != nil || a.Path == "" {
		return "read (invalid arguments)"
	}
	p := truncate(filepath.ToSlash(filepath.Clean(a.Path)), 120)
	if a.Offset <= 0 && a.Limit <= 0 {
		return "read " + p
	}
	start, limit := max(a.Offset, 1), a.Limit
	if limit <= 0 {
		limit = readDefaultLimit
	}
	return fmt.Sprintf("read %s:%d-%d", p, start, start+limit-1)
}

func (readFile) Intent(json.RawMessage) Intent { return Intent{Effect: EffectNone} }

func (t readFile) Run(ctx context.Context, env Env, args json.RawMessage) (Result, error) {
	ws, err := useWorkspace(env)
	if err != nil {
		return Result{}, err
	}
	defer ws.Close()
	var a readArgs
	if err := decodeArgs(args, &a); err != nil {
		return invalidArgs(err), nil
	}
	switch {
	case strings.TrimSpace(a.Path) == "":
		return invalidArgs(errors.New("path is required")), nil
	case a.Offset < 0:
		return invalidArgs(errors.New("offset must be at least 1")), nil
	case a.Limit < 0:
		return invalidArgs(errors.New("limit must be at least 1")), nil
	}
	a.Offset = max(a.Offset, 1)
	if a.Limit == 0 {
		a.Limit = readDefaultLimit
	}

	rel, real, err := ws.resolve(a.Path)
	if err != nil {
		return pathFailure(err), nil
	}
	f, fi, err := ws.openRead(real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errorResult("%s does not exist", rel), nil
	case err != nil:
		return pathFailure(confined(fmt.Errorf("cannot read %s: %w", rel, bareErr(err)), a.Path)), nil
	case fi.IsDir():
		return errorResult("%s is a directory; use list_dir to see its contents", rel), nil
	case f == nil:
		// Opening a FIFO or device could block or never end.
		return errorResult("%s is not a regular file", rel), nil
	}
	defer f.Close()

	head := make([]byte, binarySniff)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return errorResult("cannot read %s: %v", rel, bareErr(err)), nil
	}
	if bytes.IndexByte(head[:n], 0) >= 0 {
		return errorResult("%s looks like a binary file (%d bytes); read_file only shows text", rel, fi.Size()), nil
	}

	w := window{ctx: ctx, start: a.Offset, limit: a.Limit, cap: t.cap}
	if err := w.read(io.MultiReader(bytes.NewReader(head[:n]), f)); err != nil {
		if ctx.Err() != nil {
			return Result{Status: event.ToolCancelled, Output: "cancelled"}, nil
		}
		return errorResult("cannot read %s: %v", rel, bareErr(err)), nil
	}
	if a.Offset > w.total && !(w.total == 0 && a.Offset == 1) {
		return errorResult("offset %d is past the end of %s, which has %d lines", a.Offset, rel, w.total), nil
	}

	data := ReadFileData{
		OK:         true,
		File:       FileRef{Path: a.Path, ViewerPath: rel},
		TotalLines: w.total,
		Bytes:      fi.Size(),
		Truncated:  w.end < w.total || w.cutLines > 0,
	}
	if w.end > 0 {
		data.Area = LineArea{StartLine: a.Offset, EndLine: w.end}
	}
	out := w.out.String()
	switch {
	case w.total == 0:
		out = "(empty file)"
	case w.end < w.total:
		out += fmt.Sprintf("… [showing lines %d-%d of %d; continue with offset=%d]\n", a.Offset, w.end, w.total, w.end+1)
	}
	if w.cutLines > 0 {
		out += fmt.Sprintf("… [lines longer than %[2]d bytes were cut: %[1]d]\n", w.cutLines, maxLineBytes)
	}
	return Result{Status: event.ToolOK, Output: strings.TrimRight(out, "\n"), Data: data}, nil
}

// window collects lines [start, start+limit) into out, within cap bytes, and
// counts every line of the file so the model knows how much is left.
type window struct {
	ctx          context.Context
	start, limit int
	cap          int

	out      strings.Builder
	end      int // last line written to out
	total    int
	cutLines int
	full     bool // cap reached
}

func (w *window) read(r io.Reader) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var (
		line   []byte // the current line while it is in the window
		inLine bool
		no     = 1
		chunks int
	)
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			inLine = true
			if w.wants(no) {
				// Keep one byte beyond the limit so finish knows it was cut.
				if room := maxLineBytes + 1 - len(line); room > 0 {
					line = append(line, chunk[:min(room, len(chunk))]...)
				}
			}
			if chunk[len(chunk)-1] == '\n' {
				w.finish(no, line)
				line, inLine = line[:0], false
				no++
			}
		}
		switch {
		case err == nil || errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF):
			if inLine {
				w.finish(no, line)
				no++
			}
			w.total = no - 1
			return nil
		default:
			return err
		}
		if chunks++; chunks%64 == 0 {
			if err := w.ctx.Err(); err != nil {
				return err
			}
		}
	}
}

func (w *window) wants(no int) bool {
	return !w.full && no >= w.start && no < w.start+w.limit
}

// finish formats one complete line if it is in the window.
func (w *window) finish(no int, line []byte) {
	if !w.wants(no) {
		return
	}
	line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
	cut := len(line) > maxLineBytes
	if cut {
		line = trimPartialRune(line[:maxLineBytes])
	}
	text := strings.ToValidUTF8(string(line), "\uFFFD")
	if cut {
		text += " … [line cut]"
	}
	formatted := fmt.Sprintf("%6d\t%s\n", no, text)
	// The first line is always shown, so a small cap never yields nothing.
	if w.end > 0 && w.out.Len()+len(formatted) > w.cap {
		w.full = true
		return
	}
	if cut {
		w.cutLines++
	}
	w.out.WriteString(formatted)
	w.end = no
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of b, left
// there by cutting at a byte count.
func trimPartialRune(b []byte) []byte {
	for i := 1; i < utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			return b
		}
	}
	return b
}
