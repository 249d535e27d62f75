// Package app assembles a Caduceus process from its parts: store, journal
// writer and hub, wake bus, runner, API and HTTP server. The same assembly
// makes a web tier with an in-process runner (the default), a web tier
// alone, or a runner alone; cmd/caduceus and the end-to-end tests start it.
package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/caduceus-dev/caduceus/internal/api"
	"github.com/caduceus-dev/caduceus/internal/auth"
	"github.com/caduceus-dev/caduceus/internal/browser"
	"github.com/caduceus-dev/caduceus/internal/changes"
	"github.com/caduceus-dev/caduceus/internal/checkpoint"
	"github.com/caduceus-dev/caduceus/internal/config"
	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/delegate"
	"github.com/caduceus-dev/caduceus/internal/hook"
	"github.com/caduceus-dev/caduceus/internal/httpguard"
	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/identity"
	"github.com/caduceus-dev/caduceus/internal/jobs"
	"github.com/caduceus-dev/caduceus/internal/journal"
	"github.com/caduceus-dev/caduceus/internal/logring"
	"github.com/caduceus-dev/caduceus/internal/mcpconf"
	"github.com/caduceus-dev/caduceus/internal/memory"
	"github.com/caduceus-dev/caduceus/internal/models"
	"github.com/caduceus-dev/caduceus/internal/netlimit"
	"github.com/caduceus-dev/caduceus/internal/proctrack"
	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/provider/anthropic"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
	"github.com/caduceus-dev/caduceus/internal/provider/openai"
	"github.com/caduceus-dev/caduceus/internal/runner"
	"github.com/caduceus-dev/caduceus/internal/secret"
	"github.com/caduceus-dev/caduceus/internal/settings"
	"github.com/caduceus-dev/caduceus/internal/skill"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/telemetry"
	"github.com/caduceus-dev/caduceus/internal/terminal"
	"github.com/caduceus-dev/caduceus/internal/tool"
	"github.com/caduceus-dev/caduceus/internal/web"
	"github.com/caduceus-dev/caduceus/internal/websearch"
)

// App is one running Caduceus process: the web tier, a runner, or both
// (config.Runner says which).
type App struct {
	cfg    config.Config
	log    *slog.Logger
	st     store.Store
	w      *journal.Writer
	hub    *journal.Hub
	bus    waker            // nil when wake-ups across processes are unavailable
	runner *runner.Runner   // nil for the web tier alone
	watch  *runner.Watchdog // the web tier's, when it has no runner
	srv    *http.Server     // nil for a runner process
	ln     net.Listener
	models *models.Registry
	procs  *tool.ProcessTable
	// browser runs the sessions' browsers (h18-browser); nil when off.
	browser *browser.Manager
	tel     *telemetry.Telemetry
	// metrics serves a runner process's /metrics (--metrics-addr); nil
	// otherwise.
	metrics *metricsServer
	// api is the web tier's API (nil for a runner process); terms its
	// terminals (nil when off).
	api   *api.API
	terms *terminal.Manager
	// settings are the console's providers and settings; control is the
	// web tier's control service (nil for a runner process), which takes
	// the retry setting.
	settings *settings.Service
	control  *control.Service
	// hooks delivers outgoing webhooks (issue 17, h17-hooks); every
	// process has one (h17-deliver).
	hooks *hook.Deliverer
	// jobs fires scheduled jobs (h17-jobs); its loop runs in a process
	// that runs runs, and the API's "run now" uses it everywhere.
	jobs *jobs.Scheduler
	// mcp feeds the process's MCP manager from the store (h18-mcpwire).
	mcp *mcpconf.Service
}

// waker carries "look at the journal now" to the other processes: the
// unix-socket bus (internal/wake) for processes sharing a data dir on one
// host, LISTEN/NOTIFY (postgres.Notifier) for processes sharing a
// PostgreSQL database from any host.
type waker interface {
	Notify()
	C() <-chan struct{}
	Close() error
}

// pollWithBus is the hub's safety-net poll when other processes wake it;
// pollAlone keeps cross-process delivery within the latency target
// without the bus, at the cost of a query every pollAlone.
const (
	pollWithBus = time.Second
	pollAlone   = 25 * time.Millisecond
)

