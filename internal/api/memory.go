package api

// Memory (issue 16, h16-memory): a person curates what an agent profile
// remembers: its notes and its profile of the user, the entries the
// memory tool keeps and every run of the profile sees in its system
// prompt.

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"unicode/utf8"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/memory"
)

// Memory error codes: the change was refused and nothing changed.
const (
	CodeMemoryEmpty   = "memory_empty"    // no text
	CodeMemoryTooLong = "memory_too_long" // over memory.MaxEntryChars
	CodeMemoryFull    = "memory_full"     // the target would exceed memory.MaxFileChars
	CodeMemorySecret  = "memory_secret"   // the text looks like a credential
	CodeMemoryControl = "memory_control"  // control characters
	CodeMemoryTarget  = "memory_target"   // target is not "notes" or "user"
)

type memoryEntryView struct {
	// ID names the entry by its target and text: an entry changed
	// meanwhile (by the agent, or another person) is not found rather
	// than overwritten.
	ID     string `json:"id"`
	Target string `json:"target"`
	Text   string `json:"text"`
	Chars  int    `json:"chars"`
}

type memoryTargetView struct {
	Target  string            `json:"target"`
	Entries []memoryEntryView `json:"entries"`
	Chars   int               `json:"chars"` // memory.Size of the entries
	Limit   int               `json:"limit"` // memory.MaxFileChars
}

type memoryView struct {
	ProfileID     string             `json:"profile_id"`
	Targets       []memoryTargetView `json:"targets"`
	MaxEntryChars int                `json:"max_entry_chars"`
}

func memoryEntryID(t memory.Target, text string) string {
	sum := sha256.Sum256([]byte(string(t) + "\n" + text))
	return hex.EncodeToString(sum[:8])
}

func newMemoryTargetView(t memory.Target, entries []string) memoryTargetView {
	v := memoryTargetView{Target: string(t), Entries: make([]memoryEntryView, len(entries)), Chars: memory.Size(entries), Limit: memory.MaxFileChars}
	for i, e := range entries {
		v.Entries[i] = memoryEntryView{ID: memoryEntryID(t, e), Target: string(t), Text: e, Chars: utf8.RuneCountInString(e)}
	}
	return v
}

// profileMemory is the memory of the live profile the path names.
func (a *API) profileMemory(w http.ResponseWriter, r *http.Request) (string, *memory.Store, bool) {
	pid, ok := pathID(w, r, "prf", "profile")
	if !ok {
		return "", nil, false
	}
	p, err := a.st.GetProfile(r.Context(), pid)
	if err == nil && !p.Live() {
		writeError(w, http.StatusNotFound, control.CodeNotFound, "profile not found", nil)
		return "", nil, false
	}
	if err != nil {
		a.fail(w, r, err)
		return "", nil, false
	}
	return pid, memory.InStore(a.st, pid, nil), true
}

func (a *API) readMemory(w http.ResponseWriter, r *http.Request, pid string, m *memory.Store) (memoryView, bool) {
	v := memoryView{ProfileID: pid, MaxEntryChars: memory.MaxEntryChars}
	for _, t := range memory.Targets() {
		entries, err := m.List(r.Context(), t)
		if err != nil {
			a.fail(w, r, err)
			return v, false
		}
		v.Targets = append(v.Targets, newMemoryTargetView(t, entries))
	}
	return v, true
}

func (a *API) getMemory(w http.ResponseWriter, r *http.Request) {
	pid, m, ok := a.profileMemory(w, r)
	if !ok {
		return
	}
	if v, ok := a.readMemory(w, r, pid, m); ok {
		writeJSON(w, http.StatusOK, v)
	}
}

// getMemoryPrompt answers exactly the text a run of the profile gets in
// its system prompt from memory ("" when it has none).
func (a *API) getMemoryPrompt(w http.ResponseWriter, r *http.Request) {
	pid, m, ok := a.profileMemory(w, r)
	if !ok {
		return
	}
	text, err := m.Render(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"profile_id": pid, "text": text})
}

type memoryInput struct {
	Target string `json:"target"`
	Text   string `json:"text"`
}

