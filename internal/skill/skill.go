// Package skill finds the skills an agent may load: instructions for a
// kind of task, written by people (or by the agent) as Markdown, that the
// model reads only when a task calls for them, so the system prompt does
// not pay for every skill on every call.
//
// A skill is a directory holding a SKILL.md that starts with front matter
// (see Parse):
//
//	---
//	name: release
//	description: How to cut a release of this project; use when asked to release or tag.
//	license: MIT
//	metadata:
//	  author: ops
//	---
//	# Releasing
//	...
//
// The directory's name must be the skill's name (the agentskills.io
// format). And, optionally, other files the instructions refer to (scripts,
// templates, references). A Library looks for skill directories directly
// under each of its directories, e.g. <data-dir>/skills and
// <workspace>/.caduceus/skills. When two skills share a name, the one in
// the earlier directory wins and the other is reported as shadowed.
//
// Load names a skill's other files relative to its directory. The model
// can read them with read_file only when that directory lies inside its
// workspace (a workspace skill); files of skills elsewhere, such as the
// data directory, are listed so the model knows of them, but the file tools
// cannot open them.
package skill

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Limits on what a Library reads, so a stray large file cannot cost much.
const (
	// MaxSkillBytes bounds a SKILL.md; larger ones are refused by Load and
	// listed with an error.
	MaxSkillBytes = 1 << 20
	// MaxFiles bounds the other files Load lists.
	MaxFiles = 200
)

// File is the name of a skill's instructions file.
const File = "SKILL.md"

// Errors of Load; test with errors.Is.
var (
	ErrNotFound = errors.New("no such skill")
	ErrBroken   = errors.New("skill cannot be loaded")
)

// Skill describes one skill as listed.
type Skill struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Version     string   `json:"version,omitempty"`
	Tags        []string `json:"tags,omitempty"`
	// The optional fields of the agentskills format.
	License       string            `json:"license,omitempty"`
	Compatibility string            `json:"compatibility,omitempty"`
	AllowedTools  []string          `json:"allowed_tools,omitempty"`
	Metadata      map[string]string `json:"metadata,omitempty"`
	// Path is the skill's directory.
	Path string `json:"path"`
	// Error says why the skill cannot be used (bad or missing front
	// matter, a name other than the directory's, unreadable SKILL.md).
	// Name is always the directory's name.
	Error string `json:"error,omitempty"`
	// Shadowed lists the directories of later skills with the same name,
	// which this one hides.
	Shadowed []string `json:"shadowed,omitempty"`
}

// Loaded is a skill's instructions and the files beside them.
type Loaded struct {
	Skill
	// Body is SKILL.md after its front matter.
	Body string `json:"body"`
	// Files are the skill directory's other files, relative to Path with
	// forward slashes, sorted; hidden files and directories are left out.
	Files []string `json:"files,omitempty"`
	// MoreFiles is set when there were more than MaxFiles.
	MoreFiles bool `json:"more_files,omitempty"`
}

// Library is a read-only view of skill directories. It reads the disk on
// every call, so skills added or edited meanwhile are seen; it is safe for
// concurrent use.
type Library struct {
	dirs []string
	// only, when not nil, limits the skills listed and loaded to these
	// names (a profile's enabled skills).
	only map[string]bool
}

// New returns a library over dirs, in precedence order. Directories that
// do not exist are allowed and simply hold no skills.
func New(dirs ...string) *Library {
	l := &Library{}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if abs, err := filepath.Abs(d); err == nil {
			d = abs
		}
		l.dirs = append(l.dirs, filepath.Clean(d))
	}
	return l
}

// Only returns a view of l that lists and loads only the named skills;
// with no names it is l itself (every skill).
func (l *Library) Only(names ...string) *Library {
	if len(names) == 0 {
		return l
	}
	only := make(map[string]bool, len(names))
	for _, n := range names {
		only[n] = true
	}
	return &Library{dirs: l.dirs, only: only}
}

// Dirs returns the library's directories in precedence order.
func (l *Library) Dirs() []string { return slices.Clone(l.dirs) }