// New opens the store, joins the wake bus and, for a web tier, binds the
// listener; a runner process is registered when New returns. Run serves.
func New(ctx context.Context, cfg config.Config, log *slog.Logger) (*App, error) {
	if cfg.Runner == "" {
		cfg.Runner = config.RunnerInProcess
	}
	webTier := cfg.Runner != config.RunnerOnly
	if webTier {
		// Checked before the data dir is made, so a refusal leaves nothing
		// behind: a token that cannot travel in a header, or an open
		// address with no token and no database that could hold accounts.
		_, statErr := os.Stat(DatabasePath(cfg.DataDir))
		noAccounts := !shared(cfg) && errors.Is(statErr, fs.ErrNotExist)
		if _, err := httpguard.New(httpguard.Config{Addr: cfg.Addr, Token: cfg.Token, Accounts: !noAccounts}); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	script := demo.Default()
	if cfg.DemoScript != "" {
		var err error
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
	red := secret.NewRedactor(append(append(reg.Secrets(), cfg.Token, cfg.DatabasePassword()), cfg.Secrets...)...)
	// The console's log view keeps the latest lines in memory, behind the
	// redactor like stderr.
	logs := logring.New(0, 0, slog.LevelInfo)
	log = slog.New(red.Handler(slog.NewMultiHandler(log.Handler(), logs.Handler())))
	st, schema, err := openStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	a := &App{cfg: cfg, log: log, st: st, models: reg}
	keys, err := secretKeys(cfg, getenv, red)
	if err == nil && shared(cfg) {
		err = settings.CheckKey(ctx, st, keys)
	}
	if err != nil {
		st.Close()
		return nil, err
	}
	// Read now, so the key is redacted from the start; a missing key is
	// normal (nothing sealed yet), an unreadable one is worth a line.
	if _, kerr := keys(false); kerr != nil && !errors.Is(kerr, settings.ErrNoKey) {
		log.Warn("the secret key cannot be read: stored provider API keys will not open", "err", kerr)
	}
	a.settings = settings.New(settings.Config{Store: st, Registry: reg, Redactor: red, Keys: keys, Factories: providerFactories(),
		Fixed: fixedSettings(file, getenv, cfg), Defaults: settingsDefaults(cfg), Apply: a.applySettings, Log: log})
	a.mcp = newMCP(ctx, cfg, st, keys, red, log)
	// The web_search back-end (h18-web): kept in the settings table, its
	// key sealed; the tool is offered only while one is configured.
	webSearch := websearch.New(websearch.Config{Store: st, Keys: keys, Redactor: red})
	var guard *httpguard.Guard
	if webTier {
		if guard, err = newGuard(ctx, cfg.Addr, cfg.Token, st, api.BodyLimit(uploadLimits(cfg))); err != nil {
			st.Close()
			return nil, err
		}
	}
	ident := identity.New(st, identity.Config{Token: cfg.Token, Loopback: httpguard.IsLoopbackAddr(cfg.Addr), Log: log})
	if a.tel, err = telemetry.New(telemetry.Config{Version: cfg.Version, Role: role(cfg), TracesEndpoint: cfg.TracesEndpoint, Log: log}); err != nil {
		st.Close()
		return nil, err
	}
	poll := pollWithBus
	if a.bus, err = openWaker(ctx, cfg, log); err != nil {
		log.Warn("no cross-process wake-ups; polling the journal instead", "every", pollAlone, "err", err)
		a.bus, poll = nil, pollAlone
	}
	a.hub = journal.NewHub(st, poll, log)
	a.w = journal.NewWriter(st, a.afterCommit, log, journal.WithObserver(a.tel))
	a.w.Start()
	var runnerID string
	if cfg.Runner != config.RunnerNone {
		runnerID = id.New("rnr")
	}
	// Background processes are recorded under the data dir, so whoever
	// sweeps next (a runner starting, any watchdog) kills those whose
	// runner died.
	procReg, err := proctrack.Open(filepath.Join(cfg.DataDir, "procs"), runnerID, log, proctrack.KeepOrphans(cfg.KeepOrphans))
	var sweeper runner.ProcessSweeper
	if err != nil {
		log.Warn("background processes are tracked in memory only: one outliving its runner will not be found", "err", err)
		procReg = nil
	} else {
		sweeper = procReg
	}
	// Checkpoints are taken by the runner on its host and read by the web
	// tier from the same directory: one host, or a shared mount.
	var chg *changes.Service
	ckpDir := cfg.CheckpointDir
	if ckpDir == "" {
		ckpDir = filepath.Join(cfg.DataDir, "checkpoints")
	}
	if cp, err := checkpoint.New(checkpoint.Options{Dir: ckpDir, Exclude: []string{cfg.DataDir}, Logger: log}); err != nil {
		log.Warn("no checkpoints: changes cannot be shown or rolled back", "err", err)
	} else {
		chg = changes.New(cp, st, a.w, cfg.CheckpointMaxBytes, log)
	}
	// The skills the agent reads and the console changes (h16-skills).
	skills := skill.NewDir(filepath.Join(cfg.DataDir, "skills"))
	if cfg.Runner != config.RunnerNone {
		// Memory lives in the database, per profile (h16-memory); the files
		// of servers before profiles are imported once.
		importMemory(ctx, st, filepath.Join(cfg.DataDir, "memory"), log)
		memOf := func(scope string) *memory.Store { return memory.InStore(st, scope, nil) }
		mem := memOf("")
		a.procs = tool.NewProcessTable(0, 0, procReg)
		// h18-browser: web_fetch and the browser connect through one guard.
		guard, err := netGuard(cfg)
		if err != nil {
			a.close()
			return nil, err
		}
		tools := tool.Builtin(tool.Config{Memory: mem, Skills: skills.Library, Processes: a.procs, WebSearch: webSearch, Net: guard})
		if a.browser, err = startBrowser(cfg, guard, log); err != nil {
			a.close()
			return nil, err
		}
		if a.browser != nil {
			tools = withTools(tools, a.browser.Tools()...)
		}
		// Subagents (h18-delegate): the delegate tool makes child sessions
		// and queues their runs through a control service of its own, as
		// the job scheduler does, so a runner process can delegate alone.
		dsvc := control.NewService(st, a.w, cfg.Workspace, control.RetryPolicy{Max: cfg.MaxRetries, Backoff: cfg.RetryBackoff})
		if len(cfg.WorkspaceRoots) > 0 {
			if err := dsvc.AllowWorkspaces(cfg.WorkspaceRoots); err != nil {
				a.close()
				return nil, err
			}
		}
		tools = tools.With(tool.NewDelegate(delegate.New(st, a.w, dsvc, delegate.Config{Limit: cfg.MaxSubagents,
			ScratchDir: filepath.Join(cfg.DataDir, "scratch")}, log)))
		a.runner = runner.New(runner.Config{ID: runnerID, Lease: cfg.Lease, ApprovalTTL: cfg.ApprovalTTL, Version: cfg.Version, Redactor: red,
			Memory: memOf, ApprovalMode: cfg.ApprovalMode, Grace: cfg.Grace, MaxConcurrent: cfg.MaxConcurrent, Processes: sweeper, LeaseOnly: shared(cfg),
			Telemetry: a.tel, Checkpoints: runnerCheckpoints(chg), StuckRepeats: cfg.StuckRepeats, MCP: a.mcp},
			st, a.w, a.hub, tools, reg, log)
	} else {
		a.watch = runner.NewWatchdog(st, a.w, "", runner.Config{Lease: cfg.Lease, LeaseOnly: shared(cfg), Processes: sweeper,
			Checkpoints: runnerCheckpoints(chg)}, log) // h17-expiry: an expired run's end checkpoint
	}
	if err := a.settings.Reload(ctx); err != nil {
		a.close()
		return nil, err
	}
	// Outgoing webhooks (h17-hooks, h17-deliver): every process, web tier
	// or runner, watches runs end from the delivery cursor in the store and
	// sends; an attempt is claimed before it is sent. So a run a runner
	// ends while no web tier runs is delivered all the same.
	a.hooks = hook.NewDeliverer(hook.Config{Store: st, Secrets: hookSecrets(keys), RunSecret: runHookKey(keys), Log: log,
		Link: runLink(cfg.PublicURL)})
	if !webTier {
		if cfg.MetricsAddr != "" {
			if a.metrics, err = listenMetrics(ctx, cfg.MetricsAddr, cfg.Token, st, a.tel.Handler(), log); err != nil {
				a.close()
				return nil, err
			}
		}
		if err := a.runner.Register(ctx); err != nil {
			a.close()
			return nil, err
		}
		// A runner process queues its scheduled jobs' runs itself
		// (h17-jobs), through a control service of its own.
		jsvc := control.NewService(st, a.w, cfg.Workspace, control.RetryPolicy{Max: cfg.MaxRetries, Backoff: cfg.RetryBackoff})
		if len(cfg.WorkspaceRoots) > 0 {
			if err := jsvc.AllowWorkspaces(cfg.WorkspaceRoots); err != nil {
				a.close()
				return nil, err
			}
		}
		a.jobs = jobs.NewScheduler(st, a.w, jsvc, jobs.Config{}, log)
		return a, nil
	}
	svc := control.NewService(st, a.w, cfg.Workspace, control.RetryPolicy{Max: cfg.MaxRetries, Backoff: cfg.RetryBackoff})
	// Profiles (h16-profiles) enable tools by name: the builtin set, listed
	// whether or not this process runs the agent.
	toolSpecs := append(tool.Builtin(tool.Config{}).With(tool.NewDelegate(nil)).Specs(), browserSpecs(cfg)...) // h18-browser
	svc.KnowTools(toolNames(toolSpecs))
	a.control = svc
	a.jobs = jobs.NewScheduler(st, a.w, svc, jobs.Config{}, log)
	a.applySettings(a.settings.Settings().Effective)
	if len(cfg.WorkspaceRoots) > 0 {
		if err := svc.AllowWorkspaces(cfg.WorkspaceRoots); err != nil {
			a.close()
			return nil, err
		}
	}
	conn := connBounds(cfg)
	a.terms = newTerminals(cfg, log)
	ap := api.New(st, svc, a.hub, api.Info{Version: cfg.Version, SchemaVersion: schema,
		DefaultModel: reg.Default(), Demo: reg.DemoOnly(), RunnerMode: cfg.Runner,
		Browser: browserCapability(cfg)}, api.Options{LeaseWindow: 3 * cfg.Lease, Models: reg, Writes: a.w,
		StreamWriteTimeout: conn.WriteTimeout, MaxStreamsPerAddr: conn.MaxStreamsPerAddr, Streams: a.tel, Tracer: a.tel,
		Identity: ident, SecureCookies: cfg.SecureCookies, GitEmailDomain: cfg.GitEmailDomain, Uploads: uploadLimits(cfg), Images: reg,
		Terminals: a.terms, Origins: guard.Origins(), Redactor: red, Changes: apiChanges(chg), Checkpoints: editCheckpoints(chg),
		Tools: toolSpecs, Processes: consoleProcesses(a.procs), ProcessRecords: consoleRecords(procReg), Logs: logs,
		Settings: a.settings, WebSearch: webSearch, Skills: skills, ApprovalMode: cfg.ApprovalMode,
		HookKeys: keys, Hooks: a.hooks, Jobs: a.jobs, MCP: a.mcp}, log)
	a.api = ap
	a.tel.WatchStore(st, 3*cfg.Lease)

	ui, err := web.New()
	if err != nil {
		a.close()
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/api/", ap.Handler())
	mux.Handle("POST /hooks/{id}", ap.Handler()) // inbound triggers (h17-hooks)
	mux.Handle("GET /metrics", identity.Require(auth.ActRead, a.tel.Handler()))
	ui.Register(mux)
	a.srv = &http.Server{
		Handler: a.tel.HTTP(guard.Wrap(ident.Wrap(mux))),
		// ReadTimeout bounds a request's headers and body only: once the
		// body is read, net/http clears the deadline for its background
		// read (server.go, startBackgroundRead, Go 1.26), so an event
		// stream outlives it and its context is not cancelled
		// (TestStreamOutlivesReadTimeout). WriteTimeout bounds a response;
		// a stream moves its write deadline before each write.
		ReadHeaderTimeout: min(readHeaderTimeout, conn.ReadTimeout),
		ReadTimeout:       conn.ReadTimeout,
		WriteTimeout:      conn.WriteTimeout,
		IdleTimeout:       conn.IdleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		a.close()
		return nil, fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	a.ln = netlimit.NewListener(ln, conn.MaxConnsPerAddr, log)
	return a, nil
}

// uploadLimits are the upload bounds of cfg, defaults where it has none
// (a Config not made by config.ParseServe, as in tests).
func uploadLimits(cfg config.Config) api.UploadLimits {
	l := api.UploadLimits{MaxFileBytes: cfg.UploadMaxBytes, MaxRequestBytes: cfg.UploadMaxRequestBytes}
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = config.DefaultUploadMaxBytes
	}
	if l.MaxRequestBytes <= 0 {
		l.MaxRequestBytes = config.DefaultUploadMaxRequestBytes
	}
	return l
}

// readHeaderTimeout bounds reading a request's headers (within the read
// timeout); maxHeaderBytes bounds their size. Requests to this API carry a
// few short headers: 64 KiB leaves room for long cookies of other local
// apps, and stops a client from making the server hold a megabyte (Go's
// default) per connection.
const (
	readHeaderTimeout = 10 * time.Second
	maxHeaderBytes    = 64 << 10
)

// connBounds fills in the defaults of the connection bounds cfg leaves
// zero (a Config not made by config.ParseServe, as in tests).
func connBounds(cfg config.Config) config.Config {
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = config.DefaultReadTimeout
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = config.DefaultWriteTimeout
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = config.DefaultIdleTimeout
	}
	if cfg.MaxConnsPerAddr == 0 {
		cfg.MaxConnsPerAddr = config.DefaultMaxConnsPerAddr
	}
	if cfg.MaxStreamsPerAddr == 0 {
		cfg.MaxStreamsPerAddr = config.DefaultMaxStreamsPerAddr
	}
	return cfg
}

// afterCommit wakes this process's hub and every other process's.
func (a *App) afterCommit() {
	a.hub.Poke()
	if a.bus != nil {
		a.bus.Notify()
	}
}

// URL is the address the server answers on ("" for a runner process).
func (a *App) URL() string {
	if a.ln == nil {
		return ""
	}
	return "http://" + a.ln.Addr().String()
}

// ModelLine says which model runs get by default, for the start-up
// banner: the demo model only when no provider is configured.
func (a *App) ModelLine() string {
	if a.models.DemoOnly() {
		return "model: demo (offline demo model: no provider configured)"
	}
	if d := a.models.Default(); d != "" {
		return "model: " + d
	}
	return "model: chosen per session (no default model configured)"
}

// MetricsURL is where a runner process serves its metrics ("" without
// --metrics-addr; the web tier serves them at URL()+"/metrics").
func (a *App) MetricsURL() string {
	if a.metrics == nil {
		return ""
	}
	return a.metrics.url()
}

// RunnerID is the identity of the process's runner ("" without one).
func (a *App) RunnerID() string {
	if a.runner == nil {
		return ""
	}
	return a.runner.ID()
}

// Run serves until ctx ends, then shuts down in dependency order: streams
// and HTTP first (clients reconnect elsewhere), then the runner (which
// hands its runs over), then the journal writer, hub, bus and store.
func (a *App) Run(ctx context.Context) error {
	hubCtx, stopHub := context.WithCancel(context.Background())
	runCtx, stopRunner := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := a.hub.Run(hubCtx); err != nil {
			a.log.Error("journal hub stopped", "err", err)
		}
	}()
	if a.bus != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-hubCtx.Done():
					return
				case <-a.bus.C():
					a.hub.Poke()
				}
			}
		}()
	}
	// Providers and settings changed by other processes sharing the
	// database take effect here within a poll.
	wg.Add(1)
	go func() {
		defer wg.Done()
		a.settings.Watch(hubCtx, settings.PollEvery)
	}()
	// So do MCP servers (h18-mcpwire).
	wg.Add(1)
	go func() {
		defer wg.Done()
		a.mcp.Watch(hubCtx, mcpconf.PollEvery)
	}()
	if a.hooks != nil { // outgoing webhooks (h17-hooks)
		wg.Add(2)
		go func() {
			defer wg.Done()
			if err := a.hooks.Watch(hubCtx, a.hub); err != nil {
				a.log.Error("webhooks stopped", "err", err)
			}
		}()
		go func() {
			defer wg.Done()
			a.hooks.Send(hubCtx)
		}()
	}
	// Scheduled jobs (h17-jobs) fire in every process that runs runs; the
	// store makes each due time fire once among them.
	if a.runner != nil && a.jobs != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.jobs.Run(runCtx)
		}()
	}
	runnerDone := make(chan struct{})
	go func() {
		defer close(runnerDone)
		switch {
		case a.runner != nil:
			if err := a.runner.Run(runCtx); err != nil {
				a.log.Error("runner stopped", "err", err)
			}
		case a.watch != nil:
			a.watch.Run(runCtx)
		}
	}()

	if a.metrics != nil {
		go a.metrics.serve()
	}
	var err error
	if a.srv != nil {
		streamsCtx, stopStreams := context.WithCancel(context.Background())
		a.srv.BaseContext = func(net.Listener) context.Context { return streamsCtx }
		srvErr := make(chan error, 1)
		go func() { srvErr <- a.srv.Serve(a.ln) }()
		if a.terms != nil {
			go a.terms.Run(streamsCtx)
		}
		select {
		case <-ctx.Done():
		case err = <-srvErr:
		}
		stopStreams()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = a.srv.Shutdown(sctx)
		cancel()
		// Terminals are hijacked connections Shutdown does not wait for:
		// their shells are killed and their ends journaled before the
		// writer stops.
		a.api.CloseTerminals()
	} else {
		<-ctx.Done()
	}
	stopRunner()
	<-runnerDone
	if a.procs != nil {
		// Background processes die with the runner that started them.
		pctx, pcancel := context.WithTimeout(context.Background(), 5*time.Second)
		if perr := a.procs.Close(pctx); perr != nil {
			a.log.Warn("stopping background processes", "err", perr)
		}
		pcancel()
	}
	stopHub()
	wg.Wait()
	if cerr := a.close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// close stops the writer, exports the last spans and releases the metrics
