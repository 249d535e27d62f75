package api

// Profiles (issue 16, h16-profiles): several agents, and the tools a
// profile may enable.

import (
	"net/http"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
)

type profileView struct {
	ID           string      `json:"id"`
	Name         string      `json:"name"`
	Color        string      `json:"color"`
	Instructions string      `json:"instructions"`
	Model        string      `json:"model"`
	Fallbacks    []string    `json:"fallbacks"`
	Tools        []string    `json:"tools"` // empty: all
	ApprovalMode string      `json:"approval_mode"`
	Workspace    string      `json:"workspace"`
	Default      bool        `json:"default"`
	CreatedAt    event.Time  `json:"created_at"`
	UpdatedAt    event.Time  `json:"updated_at"`
	DeletedAt    *event.Time `json:"deleted_at"`
}

func newProfileView(p store.Profile) profileView {
	v := profileView{ID: p.ID, Name: p.Name, Color: p.Color, Instructions: p.Instructions, Model: p.Model,
		Fallbacks: p.Fallbacks, Tools: p.Tools, ApprovalMode: p.ApprovalMode, Workspace: p.Workspace, Default: p.Default,
		CreatedAt: event.Time{Time: p.CreatedAt}, UpdatedAt: event.Time{Time: p.UpdatedAt}}
	if v.Fallbacks == nil {
		v.Fallbacks = []string{}
	}
	if v.Tools == nil {
		v.Tools = []string{}
	}
	if !p.Live() {
		v.DeletedAt = &event.Time{Time: p.DeletedAt}
	}
	return v
}

type profileInput struct {
	Name         *string   `json:"name"`
	Color        *string   `json:"color"`
	Instructions *string   `json:"instructions"`
	Model        *string   `json:"model"`
	Fallbacks    *[]string `json:"fallbacks"`
	Tools        *[]string `json:"tools"`
	ApprovalMode *string   `json:"approval_mode"`
	Workspace    *string   `json:"workspace"`
	Default      *bool     `json:"default"`
}

func (in profileInput) control() control.ProfileInput {
	return control.ProfileInput{Name: in.Name, Color: in.Color, Instructions: in.Instructions, Model: in.Model,
		Fallbacks: in.Fallbacks, Tools: in.Tools, ApprovalMode: in.ApprovalMode, Workspace: in.Workspace, Default: in.Default}
}

func (a *API) listProfiles(w http.ResponseWriter, r *http.Request) {
	ps, err := a.st.ListProfiles(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := make([]profileView, len(ps))
	for i, p := range ps {
		out[i] = newProfileView(p)
	}
	writeJSON(w, http.StatusOK, map[string]any{"profiles": out})
}

func (a *API) createProfile(w http.ResponseWriter, r *http.Request) {
	var in profileInput
	if !decode(w, r, &in) {
		return
	}
	p, err := a.svc.CreateProfile(r.Context(), in.control())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, newProfileView(p))
}

// getProfile answers a deleted profile too (deleted_at set): sessions
// that name it still show it.
func (a *API) getProfile(w http.ResponseWriter, r *http.Request) {
	pid, ok := pathID(w, r, "prf", "profile")
	if !ok {
		return
	}
	p, err := a.st.GetProfile(r.Context(), pid)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, newProfileView(p))
}

func (a *API) patchProfile(w http.ResponseWriter, r *http.Request) {
	pid, ok := pathID(w, r, "prf", "profile")
	if !ok {
		return
	}
	var in profileInput
	if !decode(w, r, &in) {
		return
	}
	p, err := a.svc.UpdateProfile(r.Context(), pid, in.control())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, newProfileView(p))
}

func (a *API) duplicateProfile(w http.ResponseWriter, r *http.Request) {
	pid, ok := pathID(w, r, "prf", "profile")
	if !ok {
		return
	}
	p, err := a.svc.DuplicateProfile(r.Context(), pid)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, newProfileView(p))
}

func (a *API) deleteProfile(w http.ResponseWriter, r *http.Request) {
	pid, ok := pathID(w, r, "prf", "profile")
	if !ok {
		return
	}
	if err := a.svc.DeleteProfile(r.Context(), pid); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

type toolView struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// listTools lists the agent's tools, the names a profile's tools field
// takes.
func (a *API) listTools(w http.ResponseWriter, r *http.Request) {
	out := make([]toolView, len(a.opt.Tools))
	for i, t := range a.opt.Tools {
		out[i] = toolView{Name: t.Name, Description: t.Description}
	}
	writeJSON(w, http.StatusOK, map[string]any{"tools": out})
}