// List returns the skills sorted by name, broken ones included (with
// Error set). A directory that cannot be read is skipped and reported in
// the error, alongside the skills of the others.
func (l *Library) List() ([]Skill, error) {
	var (
		out   []Skill
		index = map[string]int{}
		errs  []error
	)
	for _, root := range l.dirs {
		found, err := scan(root)
		if err != nil {
			errs = append(errs, err)
		}
		for _, s := range found {
			if l.only != nil && !l.only[s.Name] {
				continue
			}
			if i, dup := index[s.Name]; dup {
				out[i].Shadowed = append(out[i].Shadowed, s.Path)
				continue
			}
			index[s.Name] = len(out)
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b Skill) int { return strings.Compare(a.Name, b.Name) })
	return out, errors.Join(errs...)
}

// Load returns the named skill with its body and other files. A skill
// listed with an error is not loaded (ErrBroken), nor is an unknown one
// (ErrNotFound).
func (l *Library) Load(name string) (Loaded, error) {
	skills, err := l.List()
	i := slices.IndexFunc(skills, func(s Skill) bool { return s.Name == name })
	if i < 0 {
		if err != nil {
			return Loaded{}, fmt.Errorf("%w %q (%v)", ErrNotFound, name, err)
		}
		return Loaded{}, fmt.Errorf("%w %q", ErrNotFound, name)
	}
	s := skills[i]
	if s.Error != "" {
		return Loaded{Skill: s}, fmt.Errorf("%w: %s: %s", ErrBroken, name, s.Error)
	}
	content, err := readSkillFile(s.Path)
	if err != nil {
		return Loaded{Skill: s}, fmt.Errorf("%w: %s: %v", ErrBroken, name, err)
	}
	_, body, err := Parse(content)
	if err != nil {
		// Changed on disk since List.
		return Loaded{Skill: s}, fmt.Errorf("%w: %s: %v", ErrBroken, name, err)
	}
	files, more := otherFiles(s.Path)
	return Loaded{Skill: s, Body: body, Files: files, MoreFiles: more}, nil
}

// scan lists the skills directly under root, in directory order.
func scan(root string) ([]Skill, error) {
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("skills: %w", err)
	}
	var out []Skill
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		dir := filepath.Join(root, e.Name())
		// Stat follows symlinks: linking a skill in is a normal way to
		// share one.
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		if _, err := os.Lstat(filepath.Join(dir, File)); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		out = append(out, describe(dir))
	}
	return out, nil
}

// describe reads a skill directory's front matter; problems become the
// skill's Error, never a failure of the listing.
func describe(dir string) Skill {
	s := Skill{Name: filepath.Base(dir), Path: dir}
	content, err := readSkillFile(dir)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	meta, _, err := Parse(content)
	if err == nil {
		err = MatchFolder(meta.Name, s.Name)
	}
	s.Description, s.Version, s.Tags = meta.Description, meta.Version, meta.Tags
	s.License, s.Compatibility, s.AllowedTools, s.Metadata = meta.License, meta.Compatibility, meta.AllowedTools, meta.Metadata
	if err != nil {
		s.Error = strings.ReplaceAll(err.Error(), "\n", "; ")
	}
	return s
}

// MatchFolder checks the agentskills rule that a skill's name is its
// folder's name. A mismatched skill is listed under its folder's name, so
// two folders can never claim one name by accident.
func MatchFolder(name, folder string) error {
	if name != folder {
		return fmt.Errorf("name %q does not match the skill's folder %q", name, folder)
	}
	return nil
}

func readSkillFile(dir string) (string, error) {
	f, err := os.Open(filepath.Join(dir, File))
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %v", File, bare(err))
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", File)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxSkillBytes+1))
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %v", File, bare(err))
	}
	if len(b) > MaxSkillBytes {
		return "", fmt.Errorf("%s is larger than %d KiB", File, MaxSkillBytes>>10)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD"), nil
}

// bare drops the absolute path of an *fs.PathError: errors end up in front
// of the model, which has no business with the runner's directories.
func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// otherFiles lists the files of a skill directory except SKILL.md, hidden
// entries and dependency caches, at most MaxFiles of them.
func otherFiles(dir string) (files []string, more bool) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return nil
		}
		name := d.Name()
		if strings.HasPrefix(name, ".") || name == "node_modules" || name == "__pycache__" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == File {
			return nil
		}
		if len(files) == MaxFiles {
			more = true
			return filepath.SkipAll
		}
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	return files, more
}