func (a *API) addMemory(w http.ResponseWriter, r *http.Request) {
	pid, m, ok := a.profileMemory(w, r)
	if !ok {
		return
	}
	var in memoryInput
	if !decode(w, r, &in) {
		return
	}
	t, err := memory.ParseTarget(in.Target)
	if err != nil {
		writeError(w, http.StatusBadRequest, CodeMemoryTarget, `target must be "notes" or "user"`, nil)
		return
	}
	if _, err := m.Add(r.Context(), t, in.Text); err != nil {
		a.failMemory(w, r, err)
		return
	}
	text, _ := memory.Clean(in.Text) // Add accepted it
	a.answerMemory(w, r, http.StatusCreated, pid, m, t, text)
}

// entryOf finds the entry the path names in either target.
func (a *API) entryOf(w http.ResponseWriter, r *http.Request, m *memory.Store) (memory.Target, string, bool) {
	want := r.PathValue("entry")
	for _, t := range memory.Targets() {
		entries, err := m.List(r.Context(), t)
		if err != nil {
			a.fail(w, r, err)
			return "", "", false
		}
		for _, e := range entries {
			if memoryEntryID(t, e) == want {
				return t, e, true
			}
		}
	}
	writeError(w, http.StatusNotFound, control.CodeNotFound, "memory entry not found; it may have been changed meanwhile: reload the list", nil)
	return "", "", false
}

func (a *API) patchMemory(w http.ResponseWriter, r *http.Request) {
	pid, m, ok := a.profileMemory(w, r)
	if !ok {
		return
	}
	var in struct {
		Text string `json:"text"`
	}
	if !decode(w, r, &in) {
		return
	}
	t, old, ok := a.entryOf(w, r, m)
	if !ok {
		return
	}
	if _, err := m.ReplaceEntry(r.Context(), t, old, in.Text); err != nil {
		a.failMemory(w, r, err)
		return
	}
	text, _ := memory.Clean(in.Text) // ReplaceEntry accepted it
	a.answerMemory(w, r, http.StatusOK, pid, m, t, text)
}

func (a *API) deleteMemory(w http.ResponseWriter, r *http.Request) {
	pid, m, ok := a.profileMemory(w, r)
	if !ok {
		return
	}
	t, old, ok := a.entryOf(w, r, m)
	if !ok {
		return
	}
	if _, err := m.RemoveEntry(r.Context(), t, old); err != nil {
		a.failMemory(w, r, err)
		return
	}
	// The removed entry is answered so a client can offer to undo.
	a.answerMemory(w, r, http.StatusOK, pid, m, t, old)
}

// answerMemory writes the entry a change concerns and the whole memory
// after it.
func (a *API) answerMemory(w http.ResponseWriter, r *http.Request, status int, pid string, m *memory.Store, t memory.Target, entry string) {
	v, ok := a.readMemory(w, r, pid, m)
	if !ok {
		return
	}
	writeJSON(w, status, map[string]any{
		"entry":  memoryEntryView{ID: memoryEntryID(t, entry), Target: string(t), Text: entry, Chars: utf8.RuneCountInString(entry)},
		"memory": v,
	})
}

// failMemory words the memory's refusals with stable codes; the store's
// messages are addressed to the model but read well to a person too.
func (a *API) failMemory(w http.ResponseWriter, r *http.Request, err error) {
	for _, c := range []struct {
		err  error
		code string
	}{
		{memory.ErrEmpty, CodeMemoryEmpty}, {memory.ErrTooLong, CodeMemoryTooLong}, {memory.ErrFull, CodeMemoryFull},
		{memory.ErrSecret, CodeMemorySecret}, {memory.ErrControl, CodeMemoryControl},
	} {
		if errors.Is(err, c.err) {
			writeError(w, http.StatusBadRequest, c.code, err.Error(), nil)
			return
		}
	}
	if errors.Is(err, memory.ErrNoMatch) {
		writeError(w, http.StatusNotFound, control.CodeNotFound, "memory entry not found; it may have been changed meanwhile: reload the list", nil)
		return
	}
	a.fail(w, r, err)
}
