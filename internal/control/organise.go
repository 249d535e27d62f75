package control

// Organising sessions (issue 15): pins, archive, projects.

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// Limits on a project's fields.
const (
	MaxProjectNameRunes    = 100
	MaxInstructionsRunes   = 20_000
	CodeProjectNameTaken   = "project_name_taken"
	CodeProjectNotFound    = "project_not_found"
	defaultProjectNameHint = "a project needs a name of one line"
)

// organise applies the pin, archive and project fields of p to sess and
// names those that changed in ev. An unknown project is refused.
func organise(ctx context.Context, tx store.Tx, sess *store.Session, ev *event.SessionUpdatedPayload, p SessionPatch, now time.Time) error {
	if p.Pinned != nil && *p.Pinned != sess.Pinned {
		sess.Pinned = *p.Pinned
		ev.Pinned = &sess.Pinned
	}
	if p.Archived != nil && *p.Archived != !sess.ArchivedAt.IsZero() {
		archived := *p.Archived
		ev.Archived = &archived
		if archived {
			sess.ArchivedAt = now
			ev.ArchivedAt = &event.Time{Time: now}
		} else {
			sess.ArchivedAt = time.Time{}
		}
	}
	if p.ProjectID != nil && *p.ProjectID != sess.ProjectID {
		if *p.ProjectID != "" {
			if err := projectExists(ctx, tx, *p.ProjectID); err != nil {
				return err
			}
		}
		sess.ProjectID = *p.ProjectID
		ev.ProjectID = &sess.ProjectID
	}
	return nil
}

// onlyOrganises reports whether p changes nothing but pins, archive and
// project.
func onlyOrganises(p SessionPatch) bool {
	return p.Title == nil && p.Model == nil && (p.Pinned != nil || p.Archived != nil || p.ProjectID != nil)
}

func projectExists(ctx context.Context, r store.Reader, projectID string) error {
	if !id.Valid("prj", projectID) {
		return &Error{Code: CodeProjectNotFound, Message: "project_id names no project", Details: map[string]any{"project_id": projectID}}
	}
	if _, err := r.GetProject(ctx, projectID); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return &Error{Code: CodeProjectNotFound, Message: "project_id names no project", Details: map[string]any{"project_id": projectID}}
		}
		return err
	}
	return nil
}

// withProjectDefaults fills in's empty workspace and model from its
// project.
func (s *Service) withProjectDefaults(ctx context.Context, in NewSession) (NewSession, error) {
	if err := projectExists(ctx, s.st, in.ProjectID); err != nil {
		return in, err
	}
	p, err := s.st.GetProject(ctx, in.ProjectID)
	if err != nil {
		return in, err
	}
	if in.Workspace == "" {
		in.Workspace = p.Workspace
	}
	if strings.TrimSpace(in.Model) == "" {
		in.Model = p.Model
	}
	return in, nil
}

// ProjectInput is the input of CreateProject and UpdateProject; nil fields
// stay unchanged on update (and are empty on create).
type ProjectInput struct {
	Name         *string
	Workspace    *string
	Model        *string
	Instructions *string
	// ProfileID (h16-profiles) is the profile new sessions in the project
	// take; "" for the default profile.
	ProfileID *string
}

func (s *Service) applyProject(p *store.Project, in ProjectInput) error {
	if in.Name != nil {
		n := strings.TrimSpace(*in.Name)
		if n == "" || !utf8.ValidString(n) || strings.ContainsAny(n, "\x00\r\n") {
			return errorf(CodeInvalidInput, "%s", defaultProjectNameHint)
		}
		if utf8.RuneCountInString(n) > MaxProjectNameRunes {
			return errorf(CodeInvalidInput, "project name is longer than %d characters", MaxProjectNameRunes)
		}
		p.Name = n
	}
	if in.Workspace != nil {
		ws := strings.TrimSpace(*in.Workspace)
		if ws != "" {
			var err error
			if ws, err = s.checkWorkspace(ws); err != nil {
				return err
			}
		}
		p.Workspace = ws
	}
	if in.Model != nil {
		p.Model = strings.TrimSpace(*in.Model)
	}
	if in.Instructions != nil {
		if !utf8.ValidString(*in.Instructions) || strings.ContainsRune(*in.Instructions, 0) {
			return errorf(CodeInvalidInput, "instructions must be UTF-8 text")
		}
		if utf8.RuneCountInString(*in.Instructions) > MaxInstructionsRunes {
			return errorf(CodeInvalidInput, "instructions are longer than %d characters", MaxInstructionsRunes)
		}
		p.Instructions = strings.TrimSpace(*in.Instructions)
	}
	if in.ProfileID != nil {
		p.ProfileID = strings.TrimSpace(*in.ProfileID)
	}
	return nil
}

