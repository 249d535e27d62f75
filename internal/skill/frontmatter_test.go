package skill

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		meta Meta
		body string
		err  string // substring; "" means no error
	}{
		{
			name: "minimal",
			in:   "---\nname: release\ndescription: Cut a release.\n---\n# Releasing\n\nSteps.\n",
			meta: Meta{Name: "release", Description: "Cut a release."},
			body: "# Releasing\n\nSteps.\n",
		},
		{
			name: "all fields, comments, crlf, bom",
			in: "\uFEFF---\r\n# a comment\r\nname: deploy # trailing comment\r\ndescription: \"Deploy: with a colon\"\r\nversion: 1.0\r\ntags: [ops, ci]\r\n" +
				"license: Apache-2.0\r\ncompatibility: needs git\r\nallowed-tools: Bash(git:*) Read\r\nmetadata:\r\n  author: me\r\n  v: 2\r\n---\r\n\r\nbody\r\n",
			meta: Meta{Name: "deploy", Description: "Deploy: with a colon", Version: "1.0", Tags: []string{"ops", "ci"},
				License: "Apache-2.0", Compatibility: "needs git", AllowedTools: []string{"Bash(git:*)", "Read"}, Metadata: map[string]string{"author": "me", "v": "2"}},
			body: "body\n",
		},
		{
			name: "quoted",
			in:   "---\nname: 'it''s'\ndescription: \"say \\\"hi\\\" \\u00e9\\tx # not a comment\"\nversion: '2' # c\n---\n",
			meta: Meta{Name: "", Description: "say \"hi\" é\tx # not a comment", Version: "2"},
			err:  `invalid name "it's"`,
		},
		{
			name: "quoted name",
			in:   "---\nname: \"pdf-tools\"\ndescription: 'Work with PDFs'\n---\n",
			meta: Meta{Name: "pdf-tools", Description: "Work with PDFs"},
		},
		{
			name: "multi-line quoted",
			in:   "---\nname: x\ndescription: \"first\n  second\n\n  third \\\n  joined\"\n---\n",
			meta: Meta{Name: "x", Description: "first second\nthird joined"},
		},
		{
			name: "flow list with quotes",
			in:   "---\nname: x\ndescription: d\ntags: [\"a, b\", 'c', d e , ]\n---\n",
			meta: Meta{Name: "x", Description: "d", Tags: []string{"a, b", "c", "d e"}},
		},
		{
			name: "empty flow list",
			in:   "---\nname: x\ndescription: d\ntags: []\n---\n",
			meta: Meta{Name: "x", Description: "d"},
		},
		{
			name: "block list at key indentation",
			in:   "---\ntags:\n- a\n- b\nname: x\ndescription: d\nallowed-tools: [Read, Grep]\n---\n",
			meta: Meta{Name: "x", Description: "d", Tags: []string{"a", "b"}, AllowedTools: []string{"Read", "Grep"}},
		},
		{
			name: "tags as a plain string",
			in:   "---\nname: x\ndescription: d\ntags: a, b\n---\n",
			meta: Meta{Name: "x", Description: "d", Tags: []string{"a", "b"}},
		},
		{
			name: "literal and folded block scalars",
			in:   "---\nname: x\ndescription: >-\n  Use when\n  deploying.\n\n  Never on Fridays.\nversion: |\n  3\n---\n",
			meta: Meta{Name: "x", Description: "Use when deploying.\nNever on Fridays.", Version: "3"},
		},
		{
			name: "unknown keys with nested values are ignored",
			in:   "---\nname: x\nother:\n  author: me\n  nested:\n    - [1, 2]\nlist:\n- a: 1\ndescription: d\n---\n",
			meta: Meta{Name: "x", Description: "d"},
		},
		{
			name: "null values",
			in:   "---\nname: x\ndescription: ~\nversion:\ntags:\n---\n",
			meta: Meta{Name: "x"},
			err:  "no description",
		},
		{
			name: "dots end front matter",
			in:   "---\nname: x\ndescription: d\n...\nbody",
			meta: Meta{Name: "x", Description: "d"},
			body: "body",
		},
		{name: "no front matter", in: "# Just Markdown\n", body: "# Just Markdown\n", err: "does not start with front matter"},
		{name: "empty file", in: "", err: "does not start with front matter"},
		{name: "no closing ---", in: "---\nname: x\ndescription: d\n", err: "not closed by a --- line"},
		{name: "missing name", in: "---\ndescription: d\n---\n", meta: Meta{Description: "d"}, err: "no name"},
		{name: "missing description", in: "---\nname: x\n---\n", meta: Meta{Name: "x"}, err: "front matter has no description"},
		{name: "missing both", in: "---\n---\n", err: "no name\nfront matter has no description"},
		{name: "bad name", in: "---\nname: has space\ndescription: d\n---\n", meta: Meta{Description: "d"}, err: `invalid name "has space"`},
		{name: "uppercase name", in: "---\nname: Release\ndescription: d\n---\n", meta: Meta{Description: "d"}, err: `invalid name "Release"`},
		{name: "double hyphen", in: "---\nname: a--b\ndescription: d\n---\n", meta: Meta{Description: "d"}, err: "invalid name"},
		{name: "trailing hyphen", in: "---\nname: a-\ndescription: d\n---\n", meta: Meta{Description: "d"}, err: "invalid name"},
		{name: "name too long", in: "---\nname: " + strings.Repeat("a", 65) + "\ndescription: d\n---\n", meta: Meta{Description: "d"}, err: "invalid name"},
		{name: "description too long", in: "---\nname: x\ndescription: " + strings.Repeat("é", 1025) + "\n---\n", meta: Meta{Name: "x", Description: strings.Repeat("é", 1025)}, err: "description is 1025 characters long; at most 1024"},
		{name: "compatibility too long", in: "---\nname: x\ndescription: d\ncompatibility: " + strings.Repeat("c", 501) + "\n---\n", meta: Meta{Name: "x", Description: "d", Compatibility: strings.Repeat("c", 501)}, err: "compatibility is 501"},
		{name: "not YAML: no colon", in: "---\nname x\n---\n", err: "line 2: front matter must be a map"},
		{name: "bad YAML: colon in plain scalar", in: "---\nname: x\ndescription: Deploy: now\n---\n", err: "front matter is not valid YAML: line 3: mapping values are not allowed"},
		{name: "bad YAML: unterminated quote", in: "---\nname: x\ndescription: \"open\n---\n", err: "front matter is not valid YAML"},
		{name: "bad YAML: unclosed flow list", in: "---\nname: x\ndescription: d\ntags: [a, b\n---\n", err: "front matter is not valid YAML"},
		{name: "bad YAML: tab indentation", in: "---\nname: x\ndescription: d\ntags:\n\t- a\n---\n", err: "front matter is not valid YAML"},
		{name: "top-level list", in: "---\n- a\n---\n", err: "front matter must be a map"},
		{name: "duplicate key", in: "---\nname: a\nname: b\ndescription: d\n---\n", meta: Meta{Name: "a", Description: "d"}, err: `line 3: duplicate key "name"`},
		{name: "map for a string", in: "---\nname: x\ndescription:\n  a: b\n---\n", meta: Meta{Name: "x"}, err: "line 4: description must be a string, not a map"},
		{name: "list for a string", in: "---\nname: [a]\ndescription: d\n---\n", meta: Meta{Description: "d"}, err: "name must be a string, not a list"},
		{name: "list of maps", in: "---\nname: x\ndescription: d\ntags:\n  - a: 1\n---\n", meta: Meta{Name: "x", Description: "d"}, err: "list items must be strings"},
		{name: "metadata not a map", in: "---\nname: x\ndescription: d\nmetadata: [a]\n---\n", meta: Meta{Name: "x", Description: "d"}, err: "metadata: must be a map"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			meta, body, err := Parse(tt.in)
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("err = %v, want %q", err, tt.err)
			}
			if !reflect.DeepEqual(meta, tt.meta) {
				t.Errorf("meta = %#v\nwant %#v", meta, tt.meta)
			}
			if tt.body != "" && body != tt.body {
				t.Errorf("body = %q, want %q", body, tt.body)
			}
		})
	}
}

func TestParseNoFrontMatterIsDistinct(t *testing.T) {
	_, body, err := Parse("hello")
	if !errors.Is(err, ErrNoFrontMatter) || body != "hello" {
		t.Errorf("got %q, %v", body, err)
	}
}

// Whatever the input, Parse returns instead of panicking.
func TestParseNeverPanics(t *testing.T) {
	pieces := []string{"---", "name:", " x", "'", "\"", "\\", "[", "]", "{", "|", ">-", "- ", "#", ":", "\n", "  ", "\t", "a", ",", "\\u12", "...", "|+9"}
	var b strings.Builder
	for i := range 20000 {
		b.Reset()
		b.WriteString("---\n")
		n := i
		for range 12 {
			b.WriteString(pieces[n%len(pieces)])
			n = n/len(pieces) + i*7 + 3
		}
		b.WriteString("\n---\n")
		Parse(b.String())
	}
}

func FuzzParse(f *testing.F) {
	f.Add("---\nname: x\ndescription: |\n  a\n---\n")
	f.Add("---\ntags: ['a', \"b\"]\n---\n")
	f.Fuzz(func(t *testing.T, s string) { Parse(s) })
}
