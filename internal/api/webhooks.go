package api

// Outgoing webhooks (issue 17, h17-hooks): /api/webhooks configures where
// runs' ends are posted, tests a webhook and lists its delivery attempts.

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/hook"
	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// checkHookURL refuses a webhook address that is not absolute http(s).
// Any host is allowed: the admin configuring it decides what the server
// may reach, internal addresses included (docs/API.md says so).
func checkHookURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(raw) > 2048 {
		return &control.Error{Code: CodeInvalidURL, Message: "the url must be an absolute http:// or https:// address of at most 2048 bytes"}
	}
	return nil
}

type webhookView struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	URL       string     `json:"url"`
	Kind      string     `json:"kind"`
	Events    []string   `json:"events"`
	SessionID string     `json:"session_id,omitempty"`
	ProfileID string     `json:"profile_id,omitempty"`
	Enabled   bool       `json:"enabled"`
	Signed    bool       `json:"signed"`           // it has a signing secret
	Secret    string     `json:"secret,omitempty"` // only in the answer that made it
	CreatedAt event.Time `json:"created_at"`
	UpdatedAt event.Time `json:"updated_at"`
}

func viewWebhook(h store.Webhook) webhookView {
	ev := h.Events
	if len(ev) == 0 {
		ev = hook.Events()
	}
	return webhookView{ID: h.ID, Name: h.Name, URL: h.URL, Kind: h.Kind, Events: ev, SessionID: h.SessionID, ProfileID: h.ProfileID,
		Enabled: h.Enabled, Signed: h.SecretSealed != "", CreatedAt: event.Time{Time: h.CreatedAt}, UpdatedAt: event.Time{Time: h.UpdatedAt}}
}

type webhookInput struct {
	Name      *string   `json:"name"`
	URL       *string   `json:"url"`
	Kind      *string   `json:"kind"`
	Events    *[]string `json:"events"`
	SessionID *string   `json:"session_id"`
	ProfileID *string   `json:"profile_id"`
	Enabled   *bool     `json:"enabled"`
	// RotateSecret (PATCH) makes a new signing secret, shown in the answer.
	RotateSecret bool `json:"rotate_secret"`
}

func (a *API) applyWebhook(r *http.Request, h *store.Webhook, in webhookInput) error {
	bad := func(msg string) error { return &control.Error{Code: control.CodeInvalidInput, Message: msg} }
	if in.Name != nil {
		h.Name = strings.TrimSpace(*in.Name)
	}
	if h.Name == "" || len(h.Name) > 200 {
		return bad("name is required (at most 200 bytes)")
	}
	if in.URL != nil {
		h.URL = strings.TrimSpace(*in.URL)
	}
	if err := checkHookURL(h.URL); err != nil {
		return err
	}
	if in.Kind != nil {
		h.Kind = *in.Kind
	}
	if h.Kind == "" {
		h.Kind = store.WebhookJSON
	}
	if h.Kind != store.WebhookJSON && h.Kind != store.WebhookSlack {
		return bad("kind must be json or slack")
	}
	if in.Events != nil {
		h.Events = nil
		for _, e := range *in.Events {
			if !slices.Contains(hook.Events(), e) {
				return bad("events are completed, failed and expired")
			}
			if !slices.Contains(h.Events, e) {
				h.Events = append(h.Events, e)
			}
		}
	}
	if in.SessionID != nil {
		h.SessionID = *in.SessionID
	}
	if h.SessionID != "" {
		if _, err := a.st.GetSession(r.Context(), h.SessionID); err != nil {
			return &control.Error{Code: control.CodeInvalidInput, Message: "session_id names no session"}
		}
	}
	if in.ProfileID != nil {
		h.ProfileID = *in.ProfileID
	}
	if h.ProfileID != "" {
		if _, err := a.st.GetProfile(r.Context(), h.ProfileID); err != nil {
			return &control.Error{Code: control.CodeProfileNotFound, Message: "profile_id names no profile"}
		}
	}
	if in.Enabled != nil {
		h.Enabled = *in.Enabled
	}
	return nil
}

// createWebhook: POST /api/webhooks. A json webhook gets a signing secret,
// shown once in the answer; a Slack one is unsigned.
func (a *API) createWebhook(w http.ResponseWriter, r *http.Request) {
	var in webhookInput
	if !decode(w, r, &in) {
		return
	}
	now := a.opt.Now()
	h := store.Webhook{ID: id.New("wh"), Enabled: true, CreatedAt: now, UpdatedAt: now}
	if err := a.applyWebhook(r, &h, in); err != nil {
		a.fail(w, r, err)
		return
	}
	var secret string
	if h.Kind == store.WebhookJSON {
		secret = newSecret()
		var ok bool
		if h.SecretSealed, ok = a.sealHookSecret(w, r, secret, hook.SecretContext("webhook", h.ID)); !ok {
			return
		}
	}
	if err := a.st.Write(r.Context(), func(tx store.Tx) error { return tx.InsertWebhook(r.Context(), h) }); err != nil {
		a.fail(w, r, err)
		return
	}
	v := viewWebhook(h)
	v.Secret = secret
	writeJSON(w, http.StatusCreated, v)
}