// listener, the bus and the store.
func (a *App) close() error {
	if a.browser != nil {
		a.browser.Close() // h18-browser: the sessions' Chromiums end with the process
	}
	a.w.Close()
	var err error
	if a.mcp != nil {
		// The servers' processes (and what they started) end with us.
		err = a.mcp.Manager().Close()
	}
	if a.metrics != nil {
		err = a.metrics.close()
	}
	if a.tel != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = errors.Join(err, a.tel.Shutdown(sctx))
		cancel()
	}
	if a.bus != nil {
		err = errors.Join(err, a.bus.Close())
	}
	return errors.Join(err, a.st.Close())
}

// role names the process in its traces.
func role(cfg config.Config) string {
	switch cfg.Runner {
	case config.RunnerNone:
		return "web"
	case config.RunnerOnly:
		return "runner"
	}
	return "web+runner"
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

// DatabasePath is the SQLite file of a data dir, shared by every process
// and command that opens it.
func DatabasePath(dataDir string) string { return filepath.Join(dataDir, "caduceus.db") }

// runnerCheckpoints, apiChanges and editCheckpoints keep a nil
// *changes.Service a nil interface: no checkpoints, not a service that
// panics.
func runnerCheckpoints(c *changes.Service) runner.Checkpointer {
	if c == nil {
		return nil
	}
	return c
}

func apiChanges(c *changes.Service) api.Changes {
	if c == nil {
		return nil
	}
	return c
}

func editCheckpoints(c *changes.Service) api.EditCheckpointer {
	if c == nil {
		return nil
	}
	return c
}

// toolNames lists the names of specs (h16-profiles).
func toolNames(specs []provider.ToolSpec) []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.Name
	}
	return out
}
