package app

// MCP servers (issue 18, h18-mcpwire): one mcp.Manager per process, fed
// from the store by internal/mcpconf; a run gets the enabled servers'
// tools, the API shows and changes them.

import (
	"context"
	"log/slog"

	"github.com/caduceus-dev/caduceus/internal/config"
	"github.com/caduceus-dev/caduceus/internal/mcp"
	"github.com/caduceus-dev/caduceus/internal/mcpconf"
	"github.com/caduceus-dev/caduceus/internal/secret"
	"github.com/caduceus-dev/caduceus/internal/settings"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// newMCP builds the process's MCP manager and loads the stored servers;
// none starts before a run (or the API) uses it. A configuration that
// cannot be loaded is logged, not fatal: Settings shows why and can fix it.
func newMCP(ctx context.Context, cfg config.Config, st store.Store, keys settings.Keys, red *secret.Redactor, log *slog.Logger) *mcpconf.Service {
	m, err := mcp.NewManager(mcp.Options{Logger: log, ClientVersion: cfg.Version}, nil)
	if err != nil { // no configuration yet: cannot fail
		panic(err)
	}
	svc := mcpconf.New(st, m, mcpconf.Keys(keys), red, log)
	if err := svc.Reload(ctx); err != nil {
		log.Warn("MCP servers not loaded; retried every poll", "err", err)
	}
	return svc
}
