package app

import (
	"fmt"
	"log/slog"

	"github.com/caduceus-dev/caduceus/internal/api"
	"github.com/caduceus-dev/caduceus/internal/browser"
	"github.com/caduceus-dev/caduceus/internal/config"
	"github.com/caduceus-dev/caduceus/internal/netguard"
	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// netGuard confines web_fetch and the browser (--net-allow, --net-block).
func netGuard(cfg config.Config) (*netguard.Guard, error) {
	g, err := netguard.New(netguard.Config{Allow: cfg.NetAllow, Block: cfg.NetBlock, Resolver: cfg.NetResolver})
	if err != nil {
		return nil, fmt.Errorf("net-allow/net-block: %w", err)
	}
	return g, nil
}

// chromiumPath resolves --browser: "" when the browser is off or "auto"
// finds no Chromium (logged, so a person who asked knows why).
func chromiumPath(cfg config.Config, log *slog.Logger) string {
	switch cfg.Browser {
	case config.BrowserOff, "":
		return ""
	case config.BrowserAuto:
		p := browser.FindChromium()
		if p == "" {
			log.Warn("no browser tools: --browser=auto found no Chromium (apt-get install chromium)")
		}
		return p
	}
	return cfg.Browser
}

// startBrowser returns the browser manager, nil when the browser is off.
func startBrowser(cfg config.Config, g *netguard.Guard, log *slog.Logger) (*browser.Manager, error) {
	exe := chromiumPath(cfg, log)
	if exe == "" {
		return nil, nil
	}
	m, err := browser.New(browser.Config{ExecPath: exe, Guard: g, IdleTimeout: cfg.BrowserIdle, Sandbox: cfg.BrowserSandbox, Log: log.With("part", "browser")})
	if err != nil {
		return nil, fmt.Errorf("browser: %w", err)
	}
	return m, nil
}

// browserCapability says whether the browser tools are offered, and if
// not, why (GET /api/meta). The web tier answers from its own host: a
// separate runner host may have Chromium where it has not.
func browserCapability(cfg config.Config) api.Capability {
	switch {
	case cfg.Browser == config.BrowserOff || cfg.Browser == "":
		return api.Capability{Reason: "off: start Caduceus with --browser auto or --browser /path/to/chromium"}
	case cfg.Browser == config.BrowserAuto && browser.FindChromium() == "":
		return api.Capability{Reason: "--browser auto found no Chromium on this host (apt-get install chromium)"}
	}
	return api.Capability{Enabled: true}
}

// withTools is reg plus extra.
func withTools(reg *tool.Registry, extra ...tool.Tool) *tool.Registry {
	if len(extra) == 0 {
		return reg
	}
	all := make([]tool.Tool, 0, len(reg.Names())+len(extra))
	for _, n := range reg.Names() {
		t, _ := reg.Get(n)
		all = append(all, t)
	}
	return tool.NewRegistry(append(all, extra...)...)
}

// browserSpecs are the browser tools profiles may enable: listed when the
// browser is configured, whichever process runs it.
func browserSpecs(cfg config.Config) []provider.ToolSpec {
	if !browserCapability(cfg).Enabled {
		return nil
	}
	return browser.Specs()
}
