package api

// Projects (issue 15, organising sessions): groups of sessions that carry
// defaults for new ones and instructions for every run.

import (
	"net/http"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
)

type projectView struct {
	ID           string     `json:"id"`
	Name         string     `json:"name"`
	Workspace    string     `json:"workspace"`
	Model        string     `json:"model"`
	Instructions string     `json:"instructions"`
	ProfileID    string     `json:"profile_id"` // h16-profiles
	CreatedAt    event.Time `json:"created_at"`
	UpdatedAt    event.Time `json:"updated_at"`
}

func newProjectView(p store.Project) projectView {
	return projectView{ID: p.ID, Name: p.Name, Workspace: p.Workspace, Model: p.Model, Instructions: p.Instructions, ProfileID: p.ProfileID,
		CreatedAt: event.Time{Time: p.CreatedAt}, UpdatedAt: event.Time{Time: p.UpdatedAt}}
}

type projectInput struct {
	Name         *string `json:"name"`
	Workspace    *string `json:"workspace"`
	Model        *string `json:"model"`
	Instructions *string `json:"instructions"`
	ProfileID    *string `json:"profile_id"` // h16-profiles
}

func (in projectInput) control() control.ProjectInput {
	return control.ProjectInput{Name: in.Name, Workspace: in.Workspace, Model: in.Model, Instructions: in.Instructions, ProfileID: in.ProfileID}
}

func (a *API) listProjects(w http.ResponseWriter, r *http.Request) {
	ps, err := a.st.ListProjects(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := make([]projectView, len(ps))
	for i, p := range ps {
		out[i] = newProjectView(p)
	}
	writeJSON(w, http.StatusOK, map[string]any{"projects": out})
}

func (a *API) createProject(w http.ResponseWriter, r *http.Request) {
	var in projectInput
	if !decode(w, r, &in) {
		return
	}
	p, err := a.svc.CreateProject(r.Context(), in.control())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, newProjectView(p))
}

func (a *API) getProject(w http.ResponseWriter, r *http.Request) {
	pid, ok := pathID(w, r, "prj", "project")
	if !ok {
		return
	}
	p, err := a.st.GetProject(r.Context(), pid)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, newProjectView(p))
}

func (a *API) patchProject(w http.ResponseWriter, r *http.Request) {
	pid, ok := pathID(w, r, "prj", "project")
	if !ok {
		return
	}
	var in projectInput
	if !decode(w, r, &in) {
		return
	}
	p, err := a.svc.UpdateProject(r.Context(), pid, in.control())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, newProjectView(p))
}

func (a *API) deleteProject(w http.ResponseWriter, r *http.Request) {
	pid, ok := pathID(w, r, "prj", "project")
	if !ok {
		return
	}
	if err := a.svc.DeleteProject(r.Context(), pid); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
