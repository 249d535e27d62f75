package api

// Inbound triggers (issue 17, h17-hooks): POST /hooks/{id}, signed with the
// trigger's secret, queues a run whose prompt is the trigger's template
// filled with the request's JSON body; /api/triggers configures them.

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/hook"
	"github.com/caduceus-dev/caduceus/internal/httpguard"
	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// Codes of the hook routes.
const (
	CodeSignatureMissing  = "signature_missing"  // 401: no or malformed timestamp and signature headers
	CodeSignatureInvalid  = "signature_invalid"  // 401: the signature does not match (or no such trigger)
	CodeSignatureStale    = "signature_stale"    // 401: the timestamp is outside ±5 minutes
	CodeSignatureReplayed = "signature_replayed" // 401: this signature was already used
	CodeTriggerDisabled   = "trigger_disabled"   // 409
	CodeTemplateFailed    = "template_failed"    // 422: the body does not fill the template
	CodeHooksUnavailable  = "hooks_unavailable"  // 503: no key to seal or open secrets with
	CodeInvalidURL        = "invalid_url"        // 400
)

// MaxTriggerBody bounds an inbound trigger's body.
const MaxTriggerBody = 1 << 20

// newSecret is a fresh signing secret: 32 random bytes as hex.
func newSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand never fails on supported platforms
	return "whsec_" + hex.EncodeToString(b)
}

// fireTrigger: POST /hooks/{id}. Nothing is queued unless the signature
// is valid, fresh and not seen before; a refusal is logged without the
// body.
func (a *API) fireTrigger(w http.ResponseWriter, r *http.Request) {
	tid := r.PathValue("id")
	refuse := func(code, msg string) {
		a.log.Warn("trigger refused", "trigger", tid, "code", code, "remote", r.RemoteAddr)
		writeError(w, http.StatusUnauthorized, code, msg, nil)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxTriggerBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, httpguard.CodeBodyTooLarge, "a trigger's body is at most 1 MiB", nil)
			return
		}
		writeError(w, http.StatusBadRequest, control.CodeInvalidInput, "could not read the request body", nil)
		return
	}
	// An unknown trigger is answered as a bad signature: the caller learns
	// nothing about which ids exist.
	var tr store.Trigger
	if id.Valid("trg", tid) {
		tr, err = a.st.GetTrigger(r.Context(), tid)
	} else {
		err = store.ErrNotFound
	}
	if errors.Is(err, store.ErrNotFound) {
		refuse(CodeSignatureInvalid, "the signature does not match")
		return
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	secret, ok := a.openHookSecret(w, r, tr.SecretSealed, hook.SecretContext("trigger", tr.ID))
	if !ok {
		return
	}
	now := a.opt.Now()
	sig := r.Header.Get(hook.HeaderSignature)
	switch err := hook.Verify(secret, r.Header.Get(hook.HeaderTimestamp), sig, body, now); {
	case errors.Is(err, hook.ErrNoSignature):
		refuse(CodeSignatureMissing, "send X-Caduceus-Timestamp (Unix seconds) and X-Caduceus-Signature (sha256=<hex HMAC-SHA256 of \"<timestamp>.<body>\">)")
		return
	case errors.Is(err, hook.ErrStale):
		refuse(CodeSignatureStale, "the timestamp is more than five minutes from the server's clock")
		return
	case err != nil:
		refuse(CodeSignatureInvalid, "the signature does not match")
		return
	}
	var fresh bool
	err = a.st.Write(r.Context(), func(tx store.Tx) error {
		var err error
		// Twice the window: a signature stays refused as long as its
		// timestamp could still pass.
		fresh, err = tx.SeeTriggerSignature(r.Context(), tr.ID, strings.TrimSpace(sig), now, now.Add(-2*hook.Window))
		return err
	})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if !fresh {
		refuse(CodeSignatureReplayed, "this signature was already used; sign each call anew")
		return
	}
	if !tr.Enabled {
		writeError(w, http.StatusConflict, CodeTriggerDisabled, "the trigger is disabled", nil)
		return
	}
	prompt, err := hook.Fill(tr.Template, body)
	if err != nil {
		writeError(w, http.StatusUnprocessableEntity, CodeTemplateFailed, err.Error(), nil)
		return
	}
	by := &event.Actor{Kind: "trigger", Name: tr.Name}
	sid := tr.SessionID
	if tr.SessionPolicy == store.SessionAccumulate && sid != "" {
		if _, err := a.st.GetSession(r.Context(), sid); errors.Is(err, store.ErrNotFound) {
			sid = "" // deleted since: the next call makes another
		}
	}
	if tr.SessionPolicy == store.SessionNew || sid == "" {
		s, err := a.svc.CreateSession(r.Context(), control.NewSession{Title: tr.Name, Workspace: tr.Workspace, ProfileID: tr.ProfileID})
		if err != nil {
			a.fail(w, r, err)
			return
		}
		sid = s.ID
		if tr.SessionPolicy == store.SessionAccumulate {
			// Two first calls at once: the write that comes second finds
			// the other's session kept and uses it; its own, still empty,
			// goes.
			kept := sid
			err := a.st.Write(r.Context(), func(tx store.Tx) error {
				cur, err := tx.GetTrigger(r.Context(), tr.ID)
				if err != nil {
					return err
				}
				if cur.SessionID != "" && cur.SessionID != tr.SessionID {
					kept = cur.SessionID
					return nil
				}
				cur.SessionID, cur.UpdatedAt = sid, now
				return tx.UpdateTrigger(r.Context(), cur)
			})
			if err != nil {
				a.failHook(w, r, err, "trigger")
				return
			}
			if kept != sid {
				if err := a.svc.DeleteSession(r.Context(), sid); err != nil {
					a.log.Warn("trigger: remove the spare session", "session", sid, "err", err)
				}
				sid = kept
			}
		}
	}
	ru, err := a.svc.Send(r.Context(), sid, control.Message{Content: prompt, IfBusy: control.IfBusyEnqueue, By: by})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.log.Info("trigger queued a run", "trigger", tr.ID, "session", sid, "run", ru.ID)
	writeJSON(w, http.StatusAccepted, map[string]string{"run_id": ru.ID, "session_id": sid})
}

