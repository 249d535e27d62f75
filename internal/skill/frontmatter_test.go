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
			in:   "\uFEFF---\r\n# a comment\r\nname: deploy # trailing comment\r\ndescription: Deploy: with a colon\r\nversion: 1.0\r\ntags: [ops, ci]\r\n---\r\n\r\nbody\r\n",
			meta: Meta{Name: "deploy", Description: "Deploy: with a colon", Version: "1.0", Tags: []string{"ops", "ci"}},
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
			name: "multi-line flow list",
			in:   "---\nname: x\ndescription: d\ntags: [a,\n  b,\n  c]\n---\n",
			meta: Meta{Name: "x", Description: "d", Tags: []string{"a", "b", "c"}},
		},
		{
			name: "empty flow list",
			in:   "---\nname: x\ndescription: d\ntags: []\n---\n",
			meta: Meta{Name: "x", Description: "d"},
		},
		{
			name: "block list, indented and not",
			in:   "---\nname: x\ntags:\n  - one\n  - \"two\" # c\n\n  - three\ndescription: d\n---\n",
			meta: Meta{Name: "x", Description: "d", Tags: []string{"one", "two", "three"}},
		},
		{
			name: "block list at key indentation",
			in:   "---\ntags:\n- a\n- b\nname: x\ndescription: d\n---\n",
			meta: Meta{Name: "x", Description: "d", Tags: []string{"a", "b"}},
		},
		{
			name: "tags as a plain string",
			in:   "---\nname: x\ndescription: d\ntags: a, b\n---\n",
			meta: Meta{Name: "x", Description: "d", Tags: []string{"a", "b"}},
		},
		{
			name: "literal block scalar",
			in:   "---\nname: x\ndescription: |\n  Line one.\n    indented\n\n  Line three.\n\nversion: 3\n---\n",
			meta: Meta{Name: "x", Description: "Line one.\n  indented\n\nLine three.", Version: "3"},
		},
		{
			name: "folded block scalar, strip",
			in:   "---\nname: x\ndescription: >-\n  Use when\n  deploying.\n\n  Never on Fridays.\n---\n",
			meta: Meta{Name: "x", Description: "Use when deploying.\nNever on Fridays."},
		},
		{
			name: "block scalar with explicit indentation and keep",
			in:   "---\nname: x\ndescription: |+2\n   lead\n  body\n\n---\n",
			meta: Meta{Name: "x", Description: "lead\nbody"}, // fields are trimmed
		},
		{
			name: "plain scalar over lines and on the next line",
			in:   "---\nname:\n  x\ndescription: a long\n  description\n  # comment ends it\n---\n",
			meta: Meta{Name: "x", Description: "a long description"},
		},
		{
			name: "unknown keys with nested values are skipped",
			in:   "---\nname: x\nmetadata:\n  author: me\n  nested:\n    - [1, 2]\nallowed-tools: &anchor {a: b}\nlicense: Apache-2.0\nlist:\n- a: 1\ndescription: d\n---\n",
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
		{name: "not closed", in: "---\nname: x\ndescription: d\n", err: "not closed by a --- line"},
		{name: "missing name", in: "---\ndescription: d\n---\n", meta: Meta{Description: "d"}, err: "no name"},
		{name: "missing both", in: "---\n---\n", err: "no name\nfront matter has no description"},
		{name: "bad name", in: "---\nname: has space\ndescription: d\n---\n", meta: Meta{Description: "d"}, err: `invalid name "has space"`},
		{name: "long name", in: "---\nname: " + strings.Repeat("a", 65) + "\ndescription: d\n---\n", meta: Meta{Description: "d"}, err: "invalid name"},
		{name: "no colon", in: "---\nname x\n---\n", err: `line 2: expected key: value, found "name x"`},
		{name: "indented first line", in: "---\n  name: x\n---\n", err: "line 2: unexpected indentation"},
		{name: "top-level list", in: "---\n- a\n---\n", err: "found a list item"},
		{name: "duplicate key", in: "---\nname: a\nname: b\n---\n", meta: Meta{Name: "a"}, err: `line 3: duplicate key "name"`},
		{name: "unterminated quote", in: "---\nname: x\ndescription: \"open\n---\n", meta: Meta{Name: "x"}, err: "line 3: quoted string is not closed"},
		{name: "text after quote", in: "---\nname: 'x' y\n---\n", err: "unexpected text after the quoted string"},
		{name: "bad escape", in: "---\nname: x\ndescription: \"\\q\"\n---\n", meta: Meta{Name: "x"}, err: `unknown escape \q`},
		{name: "unclosed flow list", in: "---\nname: x\ndescription: d\ntags: [a, b\n---\n", meta: Meta{Name: "x", Description: "d"}, err: "list is not closed"},
		{name: "nested flow list", in: "---\nname: x\ndescription: d\ntags: [a, [b]]\n---\n", meta: Meta{Name: "x", Description: "d"}, err: "nested lists"},
		{name: "map for a string", in: "---\nname: x\ndescription:\n  a: b\n---\n", meta: Meta{Name: "x"}, err: "found a map"},
		{name: "flow map for a string", in: "---\nname: {a: b}\n---\n", err: "found a map"},
		{name: "list for a string", in: "---\nname: [a]\ndescription: d\n---\n", meta: Meta{Description: "d"}, err: "name must be a string, not a list"},
		{name: "list of maps", in: "---\nname: x\ndescription: d\ntags:\n  - a: 1\n---\n", meta: Meta{Name: "x", Description: "d"}, err: "list items must be strings"},
		{name: "alias", in: "---\nname: *x\n---\n", err: "anchors, aliases and tags are not supported"},
		{name: "reserved indicator", in: "---\nname: x\ndescription: `d`\n---\n", meta: Meta{Name: "x"}, err: "cannot start with"},
		{name: "tab indentation", in: "---\nname: x\ndescription: d\ntags:\n\t- a\n---\n", meta: Meta{Name: "x", Description: "d"}, err: "tabs"},
		{name: "less indented block scalar", in: "---\nname: x\ndescription: |\n    a\n  b\n---\n", meta: Meta{Name: "x"}, err: "less indented"},
		{name: "block scalar header junk", in: "---\nname: x\ndescription: | junk\n  a\n---\n", meta: Meta{Name: "x"}, err: "after the block scalar indicator"},
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

// Block scalars keep their exact text before the fields are trimmed.
func TestBlockScalarChomping(t *testing.T) {
	tests := []struct{ hdr, want string }{
		{"|", "a\n b\n"},
		{"|-", "a\n b"},
		{"|+", "a\n b\n\n\n"},
		{">", "a\n b\n"},
		{"|1", "a\n b\n"},
	}
	for _, tt := range tests {
		p := &fmParser{lines: []string{" a", "  b", "", "", "next: 1"}}
		v, err := p.value(tt.hdr, 0)
		if err != nil || v.str != tt.want || p.i != 4 {
			t.Errorf("%s: %q, %v, at %d; want %q", tt.hdr, v.str, err, p.i, tt.want)
		}
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
