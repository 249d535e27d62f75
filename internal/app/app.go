// Package app assembles a Caduceus process from its parts: store, journal
// writer and hub, runner, API and HTTP server. cmd/caduceus and the
// end-to-end tests start the same assembly.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/caduceus-dev/caduceus/internal/api"
	"github.com/caduceus-dev/caduceus/internal/config"
	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/httpguard"
	"github.com/caduceus-dev/caduceus/internal/journal"
	"github.com/caduceus-dev/caduceus/internal/memory"
	"github.com/caduceus-dev/caduceus/internal/models"
	"github.com/caduceus-dev/caduceus/internal/provider/anthropic"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
	"github.com/caduceus-dev/caduceus/internal/provider/openai"
	"github.com/caduceus-dev/caduceus/internal/runner"
	"github.com/caduceus-dev/caduceus/internal/secret"
	"github.com/caduceus-dev/caduceus/internal/skill"
	"github.com/caduceus-dev/caduceus/internal/store/sqlite"
	"github.com/caduceus-dev/caduceus/internal/tool"
	"github.com/caduceus-dev/caduceus/internal/web"
)

// App is one running Caduceus process.
type App struct {
	cfg    config.Config
	log    *slog.Logger
	st     *sqlite.DB
	w      *journal.Writer
	hub    *journal.Hub
	runner *runner.Runner
	srv    *http.Server
	ln     net.Listener
	models *models.Registry
	procs  *tool.ProcessTable
}

// New opens the store and binds the listener; Run serves.
func New(ctx context.Context, cfg config.Config, log *slog.Logger) (*App, error) {
	guard, err := httpguard.New(httpguard.Config{Addr: cfg.Addr, Token: cfg.Token})
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	script := demo.Default()
	if cfg.DemoScript != "" {
		if script, err = demo.LoadScript(cfg.DemoScript); err != nil {
			return nil, err
		}
	}
	file, err := models.LoadFile(cfg.ConfigFile)
	if err != nil {
		return nil, err
	}
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	reg := models.New(file, getenv, providerFactories(), demo.New(script))
	// From here on every log line passes through the redactor: keys must
	// not reach a log even inside an unexpected error text.
	red := secret.NewRedactor(append(reg.Secrets(), cfg.Token)...)
	log = slog.New(red.Handler(log.Handler()))
	st, err := sqlite.Open(ctx, filepath.Join(cfg.DataDir, "caduceus.db"))
	if err != nil {
		return nil, err
	}
	a := &App{cfg: cfg, log: log, st: st, models: reg}
	a.hub = journal.NewHub(st, 0, log)
	a.w = journal.NewWriter(st, a.hub.Poke, log)
	mem := memory.New(filepath.Join(cfg.DataDir, "memory"))
	a.procs = tool.NewProcessTable(0, 0)
	tools := tool.Builtin(tool.Config{Memory: mem, Skills: skill.New(filepath.Join(cfg.DataDir, "skills")), Processes: a.procs})
	a.runner = runner.New(runner.Config{Lease: cfg.Lease, ApprovalTTL: cfg.ApprovalTTL, Version: cfg.Version, Redact: red.String,
		Memory: mem, ApprovalMode: cfg.ApprovalMode},
		st, a.w, a.hub, tools, reg, log)
	svc := control.NewService(st, a.w, cfg.Workspace)
	ap := api.New(st, svc, a.hub, api.Info{Version: cfg.Version, SchemaVersion: sqlite.SchemaVersion,
		DefaultModel: reg.Default(), Demo: reg.DemoOnly()}, api.Options{LeaseWindow: 3 * cfg.Lease, Models: reg}, log)

	ui, err := web.New()
	if err != nil {
		st.Close()
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/api/", ap.Handler())
	ui.Register(mux)
	a.srv = &http.Server{Handler: guard.Wrap(mux), ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}

	if a.ln, err = net.Listen("tcp", cfg.Addr); err != nil {
		st.Close()
		return nil, fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	return a, nil
}

// URL is the address the server answers on.
func (a *App) URL() string { return "http://" + a.ln.Addr().String() }

// Run serves until ctx ends, then shuts down in dependency order: streams
// and HTTP first, then the runner (which releases its runs), then the
// journal writer, hub and store.
func (a *App) Run(ctx context.Context) error {
	a.w.Start()
	hubCtx, stopHub := context.WithCancel(context.Background())
	runCtx, stopRunner := context.WithCancel(context.Background())
	streamsCtx, stopStreams := context.WithCancel(context.Background())
	a.srv.BaseContext = func(net.Listener) context.Context { return streamsCtx }

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		if err := a.hub.Run(hubCtx); err != nil {
			a.log.Error("journal hub stopped", "err", err)
		}
	}()
	runnerDone := make(chan struct{})
	go func() {
		defer wg.Done()
		defer close(runnerDone)
		if err := a.runner.Run(runCtx); err != nil {
			a.log.Error("runner stopped", "err", err)
		}
	}()
	srvErr := make(chan error, 1)
	go func() { srvErr <- a.srv.Serve(a.ln) }()

	var err error
	select {
	case <-ctx.Done():
	case err = <-srvErr:
	}
	stopStreams()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_ = a.srv.Shutdown(sctx)
	cancel()
	stopRunner()
	<-runnerDone
	// Background processes die with the runner that started them.
	pctx, pcancel := context.WithTimeout(context.Background(), 5*time.Second)
	if perr := a.procs.Close(pctx); perr != nil {
		a.log.Warn("stopping background processes", "err", perr)
	}
	pcancel()
	a.w.Close()
	stopHub()
	wg.Wait()
	if cerr := a.st.Close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// providerFactories builds the clients of configured providers.
func providerFactories() map[string]models.Factory {
	return map[string]models.Factory{
		models.TypeOpenAI: func(name string, c models.ProviderConfig, key string) (models.Client, error) {
			return openai.New(openai.Config{Name: name, BaseURL: c.BaseURL, APIKey: key, Headers: c.Headers})
		},
		models.TypeAnthropic: func(name string, c models.ProviderConfig, key string) (models.Client, error) {
			return anthropic.New(anthropic.Config{Name: name, BaseURL: c.BaseURL, APIKey: key, Headers: c.Headers})
		},
	}
}
