package app

// Memory per agent profile (issue 16, h16-memory).

import (
	"context"
	"errors"
	"log/slog"

	"github.com/caduceus-dev/caduceus/internal/memory"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// importMemory moves the memory files of a server from before profiles
// into the database, once: into the default profile's memory (which runs
// with no profile use too), or, with no default profile yet, into the
// memory of runs with no profile, which the default profile adopts at the
// first start after there is one. A failure is logged, not fatal: the
// files stay and the next start tries again.
func importMemory(ctx context.Context, st store.Store, dir string, log *slog.Logger) {
	scope := ""
	def, err := st.DefaultProfile(ctx)
	switch {
	case err == nil:
		scope = def.ID
	case !errors.Is(err, store.ErrNotFound):
		log.Warn("memory files not imported: reading the default profile", "err", err)
		return
	}
	dst := memory.InStore(st, scope, nil)
	n, err := memory.Import(ctx, dir, dst)
	if err != nil {
		log.Warn("memory files not imported", "dir", dir, "err", err)
		return
	}
	if n > 0 {
		log.Info("memory files imported into the database", "dir", dir, "entries", n, "profile", scope)
	}
	if scope == "" {
		return
	}
	if n, err := memory.Adopt(ctx, memory.InStore(st, "", nil), dst); err != nil {
		log.Warn("the memory of runs with no profile was not moved to the default profile", "err", err)
	} else if n > 0 {
		log.Info("the memory of runs with no profile moved to the default profile", "entries", n, "profile", scope)
	}
}
