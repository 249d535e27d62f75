package skill

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Stable codes of the errors Dir's changes return (as *Refusal).
const (
	CodeInvalid    = "skill_invalid"     // SKILL.md breaks the format
	CodeExists     = "skill_exists"      // a skill of that name is installed
	CodeNotFound   = "skill_not_found"   // no such skill in the directory
	CodeUnsafePath = "skill_unsafe_path" // a path would land outside the skill's folder
	CodeTooLarge   = "skill_too_large"   // too many files or bytes
	CodeBadArchive = "skill_bad_archive" // not a zip, or a broken one
)

// Refusal is a change Dir refused, with a stable code and a reason meant
// for the person who asked; nothing was written.
type Refusal struct {
	Code   string
	Reason string
}

func (r *Refusal) Error() string { return r.Reason }

func refuse(code, format string, a ...any) *Refusal {
	return &Refusal{Code: code, Reason: fmt.Sprintf(format, a...)}
}

// AsRefusal finds a Refusal in err's chain.
func AsRefusal(err error) (*Refusal, bool) {
	var r *Refusal
	ok := errors.As(err, &r)
	return r, ok
}

// Dir is the one skills directory the operator changes through the
// console (<data-dir>/skills): a Library over it, plus writes. Every write
// lands whole or not at all: files are staged in a hidden folder beside
// the skills (which List skips) and renamed into place.
type Dir struct {
	*Library
	root string
}

// NewDir returns the skills directory root; it is created on first write.
func NewDir(root string) *Dir {
	l := New(root)
	return &Dir{Library: l, root: l.dirs[0]}
}

// Root is the directory's path.
func (d *Dir) Root() string { return d.root }

// path is the folder of the skill name; name must be valid.
func (d *Dir) path(name string) (string, error) {
	if !ValidName(name) {
		return "", refuse(CodeNotFound, "no skill named %q", name)
	}
	return filepath.Join(d.root, name), nil
}

// Raw is a skill's SKILL.md as written, front matter included, and its
// other files, even when the skill is broken (so it can be fixed).
func (d *Dir) Raw(name string) (content string, files []string, err error) {
	p, err := d.path(name)
	if err != nil {
		return "", nil, err
	}
	if _, err := os.Stat(filepath.Join(p, File)); errors.Is(err, fs.ErrNotExist) {
		return "", nil, refuse(CodeNotFound, "no skill named %q", name)
	}
	content, err = readSkillFile(p)
	if err != nil {
		return "", nil, err
	}
	files, _ = otherFiles(p)
	return content, files, nil
}

// Compose writes a SKILL.md from its parts; the front matter is marshalled,
// so any description is quoted as YAML needs.
func Compose(name, description, body string) string {
	fm, _ := yaml.Marshal(struct {
		Name        string `yaml:"name"`
		Description string `yaml:"description"`
	}{name, description}) // a struct of strings always marshals
	return "---\n" + string(fm) + "---\n" + body
}

// check parses content as the SKILL.md of the folder name.
func check(content, folder string) (Meta, error) {
	if len(content) > MaxSkillBytes {
		return Meta{}, refuse(CodeTooLarge, "%s is larger than %d KiB", File, MaxSkillBytes>>10)
	}
	meta, _, err := Parse(content)
	if err == nil && folder != "" {
		err = MatchFolder(meta.Name, folder)
	}
	if err != nil {
		return meta, refuse(CodeInvalid, "%s", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return meta, nil
}

// Create adds a skill whose SKILL.md is content; its name is the one the
// front matter gives.
func (d *Dir) Create(content string) (Meta, error) {
	meta, err := check(content, "")
	if err != nil {
		return meta, err
	}
	return meta, d.install(meta.Name, map[string][]byte{File: []byte(content)})
}

// Update replaces the SKILL.md of the installed skill name; the front
// matter must keep the name (a rename is a new skill).
func (d *Dir) Update(name, content string) (Meta, error) {
	p, err := d.path(name)
	if err != nil {
		return Meta{}, err
	}
	if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
		return Meta{}, refuse(CodeNotFound, "no skill named %q", name)
	}
	meta, err := check(content, name)
	if err != nil {
		return meta, err
	}
	tmp, err := os.CreateTemp(p, ".SKILL.md-*")
	if err != nil {
		return meta, fmt.Errorf("update skill %q: %w", name, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(content); err != nil {
		tmp.Close()
		return meta, fmt.Errorf("update skill %q: %w", name, err)
	}
	if err := tmp.Close(); err != nil {
		return meta, fmt.Errorf("update skill %q: %w", name, err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(p, File)); err != nil {
		return meta, fmt.Errorf("update skill %q: %w", name, err)
	}
	return meta, nil
}

// Delete removes the skill name: its folder, or the link to it when it
// was linked in (the linked folder stays).
func (d *Dir) Delete(name string) error {
	p, err := d.path(name)
	if err != nil {
		return err
	}
	if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
		return refuse(CodeNotFound, "no skill named %q", name)
	}
	// Renamed aside first, so a half-removed folder is never listed.
	aside, err := os.MkdirTemp(d.root, ".deleted-")
	if err != nil {
		return fmt.Errorf("delete skill %q: %w", name, err)
	}
	defer os.RemoveAll(aside)
	if err := os.Rename(p, filepath.Join(aside, name)); err != nil {
		return fmt.Errorf("delete skill %q: %w", name, err)
	}
	return nil
}

// install writes files (slash path → content, already checked) as the
// new skill name.
func (d *Dir) install(name string, files map[string][]byte) error {
	dst, err := d.path(name)
	if err != nil {
		return err
	}
	if _, err := os.Lstat(dst); err == nil {
		return refuse(CodeExists, "a skill named %q is installed; delete it first", name)
	}
	if err := os.MkdirAll(d.root, 0o755); err != nil {
		return fmt.Errorf("install skill %q: %w", name, err)
	}
	stage, err := os.MkdirTemp(d.root, ".install-")
	if err != nil {
		return fmt.Errorf("install skill %q: %w", name, err)
	}
	defer os.RemoveAll(stage)
	for rel, b := range files {
		full := filepath.Join(stage, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return fmt.Errorf("install skill %q: %w", name, err)
		}
		if err := os.WriteFile(full, b, 0o644); err != nil {
			return fmt.Errorf("install skill %q: %w", name, err)
		}
	}
	// Rename does not replace a directory, so a skill of that name
	// installed meanwhile makes this fail rather than be overwritten.
	if err := os.Rename(stage, dst); err != nil {
		if _, lerr := os.Lstat(dst); lerr == nil {
			return refuse(CodeExists, "a skill named %q is installed; delete it first", name)
		}
		return fmt.Errorf("install skill %q: %w", name, err)
	}
	return nil
}