// openHookSecret opens a webhook's or trigger's sealed secret, answering
// 503 when the server has no key.
func (a *API) openHookSecret(w http.ResponseWriter, r *http.Request, sealed, context string) (string, bool) {
	if a.opt.HookKeys == nil {
		writeError(w, http.StatusServiceUnavailable, CodeHooksUnavailable, "webhooks and triggers are not configured on this server", nil)
		return "", false
	}
	box, err := a.opt.HookKeys(false)
	if err == nil {
		var s string
		if s, err = box.Open(sealed, context); err == nil {
			return s, true
		}
	}
	a.log.Error("hook secret", "err", err)
	writeError(w, http.StatusServiceUnavailable, CodeHooksUnavailable, "the secret cannot be opened with this server's key", nil)
	return "", false
}

// sealHookSecret seals a new secret, making the key when the server has
// none yet (SQLite).
func (a *API) sealHookSecret(w http.ResponseWriter, r *http.Request, secret, context string) (string, bool) {
	if a.opt.HookKeys == nil {
		writeError(w, http.StatusServiceUnavailable, CodeHooksUnavailable, "webhooks and triggers are not configured on this server", nil)
		return "", false
	}
	box, err := a.opt.HookKeys(true)
	if err == nil {
		var s string
		if s, err = box.Seal(secret, context); err == nil {
			return s, true
		}
	}
	a.log.Error("hook secret", "err", err)
	writeError(w, http.StatusServiceUnavailable, CodeHooksUnavailable, "no key to seal the secret with: "+err.Error(), nil)
	return "", false
}

// triggerView is a trigger as the API shows it: the secret only once, in
// the answer that made it.
type triggerView struct {
	ID             string     `json:"id"`
	Name           string     `json:"name"`
	PromptTemplate string     `json:"prompt_template"`
	ProfileID      string     `json:"profile_id,omitempty"`
	Workspace      string     `json:"workspace,omitempty"`
	SessionPolicy  string     `json:"session_policy"`
	SessionID      string     `json:"session_id,omitempty"`
	Enabled        bool       `json:"enabled"`
	Secret         string     `json:"secret,omitempty"`
	URL            string     `json:"url"` // the path to POST to
	CreatedAt      event.Time `json:"created_at"`
	UpdatedAt      event.Time `json:"updated_at"`
}

func viewTrigger(t store.Trigger) triggerView {
	return triggerView{ID: t.ID, Name: t.Name, PromptTemplate: t.Template, ProfileID: t.ProfileID, Workspace: t.Workspace,
		SessionPolicy: t.SessionPolicy, SessionID: t.SessionID, Enabled: t.Enabled, URL: "/hooks/" + t.ID,
		CreatedAt: event.Time{Time: t.CreatedAt}, UpdatedAt: event.Time{Time: t.UpdatedAt}}
}

type triggerInput struct {
	Name           *string `json:"name"`
	PromptTemplate *string `json:"prompt_template"`
	ProfileID      *string `json:"profile_id"`
	Workspace      *string `json:"workspace"`
	SessionPolicy  *string `json:"session_policy"`
	Enabled        *bool   `json:"enabled"`
	// RotateSecret (PATCH) makes a new secret, shown in the answer.
	RotateSecret bool `json:"rotate_secret"`
}

