package anthropictest

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
)

//go:embed fixtures/*.sse
var fixtures embed.FS

// Fixture returns the raw Messages API stream named name, with or without
// its ".sse" extension (see Fixtures). It panics on an unknown name: a
// test that names a missing fixture is broken, not failing.
//
// The fixtures, all recorded in the shape the API streams:
//
//	text               plain text answer
//	thinking           thinking (thinking_delta + signature_delta), then text
//	redacted_thinking  a redacted_thinking block, then text
//	tool_use           text, then one tool_use with input in several fragments
//	parallel_tools     text, then two tool_use blocks
//	thinking_tool_use  thinking with signature, then a tool_use
//	cache_usage        text with cache read and cache creation tokens
//	error_event        text cut by an overloaded_error event
func Fixture(name string) []byte {
	b, err := fixtures.ReadFile("fixtures/" + strings.TrimSuffix(name, ".sse") + ".sse")
	if err != nil {
		panic(fmt.Sprintf("anthropictest: no fixture %q (have %s)", name, strings.Join(Fixtures(), ", ")))
	}
	return b
}

// Fixtures lists the fixture names, sorted.
func Fixtures() []string {
	ents, _ := fs.ReadDir(fixtures, "fixtures")
	var names []string
	for _, e := range ents {
		names = append(names, strings.TrimSuffix(path.Base(e.Name()), ".sse"))
	}
	slices.Sort(names)
	return names
}
