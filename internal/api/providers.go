package api

// Providers and settings (issue 16, h16-providers): the console's model
// providers and settings. API keys are write-only: every answer shows
// them masked.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/settings"
)

// Settings manages the console's providers and settings
// (internal/settings.Service).
type Settings interface {
	Providers(ctx context.Context) ([]settings.ProviderView, error)
	Provider(ctx context.Context, id string) (settings.ProviderView, error)
	CreateProvider(ctx context.Context, in settings.ProviderInput) (settings.ProviderView, error)
	UpdateProvider(ctx context.Context, id string, in settings.ProviderInput) (settings.ProviderView, error)
	DeleteProvider(ctx context.Context, id string) error
	TestProvider(ctx context.Context, id string) ([]string, error)
	Settings() settings.View
	PatchSettings(ctx context.Context, in map[string]json.RawMessage) (settings.View, error)
}

// CodeSettingsUnavailable answers the routes of a server built without
// a settings service (some tests).
const CodeSettingsUnavailable = "settings_unavailable"

func (a *API) settingsSvc(w http.ResponseWriter) (Settings, bool) {
	if a.opt.Settings == nil {
		writeError(w, http.StatusServiceUnavailable, CodeSettingsUnavailable, "this server keeps no settings", nil)
		return nil, false
	}
	return a.opt.Settings, true
}

// failSettings answers a refusal of the settings service with its code.
func (a *API) failSettings(w http.ResponseWriter, r *http.Request, err error) {
	var se *settings.Error
	if !errors.As(err, &se) {
		a.fail(w, r, err)
		return
	}
	status := http.StatusBadRequest
	switch se.Code {
	case settings.CodeNotFound:
		status = http.StatusNotFound
	case settings.CodeNameTaken, settings.CodeReadOnly:
		status = http.StatusConflict
	case settings.CodeNoSecretKey:
		status = http.StatusServiceUnavailable
	case settings.CodeTestTimeout:
		status = http.StatusGatewayTimeout
	case settings.CodeTestAuth, settings.CodeTestUnreachable, settings.CodeTestFailed:
		status = http.StatusBadGateway
	case settings.CodeKeyDoesNotOpen:
		status = http.StatusConflict
	}
	var details map[string]any
	if se.Field != "" {
		details = map[string]any{"field": se.Field}
	}
	writeError(w, status, se.Code, se.Msg, details)
}

// providerID reads {id}; an id of the wrong shape is a provider not found.
func providerID(w http.ResponseWriter, r *http.Request) (string, bool) {
	v := r.PathValue("id")
	if !id.Valid("prv", v) {
		writeError(w, http.StatusNotFound, settings.CodeNotFound, "provider not found (providers of the environment and config.json have no id and cannot be changed here)", nil)
		return "", false
	}
	return v, true
}

func (a *API) listProviders(w http.ResponseWriter, r *http.Request) {
	svc, ok := a.settingsSvc(w)
	if !ok {
		return
	}
	ps, err := svc.Providers(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"providers": ps})
}

func (a *API) createProvider(w http.ResponseWriter, r *http.Request) {
	svc, ok := a.settingsSvc(w)
	if !ok {
		return
	}
	var in settings.ProviderInput
	if !decode(w, r, &in) {
		return
	}
	p, err := svc.CreateProvider(r.Context(), in)
	if err != nil {
		a.failSettings(w, r, err)
		return
	}
	a.log.Info("provider added", "provider", p.Name, "kind", p.Kind, "by", actorName(r))
	writeJSON(w, http.StatusCreated, p)
}

// providerTarget is the settings service and the provider id a
// /api/providers/{id} route names, or false once it has answered.
func (a *API) providerTarget(w http.ResponseWriter, r *http.Request) (Settings, string, bool) {
	svc, ok := a.settingsSvc(w)
	if !ok {
		return nil, "", false
	}
	pid, ok := providerID(w, r)
	return svc, pid, ok
}

func (a *API) getProvider(w http.ResponseWriter, r *http.Request) {
	svc, pid, ok := a.providerTarget(w, r)
	if !ok {
		return
	}
	p, err := svc.Provider(r.Context(), pid)
	if err != nil {
		a.failSettings(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, p)
}

func (a *API) patchProvider(w http.ResponseWriter, r *http.Request) {
	svc, pid, ok := a.providerTarget(w, r)
	if !ok {
		return
	}
	var in settings.ProviderInput
	if !decode(w, r, &in) {
		return
	}
	p, err := svc.UpdateProvider(r.Context(), pid, in)
	if err != nil {
		a.failSettings(w, r, err)
		return
	}
	a.log.Info("provider changed", "provider", p.Name, "key_changed", in.APIKey != nil, "by", actorName(r))
	writeJSON(w, http.StatusOK, p)
}

func (a *API) deleteProvider(w http.ResponseWriter, r *http.Request) {
	svc, pid, ok := a.providerTarget(w, r)
	if !ok {
		return
	}
	if err := svc.DeleteProvider(r.Context(), pid); err != nil {
		a.failSettings(w, r, err)
		return
	}
	a.log.Info("provider removed", "provider", pid, "by", actorName(r))
	w.WriteHeader(http.StatusNoContent)
}

func (a *API) testProvider(w http.ResponseWriter, r *http.Request) {
	svc, pid, ok := a.providerTarget(w, r)
	if !ok {
		return
	}
	ms, err := svc.TestProvider(r.Context(), pid)
	if err != nil {
		a.failSettings(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "models": ms})
}

func (a *API) getSettings(w http.ResponseWriter, r *http.Request) {
	svc, ok := a.settingsSvc(w)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, svc.Settings())
}

func (a *API) patchSettings(w http.ResponseWriter, r *http.Request) {
	svc, ok := a.settingsSvc(w)
	if !ok {
		return
	}
	var in map[string]json.RawMessage
	if !decode(w, r, &in) {
		return
	}
	v, err := svc.PatchSettings(r.Context(), in)
	if err != nil {
		a.failSettings(w, r, err)
		return
	}
	a.log.Info("settings changed", "keys", len(in), "by", actorName(r))
	writeJSON(w, http.StatusOK, v)
}