// apply checks in and writes it over t; a bad field is an error naming it.
func (a *API) applyTrigger(r *http.Request, t *store.Trigger, in triggerInput) error {
	bad := func(msg string) error { return &control.Error{Code: control.CodeInvalidInput, Message: msg} }
	if in.Name != nil {
		t.Name = strings.TrimSpace(*in.Name)
	}
	if t.Name == "" || len(t.Name) > 200 {
		return bad("name is required (at most 200 bytes)")
	}
	if in.PromptTemplate != nil {
		t.Template = *in.PromptTemplate
	}
	if _, err := hook.ParseTemplate(t.Template); err != nil || len(t.Template) > 64<<10 {
		return bad("prompt_template must be a text/template of at most 64 KiB: " + errText(err))
	}
	if in.ProfileID != nil {
		t.ProfileID = *in.ProfileID
	}
	if t.ProfileID != "" {
		if _, err := a.st.GetProfile(r.Context(), t.ProfileID); err != nil {
			return &control.Error{Code: control.CodeProfileNotFound, Message: "no such profile"}
		}
	}
	if in.Workspace != nil {
		t.Workspace = *in.Workspace
	}
	if in.SessionPolicy != nil {
		t.SessionPolicy = *in.SessionPolicy
	}
	if t.SessionPolicy == "" {
		t.SessionPolicy = store.SessionNew
	}
	if t.SessionPolicy != store.SessionNew && t.SessionPolicy != store.SessionAccumulate {
		return bad("session_policy must be new or accumulate")
	}
	if in.Enabled != nil {
		t.Enabled = *in.Enabled
	}
	return nil
}

func errText(err error) string {
	if err == nil {
		return "too long"
	}
	return err.Error()
}

// createTrigger: POST /api/triggers.
func (a *API) createTrigger(w http.ResponseWriter, r *http.Request) {
	var in triggerInput
	if !decode(w, r, &in) {
		return
	}
	now := a.opt.Now()
	t := store.Trigger{ID: id.New("trg"), Enabled: true, CreatedAt: now, UpdatedAt: now}
	if err := a.applyTrigger(r, &t, in); err != nil {
		a.fail(w, r, err)
		return
	}
	secret := newSecret()
	sealed, ok := a.sealHookSecret(w, r, secret, hook.SecretContext("trigger", t.ID))
	if !ok {
		return
	}
	t.SecretSealed = sealed
	if err := a.st.Write(r.Context(), func(tx store.Tx) error { return tx.InsertTrigger(r.Context(), t) }); err != nil {
		a.fail(w, r, err)
		return
	}
	v := viewTrigger(t)
	v.Secret = secret
	writeJSON(w, http.StatusCreated, v)
}

func (a *API) listTriggers(w http.ResponseWriter, r *http.Request) {
	ts, err := a.st.ListTriggers(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := make([]triggerView, len(ts))
	for i, t := range ts {
		out[i] = viewTrigger(t)
	}
	writeJSON(w, http.StatusOK, map[string]any{"triggers": out})
}

func (a *API) getTrigger(w http.ResponseWriter, r *http.Request) {
	tid, ok := pathID(w, r, "trg", "trigger")
	if !ok {
		return
	}
	t, err := a.st.GetTrigger(r.Context(), tid)
	if err != nil {
		a.failHook(w, r, err, "trigger")
		return
	}
	writeJSON(w, http.StatusOK, viewTrigger(t))
}

// patchTrigger: PATCH /api/triggers/{id}; the fields given change, and
// rotate_secret makes a new secret shown in the answer.
func (a *API) patchTrigger(w http.ResponseWriter, r *http.Request) {
	tid, ok := pathID(w, r, "trg", "trigger")
	if !ok {
		return
	}
	var in triggerInput
	if !decode(w, r, &in) {
		return
	}
	t, err := a.st.GetTrigger(r.Context(), tid)
	if err != nil {
		a.failHook(w, r, err, "trigger")
		return
	}
	if err := a.applyTrigger(r, &t, in); err != nil {
		a.fail(w, r, err)
		return
	}
	var secret string
	if in.RotateSecret {
		secret = newSecret()
		if t.SecretSealed, ok = a.sealHookSecret(w, r, secret, hook.SecretContext("trigger", t.ID)); !ok {
			return
		}
	}
	t.UpdatedAt = a.opt.Now()
	if err := a.st.Write(r.Context(), func(tx store.Tx) error { return tx.UpdateTrigger(r.Context(), t) }); err != nil {
		a.fail(w, r, err)
		return
	}
	v := viewTrigger(t)
	v.Secret = secret
	writeJSON(w, http.StatusOK, v)
}

func (a *API) deleteTrigger(w http.ResponseWriter, r *http.Request) {
	tid, ok := pathID(w, r, "trg", "trigger")
	if !ok {
		return
	}
	if _, err := a.st.GetTrigger(r.Context(), tid); err != nil {
		a.failHook(w, r, err, "trigger")
		return
	}
	if err := a.st.Write(r.Context(), func(tx store.Tx) error { return tx.DeleteTrigger(r.Context(), tid) }); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// failHook is fail with an unknown webhook or trigger answered 404.
func (a *API) failHook(w http.ResponseWriter, r *http.Request, err error, what string) {
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, control.CodeNotFound, what+" not found", nil)
		return
	}
	a.fail(w, r, err)
}