// checkProjectProfile refuses a project whose new profile_id names no
// live profile; one it names already (deleted since) may stay.
func checkProjectProfile(ctx context.Context, r store.Reader, in ProjectInput, was string) error {
	if in.ProfileID == nil || strings.TrimSpace(*in.ProfileID) == was {
		return nil
	}
	return checkProfileRef(ctx, r, strings.TrimSpace(*in.ProfileID))
}

func nameTaken(err error, name string) error {
	if errors.Is(err, store.ErrConflict) {
		return &Error{Code: CodeProjectNameTaken, Message: "another project has this name", Details: map[string]any{"name": name}}
	}
	return err
}

// CreateProject makes a project.
func (s *Service) CreateProject(ctx context.Context, in ProjectInput) (store.Project, error) {
	if in.Name == nil {
		return store.Project{}, errorf(CodeInvalidInput, "%s", defaultProjectNameHint)
	}
	now := time.Now().UTC()
	p := store.Project{ID: id.New("prj"), CreatedAt: now, UpdatedAt: now}
	if err := s.applyProject(&p, in); err != nil {
		return store.Project{}, err
	}
	err := s.w.Do(ctx, func(tx store.Tx) error {
		if err := checkProjectProfile(ctx, tx, in, ""); err != nil {
			return err
		}
		if err := nameTaken(tx.InsertProject(ctx, p), p.Name); err != nil {
			return err
		}
		return announceProject(ctx, tx, event.ProjectCreated, p)
	})
	return p, err
}

// announceProject journals a project's new state, so every tab's sidebar
// (on every node: the journal's commits wake the others) follows it.
func announceProject(ctx context.Context, tx store.Tx, t event.Type, p store.Project) error {
	_, err := tx.AppendEvents(ctx, "", event.Draft{SessionID: p.ID, Type: t, Payload: event.ProjectPayload{Project: ProjectInfo(p)}})
	return err
}

// ProjectInfo is p as project events carry it.
func ProjectInfo(p store.Project) event.ProjectInfo {
	return event.ProjectInfo{ID: p.ID, Name: p.Name, Workspace: p.Workspace, Model: p.Model, Instructions: p.Instructions,
		CreatedAt: event.Time{Time: p.CreatedAt}, UpdatedAt: event.Time{Time: p.UpdatedAt}}
}

// UpdateProject changes a project's fields; its sessions keep theirs (the
// defaults apply to new sessions), but its instructions reach every run
// from now on.
func (s *Service) UpdateProject(ctx context.Context, projectID string, in ProjectInput) (store.Project, error) {
	var out store.Project
	err := s.w.Do(ctx, func(tx store.Tx) error {
		p, err := tx.GetProject(ctx, projectID)
		if err != nil {
			return err
		}
		was := p.ProfileID
		if err := s.applyProject(&p, in); err != nil {
			return err
		}
		if err := checkProjectProfile(ctx, tx, in, was); err != nil {
			return err
		}
		p.UpdatedAt = time.Now().UTC()
		out = p
		if err := nameTaken(tx.UpdateProject(ctx, p), p.Name); err != nil {
			return err
		}
		return announceProject(ctx, tx, event.ProjectUpdated, p)
	})
	return out, err
}

// DeleteProject deletes a project; its sessions stay, in no project. Its
// project.deleted tells every tab to take the project off its sessions
// too (the store clears project_id without a session.updated each).
func (s *Service) DeleteProject(ctx context.Context, projectID string) error {
	return s.w.Do(ctx, func(tx store.Tx) error {
		// The announcement first: its seq comes from the project's row.
		if _, err := tx.AppendEvents(ctx, "", event.Draft{SessionID: projectID, Type: event.ProjectDeleted,
			Payload: event.ProjectDeletedPayload{ID: projectID}}); err != nil {
			return err
		}
		return tx.DeleteProject(ctx, projectID)
	})
}
