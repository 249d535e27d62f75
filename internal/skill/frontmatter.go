package skill

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Meta is what a SKILL.md's front matter says about the skill, in the
// agentskills.io format: name and description are required; license,
// compatibility, allowed-tools and metadata are optional. version and tags
// are read too, as skills written for this project before used them.
type Meta struct {
	Name          string            `json:"name"`
	Description   string            `json:"description"`
	License       string            `json:"license,omitempty"`
	Compatibility string            `json:"compatibility,omitempty"`
	AllowedTools  []string          `json:"allowed_tools,omitempty"`
	Metadata      map[string]string `json:"metadata,omitempty"`
	Version       string            `json:"version,omitempty"`
	Tags          []string          `json:"tags,omitempty"`
}

// ErrNoFrontMatter reports a SKILL.md that does not start with a "---"
// line.
var ErrNoFrontMatter = errors.New("SKILL.md does not start with front matter (a --- line, name: and description:, and a closing --- line)")

// Limits of the agentskills format.
const (
	// MaxNameLen bounds a skill's name.
	MaxNameLen = 64
	// MaxDescriptionLen bounds a skill's description.
	MaxDescriptionLen = 1024
	// MaxCompatibilityLen bounds the compatibility field.
	MaxCompatibilityLen = 500
)

// Parse splits a SKILL.md into its front matter and its body (the Markdown
// after the closing "---", leading blank lines removed, line breaks as
// "\n"), and checks the front matter against the agentskills format.
//
// The front matter is YAML (go.yaml.in/yaml/v3): a map whose keys other
// than the ones Meta holds are ignored. Line numbers in errors count from
// the first line of the file.
//
// On error, Meta holds what could be read, so a broken skill can still be
// listed under the name and description it declares; a name that breaks
// the rules is left out.
func Parse(content string) (Meta, string, error) {
	content = strings.TrimPrefix(content, "\uFEFF")
	content = strings.ReplaceAll(content, "\r\n", "\n")
	lines := strings.Split(content, "\n")
	if strings.TrimRight(lines[0], " \t") != "---" {
		return Meta{}, content, ErrNoFrontMatter
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if l := strings.TrimRight(lines[i], " \t"); l == "---" || l == "..." {
			end = i
			break
		}
	}
	if end < 0 {
		return Meta{}, "", errors.New("front matter is not closed by a --- line")
	}
	body := strings.TrimLeft(strings.Join(lines[end+1:], "\n"), "\n")

	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(strings.Join(lines[1:end], "\n")), &doc); err != nil {
		return Meta{}, body, yamlError(err)
	}
	meta, err := toMeta(&doc)
	return meta, body, err
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// yamlError rewrites the library's message so its line numbers count from
// the top of SKILL.md (the front matter starts on line 2).
func yamlError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = yamlLine.ReplaceAllStringFunc(msg, func(s string) string {
		n, _ := strconv.Atoi(strings.TrimPrefix(s, "line "))
		return "line " + strconv.Itoa(n+1)
	})
	return fmt.Errorf("front matter is not valid YAML: %s", strings.ReplaceAll(msg, "\n", "; "))
}

func toMeta(doc *yaml.Node) (Meta, error) {
	var (
		m    Meta
		errs []error
	)
	root := doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	fail := func(n *yaml.Node, format string, a ...any) {
		errs = append(errs, fmt.Errorf("line %d: %s", n.Line+1, fmt.Sprintf(format, a...)))
	}
	switch {
	case root.Kind == yaml.DocumentNode: // empty front matter
	case root.Kind != yaml.MappingNode:
		fail(root, "front matter must be a map of key: value lines")
	default:
		seen := map[string]bool{}
		for i := 0; i+1 < len(root.Content); i += 2 {
			k, v := root.Content[i], root.Content[i+1]
			if seen[k.Value] {
				fail(k, "duplicate key %q", k.Value)
				continue
			}
			seen[k.Value] = true
			str := func(dst *string) {
				switch {
				case isNull(v):
				case v.Kind == yaml.ScalarNode:
					*dst = strings.TrimSpace(v.Value)
				default:
					fail(v, "%s must be a string, not a %s", k.Value, kindName(v))
				}
			}
			switch k.Value {
			case "name":
				str(&m.Name)
			case "description":
				str(&m.Description)
			case "license":
				str(&m.License)
			case "compatibility":
				str(&m.Compatibility)
			case "version":
				str(&m.Version)
			case "tags":
				// Lenient: "tags: a, b" means what it looks like.
				m.Tags = list(v, func(s string) []string { return strings.Split(s, ",") }, func(msg string) { fail(v, "tags: %s", msg) })
			case "allowed-tools":
				// The format writes them space-separated; a list is accepted too.
				m.AllowedTools = list(v, strings.Fields, func(msg string) { fail(v, "allowed-tools: %s", msg) })
			case "metadata":
				m.Metadata = stringMap(v, func(msg string) { fail(v, "metadata: %s", msg) })
			}
		}
	}
	switch {
	case m.Name == "":
		errs = append(errs, errors.New("front matter has no name"))
	case !ValidName(m.Name):
		errs = append(errs, fmt.Errorf("invalid name %q: use up to %d lowercase letters, digits and single hyphens, not starting or ending with a hyphen", m.Name, MaxNameLen))
		m.Name = ""
	}
	switch n := utf8.RuneCountInString(m.Description); {
	case n == 0:
		errs = append(errs, errors.New("front matter has no description"))
	case n > MaxDescriptionLen:
		errs = append(errs, fmt.Errorf("description is %d characters long; at most %d are allowed", n, MaxDescriptionLen))
	}
	if n := utf8.RuneCountInString(m.Compatibility); n > MaxCompatibilityLen {
		errs = append(errs, fmt.Errorf("compatibility is %d characters long; at most %d are allowed", n, MaxCompatibilityLen))
	}
	return m, errors.Join(errs...)
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.MappingNode:
		return "map"
	case yaml.AliasNode:
		return "alias"
	}
	return "scalar"
}

// list reads a list of strings, or a single string cut by split.
func list(v *yaml.Node, split func(string) []string, fail func(string)) []string {
	var out []string
	switch {
	case isNull(v):
	case v.Kind == yaml.ScalarNode:
		for _, s := range split(v.Value) {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	case v.Kind == yaml.SequenceNode:
		for _, item := range v.Content {
			if item.Kind != yaml.ScalarNode || isNull(item) {
				fail("list items must be strings, found a " + kindName(item))
				return nil
			}
			if s := strings.TrimSpace(item.Value); s != "" {
				out = append(out, s)
			}
		}
	default:
		fail("must be a list or a string, not a " + kindName(v))
	}
	return out
}

// stringMap reads a map of string to string.
func stringMap(v *yaml.Node, fail func(string)) map[string]string {
	if isNull(v) {
		return nil
	}
	if v.Kind != yaml.MappingNode {
		fail("must be a map, not a " + kindName(v))
		return nil
	}
	out := map[string]string{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		if k.Kind != yaml.ScalarNode || val.Kind != yaml.ScalarNode {
			fail("keys and values must be strings")
			return nil
		}
		out[k.Value] = val.Value
	}
	return out
}

// ValidName reports whether s is a skill name the agentskills format
// allows: 1 to MaxNameLen lowercase letters, digits and hyphens, no hyphen
// first, last or twice in a row. A name is also a directory name, so the
// rule keeps every name a safe path element.
func ValidName(s string) bool {
	if s == "" || len(s) > MaxNameLen || s[0] == '-' || s[len(s)-1] == '-' || strings.Contains(s, "--") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}
