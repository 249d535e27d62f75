package runner

import (
	"context"
	"errors"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// toolsFor is the runner's tools for a run of the session: update_goal
// only while the session has an active goal to report on, and only the
// tools whose capability is there (web_search with a back-end, h18-web).
func (r *Runner) toolsFor(ctx context.Context, sessionID string) (*tool.Registry, error) {
	if r.tools == nil {
		return nil, nil
	}
	tools := r.tools.Available(ctx)
	g, err := r.st.GetGoal(ctx, sessionID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && g.Status != control.GoalActive) {
		return tools.Without(tool.NameUpdateGoal), nil
	}
	if err != nil {
		return nil, err
	}
	return tools, nil
}
