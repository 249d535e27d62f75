// Package control holds every state transition of runs and human requests.
// The web tier calls it to write intents (start, cancel, respond); the
// runner calls it to claim, wait, resume and finish. Each transition is one
// journal Op: the status change and the events that announce it commit
// together or not at all.
package control

import (
	"errors"
	"fmt"

	"github.com/caduceus-dev/caduceus/internal/store"
)

// Stable error codes. The API maps them to HTTP statuses.
const (
	CodeNotFound      = "not_found"
	CodeInvalidInput  = "invalid_input"
	CodeSessionBusy   = "session_busy"
	CodeNotPending    = "not_pending"
	CodeInvalidChoice = "invalid_choice"
	CodeConflict      = "conflict"
	CodeInvalidCursor = "invalid_cursor"
	CodeNotResumable  = "not_resumable"
	CodeSuperseded    = "superseded"
	// CodeInvalidUTF8 refuses text that is not valid UTF-8: invalid or
	// overlong byte sequences, or a JSON escape of an unpaired surrogate.
	CodeInvalidUTF8 = "invalid_utf8"
	// CodeWorkspaceNotAllowed refuses a session workspace outside every
	// configured workspace root.
	CodeWorkspaceNotAllowed = "workspace_not_allowed"
)

// Error is a failure a client caused and can act on.
type Error struct {
	Code    string
	Message string
	Details map[string]any
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// AsError returns err's *Error, translating store sentinels.
func AsError(err error) (*Error, bool) {
	var ce *Error
	if errors.As(err, &ce) {
		return ce, true
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		return &Error{Code: CodeNotFound, Message: "not found"}, true
	case errors.Is(err, store.ErrBadCursor):
		return &Error{Code: CodeInvalidCursor, Message: "cursor is not valid for this list"}, true
	}
	return nil, false
}
