package checkpoint

import "errors"

// Stable codes of the errors callers can act on; the API layer maps them to
// its own error codes and statuses.
const (
	CodeNotFound     = "checkpoint_not_found"
	CodeInvalidPath  = "invalid_path"
	CodeNotInSpan    = "path_not_in_span"
	CodeBadWorkspace = "invalid_workspace"
	CodeBadRequest   = "invalid_request"
)

// Error is a refusal with a stable code. It matches another *Error with the
// same code under errors.Is, so callers test errors.Is(err, ErrNotFound).
type Error struct {
	Code string
	Msg  string
}

func (e *Error) Error() string { return e.Code + ": " + e.Msg }

// Is matches on the code alone.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Code == e.Code
}

// Sentinels for errors.Is.
var (
	ErrNotFound     = &Error{Code: CodeNotFound}
	ErrInvalidPath  = &Error{Code: CodeInvalidPath}
	ErrNotInSpan    = &Error{Code: CodeNotInSpan}
	ErrBadWorkspace = &Error{Code: CodeBadWorkspace}
	ErrBadRequest   = &Error{Code: CodeBadRequest}
)

func refuse(code, msg string) error { return &Error{Code: code, Msg: msg} }
