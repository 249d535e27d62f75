package runner

// Organising sessions (issue 15): a project's instructions reach the
// system prompt of every run of its sessions.

import (
	"context"
	"errors"

	"github.com/caduceus-dev/caduceus/internal/store"
)

// projectPrompt is the system prompt section of sess's project: "" when
// the session is in none, or its project gives no instructions. Read at
// each run, so an edit applies to the next run of every session in it.
func (r *Runner) projectPrompt(ctx context.Context, sess store.Session) string {
	if sess.ProjectID == "" {
		return ""
	}
	p, err := r.st.GetProject(ctx, sess.ProjectID)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			// A run without the instructions is better than no run; say so.
			r.log.Warn("reading the session's project", "project", sess.ProjectID, "err", err)
		}
		return ""
	}
	if p.Instructions == "" {
		return ""
	}
	return "\n\n## Project: " + p.Name + "\n\n" + p.Instructions
}