func (a *API) listWebhooks(w http.ResponseWriter, r *http.Request) {
	hs, err := a.st.ListWebhooks(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := make([]webhookView, len(hs))
	for i, h := range hs {
		out[i] = viewWebhook(h)
	}
	writeJSON(w, http.StatusOK, map[string]any{"webhooks": out})
}

func (a *API) webhookOf(w http.ResponseWriter, r *http.Request) (store.Webhook, bool) {
	hid, ok := pathID(w, r, "wh", "webhook")
	if !ok {
		return store.Webhook{}, false
	}
	h, err := a.st.GetWebhook(r.Context(), hid)
	if err != nil {
		a.failHook(w, r, err, "webhook")
		return h, false
	}
	return h, true
}

func (a *API) getWebhook(w http.ResponseWriter, r *http.Request) {
	if h, ok := a.webhookOf(w, r); ok {
		writeJSON(w, http.StatusOK, viewWebhook(h))
	}
}

// patchWebhook: PATCH /api/webhooks/{id}; the fields given change. A
// webhook turned json without a secret, or rotate_secret, gets a new one
// shown in the answer; one turned slack drops its secret.
func (a *API) patchWebhook(w http.ResponseWriter, r *http.Request) {
	var in webhookInput
	h, ok := a.webhookOf(w, r)
	if !ok || !decode(w, r, &in) {
		return
	}
	if err := a.applyWebhook(r, &h, in); err != nil {
		a.fail(w, r, err)
		return
	}
	var secret string
	switch {
	case h.Kind == store.WebhookSlack:
		h.SecretSealed = ""
	case in.RotateSecret || h.SecretSealed == "":
		secret = newSecret()
		if h.SecretSealed, ok = a.sealHookSecret(w, r, secret, hook.SecretContext("webhook", h.ID)); !ok {
			return
		}
	}
	h.UpdatedAt = a.opt.Now()
	if err := a.st.Write(r.Context(), func(tx store.Tx) error { return tx.UpdateWebhook(r.Context(), h) }); err != nil {
		a.fail(w, r, err)
		return
	}
	v := viewWebhook(h)
	v.Secret = secret
	writeJSON(w, http.StatusOK, v)
}

func (a *API) deleteWebhook(w http.ResponseWriter, r *http.Request) {
	h, ok := a.webhookOf(w, r)
	if !ok {
		return
	}
	if err := a.st.Write(r.Context(), func(tx store.Tx) error { return tx.DeleteWebhook(r.Context(), h.ID) }); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// testWebhook: POST /api/webhooks/{id}/test queues a webhook.test delivery
// (sent even when the webhook is disabled); its outcome shows in the
// deliveries.
func (a *API) testWebhook(w http.ResponseWriter, r *http.Request) {
	h, ok := a.webhookOf(w, r)
	if !ok {
		return
	}
	if a.opt.Hooks == nil {
		writeError(w, http.StatusServiceUnavailable, CodeHooksUnavailable, "this server sends no webhooks", nil)
		return
	}
	d, err := a.opt.Hooks.Test(r.Context(), h)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, viewDelivery(d))
}

type deliveryView struct {
	ID         string     `json:"id"`
	WebhookID  string     `json:"webhook_id"`
	RunID      string     `json:"run_id,omitempty"`
	Event      string     `json:"event"`
	Attempt    int        `json:"attempt"`
	State      string     `json:"state"`
	StatusCode int        `json:"status_code,omitempty"`
	Error      string     `json:"error,omitempty"`
	DurationMS int64      `json:"duration_ms"`
	NextAt     event.Time `json:"next_at"`
	CreatedAt  event.Time `json:"created_at"`
}

func viewDelivery(d store.Delivery) deliveryView {
	return deliveryView{ID: d.ID, WebhookID: d.WebhookID, RunID: d.RunID, Event: d.Event, Attempt: d.Attempt, State: d.State,
		StatusCode: d.StatusCode, Error: d.Error, DurationMS: d.Duration.Milliseconds(), NextAt: event.Time{Time: d.NextAt},
		CreatedAt: event.Time{Time: d.CreatedAt}}
}

// listDeliveries: GET /api/webhooks/{id}/deliveries[?limit=] — the
// attempts, newest first (default 50, at most 500).
func (a *API) listDeliveries(w http.ResponseWriter, r *http.Request) {
	h, ok := a.webhookOf(w, r)
	if !ok {
		return
	}
	limit := 50
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 500 {
			writeError(w, http.StatusBadRequest, control.CodeInvalidInput, "limit must be 1 to 500", nil)
			return
		}
		limit = n
	}
	ds, err := a.st.ListDeliveries(r.Context(), h.ID, limit)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := make([]deliveryView, len(ds))
	for i, d := range ds {
		out[i] = viewDelivery(d)
	}
	writeJSON(w, http.StatusOK, map[string]any{"deliveries": out})
}

// runKey: POST /api/webhooks/run-key shows the key that signs deliveries
// to a run's own webhook_url (made with the server's key when there is
// none yet). POST, not GET: it reveals a secret, so it is asked for, not
// fetched or cached.
func (a *API) runKey(w http.ResponseWriter, r *http.Request) {
	if a.opt.HookKeys == nil {
		writeError(w, http.StatusServiceUnavailable, CodeHooksUnavailable, "webhooks are not configured on this server", nil)
		return
	}
	box, err := a.opt.HookKeys(true)
	if err != nil {
		a.log.Error("run webhook key", "err", err)
		writeError(w, http.StatusServiceUnavailable, CodeHooksUnavailable, "no key to derive the run key from: "+err.Error(), nil)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"key": box.Derive(hook.RunKeyLabel)})
}
