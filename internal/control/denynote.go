package control

import (
	"strings"
	"unicode/utf8"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// MaxNoteBytes bounds a deny's note: it is a short instruction, not a
// message (those have /steer and the composer).
const MaxNoteBytes = 16 << 10

// validateNote checks the note of a response: only a deny of an approval
// carries one.
func validateNote(q store.Request, choice, note string) (string, error) {
	note = strings.TrimSpace(note)
	if note == "" {
		return "", nil
	}
	if q.Kind != store.KindApproval || choice != ChoiceDeny {
		return "", errorf(CodeInvalidInput, "note goes only with choice deny of an approval")
	}
	if len(note) > MaxNoteBytes || !utf8.ValidString(note) {
		return "", errorf(CodeInvalidInput, "note must be UTF-8 text of at most %d bytes", MaxNoteBytes)
	}
	return note, nil
}

// DenialResult is the tool result a model receives for a call a person
// denied with a note.
func DenialResult(by *event.Actor, note string) string {
	who := "the user"
	if by != nil && by.Kind != "local" && by.Name != "" {
		who = by.Name
	}
	return "Denied by " + who + ": " + note
}
