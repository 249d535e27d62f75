package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider"
)

// NameEditFile is the edit_file tool.
const NameEditFile = "edit_file"

const (
	// editMaxBytes bounds the files edit_file loads: the file, its new
	// content and their diff are all held in memory.
	editMaxBytes = 10 << 20
	// editDiffCap bounds the diff returned to the model; a replace_all over
	// a large file could otherwise flood its context.
	editDiffCap = 32 << 10
	// editListedLines is how many line numbers of an ambiguous match are
	// named; enough to pick the right one, few enough to read.
	editListedLines = 10
)

// EditFileData is the structured result of edit_file.
type EditFileData struct {
	OK   bool    `json:"ok"`
	File FileRef `json:"file"`
	// Area spans the changed lines of the resulting file; for a pure
	// deletion, the line now at the place of the deleted ones.
	Area         LineArea `json:"area"`
	Replacements int      `json:"replacements"`
	// Diff is a unified diff of the edit (a/<path>, b/<path>, 3 lines of
	// context), cut at editDiffCap bytes when DiffTruncated is set.
	Diff          string `json:"diff"`
	DiffTruncated bool   `json:"diff_truncated,omitempty"`
}

type editArgs struct {
	Path string `json:"path"`
	// Pointers tell a missing argument (a mistake) from an empty string:
	// an empty new_string deletes old_string.
	OldString  *string `json:"old_string"`
	NewString  *string `json:"new_string"`
	ReplaceAll bool    `json:"replace_all"`
}

type editFile struct{}

// NewEditFile returns the edit_file tool.
func NewEditFile(Config) Tool { return editFile{} }

const editSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File path relative to the workspace root. The file must exist."},
    "old_string": {"type": "string", "description": "The exact text to replace, including whitespace and indentation, without read_file's line numbers. It must occur exactly once unless replace_all is set; include surrounding lines to make it unique."},
    "new_string": {"type": "string", "description": "The replacement text; empty to delete old_string. Must differ from old_string."},
    "replace_all": {"type": "boolean", "description": "Replace every occurrence of old_string instead of exactly one. Default false."}
  },
  "required": ["path", "old_string", "new_string"],
  "additionalProperties": false
}`

func (editFile) Spec() provider.ToolSpec {
	return provider.ToolSpec{
		Name: NameEditFile,
		Description: "Edit a file by exact string replacement: old_string is replaced by new_string. " +
			"Fails without changing the file when old_string is not found or is ambiguous. Returns a unified diff of the change.",
		Parameters: json.RawMessage(editSchema),
	}
}

func (editFile) Label(args json.RawMessage) string {
	var a editArgs
	if err := decodeArgs(args, &a); err != nil || strings.TrimSpace(a.Path) == "" {
		return "edit (invalid arguments)"
	}
	return "edit " + truncate(filepath.ToSlash(filepath.Clean(a.Path)), 120)
}

func (editFile) Intent(args json.RawMessage) Intent {
	var a editArgs
	if err := decodeArgs(args, &a); err != nil || validateEdit(a) != nil {
		return Intent{Effect: EffectWrite, Action: "edit_file " + truncate(string(args), 500), Invalid: true}
	}
	return Intent{Effect: EffectWrite, Action: "edit " + a.Path, Paths: []string{a.Path}}
}

func validateEdit(a editArgs) error {
	switch {
	case strings.TrimSpace(a.Path) == "":
		return errors.New("path is required")
	case a.OldString == nil:
		return errors.New("old_string is required")
	case *a.OldString == "":
		return errors.New("old_string must not be empty; to write a whole file use write_file")
	case a.NewString == nil:
		return errors.New("new_string is required (use \"\" to delete old_string)")
	case *a.OldString == *a.NewString:
		return errors.New("old_string and new_string are identical; nothing would change")
	}
	return nil
}

func (editFile) Run(ctx context.Context, env Env, args json.RawMessage) (Result, error) {
	ws, err := useWorkspace(env)
	if err != nil {
		return Result{}, err
	}
	defer ws.Close()
	var a editArgs
	if err := decodeArgs(args, &a); err != nil {
		return invalidArgs(err), nil
	}
	if err := validateEdit(a); err != nil {
		return invalidArgs(err), nil
	}
	oldS, newS := *a.OldString, *a.NewString

	// Edit through a symlink inside the workspace rather than replace it by
	// a file: real is where it leads.
	rel, real, err := ws.resolve(a.Path)
	if err != nil {
		return pathFailure(err), nil
	}
	f, fi, err := ws.openRead(real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errorResult("%s does not exist; use write_file to create it", rel), nil
	case err != nil:
		return rootFailure(fmt.Errorf("cannot edit %s: %w", rel, describeWriteErr(err)), a.Path), nil
	case fi.IsDir():
		return errorResult("%s is a directory, not a file", rel), nil
	case f == nil:
		return errorResult("%s is not a regular file", rel), nil
	}
	defer f.Close()
	if fi.Size() > editMaxBytes {
		return errorResult("%s is too large to edit (%d bytes, limit %d); use run_command with a suitable tool", rel, fi.Size(), editMaxBytes), nil
	}
	raw, err := io.ReadAll(io.LimitReader(f, editMaxBytes+1))
	switch {
	case err != nil:
		return errorResult("cannot read %s: %v", rel, bareErr(err)), nil
	case len(raw) > editMaxBytes:
		return errorResult("%s is too large to edit (over %d bytes); use run_command with a suitable tool", rel, editMaxBytes), nil
	}
	if bytes.IndexByte(raw[:min(len(raw), binarySniff)], 0) >= 0 {
		return errorResult("%s looks like a binary file; edit_file only changes text", rel), nil
	}
	content := string(raw)

	n := strings.Count(content, oldS)
	switch {
	case n == 0:
		return errorResult("%s", notFoundMessage(content, oldS, rel)), nil
	case n > 1 && !a.ReplaceAll:
		return errorResult("old_string occurs %d times in %s (%s); include more surrounding lines to make it unique, or set replace_all to change every occurrence",
			n, rel, matchLines(content, oldS, n)), nil
	}
	if !a.ReplaceAll {
		n = 1
	}
	updated := strings.Replace(content, oldS, newS, n)

	if err := ctx.Err(); err != nil {
		return Result{Status: event.ToolCancelled, Output: "cancelled before writing"}, nil
	}
	if err := atomicReplace(ws.root, real, []byte(updated), fi.Mode().Perm()); err != nil {
		return rootFailure(fmt.Errorf("cannot write %s: %w", rel, describeWriteErr(err)), a.Path), nil
	}

	before, after := splitLines(content), splitLines(updated)
	changes := diffLines(before, after)
	diff, cut := capDiff(unifiedDiff(rel, before, after, changes))
	data := EditFileData{
		OK:            true,
		File:          FileRef{Path: a.Path, ViewerPath: rel},
		Area:          changedArea(changes, len(after)),
		Replacements:  n,
		Diff:          diff,
		DiffTruncated: cut,
	}
	var out strings.Builder
	fmt.Fprintf(&out, "Edited %s: replaced %s", rel, nounCount(n, "occurrence"))
	switch ar := data.Area; {
	case ar.StartLine == 0:
	case ar.StartLine == ar.EndLine:
		fmt.Fprintf(&out, " at line %d", ar.StartLine)
	default:
		fmt.Fprintf(&out, " at lines %d-%d", ar.StartLine, ar.EndLine)
	}
	out.WriteString(".\n\n")
	out.WriteString(diff)
	return Result{Status: event.ToolOK, Output: strings.TrimRight(out.String(), "\n"), Data: data}, nil
}

// changedArea is the range of lines of the new file the changes touch,
// 1-based and inclusive. A pure deletion has no new lines; the line that
// took their place stands for it, so a viewer still has somewhere to look.
func changedArea(changes []lineChange, lines int) LineArea {
	if len(changes) == 0 || lines == 0 {
		return LineArea{}
	}
	start, end := changes[0].B0+1, changes[len(changes)-1].B1
	if end < start {
		start = min(start, lines)
		end = start
	}
	return LineArea{StartLine: start, EndLine: end}
}

// capDiff cuts a long diff at a line boundary.
func capDiff(diff string) (string, bool) {
	if len(diff) <= editDiffCap {
		return diff, false
	}
	cut := strings.LastIndexByte(diff[:editDiffCap], '\n') + 1
	return diff[:cut] + fmt.Sprintf("… [diff cut at %d of %d bytes; read the file to see the rest]\n", cut, len(diff)), true
}

// matchLines names the lines where the first occurrences of s start.
func matchLines(content, s string, n int) string {
	var nums []string
	line, from := 1, 0
	for len(nums) < editListedLines {
		i := strings.Index(content[from:], s)
		if i < 0 {
			break
		}
		line += strings.Count(content[from:from+i], "\n")
		nums = append(nums, fmt.Sprint(line))
		line += strings.Count(s, "\n")
		from += i + len(s)
	}
	text := "lines " + strings.Join(nums, ", ")
	if n > len(nums) {
		text += fmt.Sprintf(", and %d more", n-len(nums))
	}
	return text
}

// lineNumberPrefix matches read_file's "     12\t" line prefix, which models
// sometimes copy into old_string.
var lineNumberPrefix = regexp.MustCompile(`(?m)^ *\d+\t`)

// notFoundMessage explains a missing old_string, with a hint at the usual
// causes: different whitespace (indentation, tabs, CRLF line endings) or
// line numbers copied from read_file.
func notFoundMessage(content, old, rel string) string {
	msg := fmt.Sprintf("old_string was not found in %s; the file is unchanged", rel)
	if line := looseFind(content, old); line > 0 {
		return msg + fmt.Sprintf(". It matches near line %d if whitespace is ignored, so the whitespace differs "+
			"(indentation, tabs or spaces, line endings); read those lines again and copy them exactly", line)
	}
	if lineNumberPrefix.MatchString(old) {
		stripped := lineNumberPrefix.ReplaceAllString(old, "")
		if strings.Contains(content, stripped) || looseFind(content, stripped) > 0 {
			return msg + ". old_string seems to include the line numbers read_file shows; leave them out"
		}
	}
	return msg + ". Read the file again and copy old_string exactly"
}

// looseFind looks for old in content with every run of whitespace treated
// as one space, and returns the 1-based line where the match starts, or 0.
func looseFind(content, old string) int {
	needle := collapseSpace(strings.TrimSpace(old))
	if needle == "" {
		return 0
	}
	hay := collapseSpace(content)
	i := strings.Index(hay, needle)
	if i < 0 {
		return 0
	}
	// Find the original offset of collapsed byte i by collapsing again; done
	// once, so no offset table the size of the file is needed.
	j, inSpace := 0, false
	for off := 0; off < len(content); off++ {
		if isSpaceByte(content[off]) {
			if inSpace {
				continue
			}
			inSpace = true
		} else {
			inSpace = false
		}
		if j == i {
			return 1 + strings.Count(content[:off], "\n")
		}
		j++
	}
	return 0
}

func collapseSpace(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	inSpace := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isSpaceByte(c) {
			if !inSpace {
				b.WriteByte(' ')
			}
			inSpace = true
			continue
		}
		inSpace = false
		b.WriteByte(c)
	}
	return b.String()
}

func isSpaceByte(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\v', '\f':
		return true
	}
	return false
}
