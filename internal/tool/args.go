package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/caduceus-dev/caduceus/internal/event"
)

// decodeArgs parses a tool call's arguments strictly: unknown fields are
// refused to match the schemas' additionalProperties:false, so a misspelt
// argument is reported instead of silently ignored. Empty or null arguments
// mean "{}", which some models send for tools without required fields.
func decodeArgs(raw json.RawMessage, v any) error {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		trimmed = []byte("{}")
	}
	if trimmed[0] != '{' {
		return errors.New("arguments must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return describeJSONError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("unexpected data after the arguments object")
	}
	return nil
}

// describeJSONError rewrites encoding/json errors in terms of the schema
// (field names and JSON types) rather than Go struct names.
func describeJSONError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return errors.New("arguments must be a JSON object")
		}
		return fmt.Errorf("field %q must be %s, got %s", te.Field, jsonKind(te.Type), te.Value)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("malformed JSON at byte %d: %v", se.Offset, se)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("malformed JSON: unexpected end of input")
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	return errors.New(msg)
}

func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array of " + strings.TrimPrefix(strings.TrimPrefix(jsonKind(t.Elem()), "a "), "an ") + "s"
	default:
		return "an object"
	}
}

// count applies an optional positive count argument: 0 (absent) means def,
// values above max are capped (the schema says so; models overshoot), and
// a negative value is a mistake reported as invalid arguments.
func count(name string, v, def, max int) (int, error) {
	switch {
	case v < 0:
		return 0, fmt.Errorf("%s must be at least 1", name)
	case v == 0:
		return def, nil
	}
	return min(v, max), nil
}

func invalidArgs(err error) Result {
	return Result{Status: event.ToolError, Output: "invalid arguments: " + err.Error()}
}

func errorResult(format string, a ...any) Result {
	return Result{Status: event.ToolError, Output: fmt.Sprintf(format, a...)}
}

// pathFailure turns a workspace path error into a result: escapes are denied,
// anything else is an ordinary error the model can act on.
func pathFailure(err error) Result {
	var pe *PathError
	if errors.As(err, &pe) {
		return Result{Status: event.ToolDenied, Output: "denied: " + pe.Error() + "; only files inside the workspace are accessible"}
	}
	return errorResult("%v", err)
}

// checkWorkspace reports a misconfigured Env. That is a fault of the
// machinery, not of the model's call, so tools return it as an error.
func checkWorkspace(env Env) error {
	if env.Workspace == "" {
		return errors.New("tool: no workspace configured")
	}
	fi, err := os.Stat(env.Workspace)
	if err != nil {
		return fmt.Errorf("tool: workspace: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("tool: workspace %s is not a directory", env.Workspace)
	}
	return nil
}

// useWorkspace checks env's workspace and opens it; the caller closes it.
// Its errors, like checkWorkspace's, are the machinery's.
func useWorkspace(env Env) (*workspaceFS, error) {
	if err := checkWorkspace(env); err != nil {
		return nil, err
	}
	w, err := openWorkspace(env.Workspace)
	if err != nil {
		return nil, fmt.Errorf("tool: %w", err)
	}
	return w, nil
}

// bareErr drops the absolute path an *fs.PathError carries: the model
// knows the path it asked for, and runner paths are none of its business.
func bareErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// truncate shortens s to at most n runes, marking the cut with "…".
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// firstLine returns the first line of s and whether there were more.
func firstLine(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimRight(s[:i], "\r"), true
	}
	return s, false
}
