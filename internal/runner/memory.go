package runner

// Memory per agent profile (issue 16, h16-memory): a run remembers with
// its profile's memory.

import (
	"context"
	"errors"

	"github.com/caduceus-dev/caduceus/internal/memory"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// memoryOf is the memory a run uses: its profile's; for a run with no
// live profile, the default profile's (where the memory of servers before
// profiles was imported), else the memory of runs with no profile.
func (r *Runner) memoryOf(ctx context.Context, p store.Profile, ok bool) *memory.Store {
	if r.cfg.Memory == nil {
		return nil
	}
	if ok {
		return r.cfg.Memory(p.ID)
	}
	def, err := r.st.DefaultProfile(ctx)
	switch {
	case err == nil:
		return r.cfg.Memory(def.ID)
	case !errors.Is(err, store.ErrNotFound):
		r.log.Warn("reading the default profile for memory", "err", err)
	}
	return r.cfg.Memory("")
}
