package app

import (
	"log/slog"
	"os"
	"path/filepath"

	"github.com/caduceus-dev/caduceus/internal/config"
	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/proctrack"
	"github.com/caduceus-dev/caduceus/internal/terminal"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// newTerminals returns the web tier's terminal manager, or nil when
// terminals are off (--max-terminals 0). Its shells are recorded under the
// data dir's procs, as this web tier's own (a registry named web_...), so
// a runner or watchdog that sweeps after this process died kills them.
func newTerminals(cfg config.Config, log *slog.Logger) *terminal.Manager {
	if cfg.MaxTerminals < 0 {
		return nil
	}
	tc := terminal.Config{
		// The environment the agent's commands get: no secret of the
		// server's reaches a shell.
		Environ:     tool.CommandEnv(os.Environ(), nil),
		Idle:        cfg.TerminalIdle,
		MaxPerOwner: cfg.MaxTerminals,
		Log:         log,
	}
	reg, err := proctrack.Open(filepath.Join(cfg.DataDir, "procs"), id.New("web"), log)
	if err != nil {
		log.Warn("terminals are not recorded: a shell outliving this server will not be swept", "err", err)
	} else {
		tc.Tracker = reg
	}
	return terminal.New(tc)
}
