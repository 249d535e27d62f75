// Package config reads Caduceus's settings from flags and environment
// variables. Every flag has an environment equivalent; a flag given on the
// command line wins. Secrets (the access token) come only from the
// environment, so they never show in a process listing.
package config

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/caduceus-dev/caduceus/internal/policy"
)

// Config is the resolved configuration of `caduceus serve` or
// `caduceus runner`.
type Config struct {
	// UploadMaxBytes bounds one uploaded file, UploadMaxRequestBytes one
	// upload request (several files); zero means the defaults.
	UploadMaxBytes        int64
	UploadMaxRequestBytes int64
	Addr                  string
	DataDir               string
	Workspace             string
	Token                 string
	DemoScript            string
	ApprovalTTL           time.Duration
	Lease                 time.Duration
	Version               string
	// ConfigFile holds providers, models and prices (default
	// <data-dir>/config.json; a missing file means none).
	ConfigFile string
	// ApprovalMode is the default approval policy of new sessions: manual,
	// smart or off.
	ApprovalMode string
	// Runner says where runs execute: RunnerInProcess, RunnerNone (the web
	// tier only: separate `caduceus runner` processes execute), or
	// RunnerOnly (a `caduceus runner` process: no web tier).
	Runner string
	// MaxRetries is how often a new run is retried automatically after its
	// runner died or its provider failed transiently.
	MaxRetries int
	// RetryBackoff is the wait before the first automatic retry; it doubles
	// with every retry.
	RetryBackoff time.Duration
	// Grace is how long a stopping runner lets its runs reach a step
	// boundary before it hands them over.
	Grace time.Duration
	// MaxConcurrent bounds the runs a runner executes at once.
	MaxConcurrent int
	// MaxSubagents bounds the child runs of one delegate call that run at
	// once (h18-delegate).
	MaxSubagents int
	// StuckRepeats is how many identical tool calls in a row pause a run
	// as looking stuck (h16-budgets): 0 means the runner's default (3),
	// negative never (the flag's 0, which reads better on a command line).
	StuckRepeats int
	// ReadTimeout bounds reading one request, headers and body; event
	// streams, long-lived GETs, are exempt once their headers are read.
	// Zero means DefaultReadTimeout.
	ReadTimeout time.Duration
	// WriteTimeout bounds writing one response; an event stream applies it
	// to each of its writes, so a client that stops reading is dropped.
	// Zero means DefaultWriteTimeout.
	WriteTimeout time.Duration
	// IdleTimeout closes a keep-alive connection that sends no next
	// request. Zero means DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxConnsPerAddr bounds the open connections of one client address;
	// the listener closes any beyond it at once. Zero means
	// DefaultMaxConnsPerAddr, negative no limit.
	MaxConnsPerAddr int
	// MaxStreamsPerAddr bounds the event streams one client address holds
	// open; one more is refused with 429 too_many_streams. Zero means
	// DefaultMaxStreamsPerAddr, negative no limit.
	MaxStreamsPerAddr int
	// TerminalIdle closes a terminal no browser is attached to and that
	// wrote nothing for this long. Zero means DefaultTerminalIdle.
	TerminalIdle time.Duration
	// MaxTerminals bounds the terminals one person holds open in one
	// session. Zero means DefaultMaxTerminals, negative turns terminals
	// off.
	MaxTerminals int
	// Database is a PostgreSQL URL (postgres://...) to keep the store in,
	// shared by processes on several hosts; empty keeps it in the SQLite
	// file <data-dir>/caduceus.db. It may hold a password: it never
	// appears in an error, a log line or --help.
	Database string
	// SecureCookies marks the sign-in cookie Secure even on plain-HTTP
	// requests: for a server behind a proxy that terminates TLS (a request
	// that arrives over TLS gets Secure anyway).
	SecureCookies bool
	// GitEmailDomain is the domain of the author email of commits a
	// signed-in person makes in the Git panel (<name>@<domain>); empty
	// means localhost.
	GitEmailDomain string
	// PublicURL (h17-hooks) is the address people open the workbench at
	// (scheme, host, optional path; no trailing slash): a webhook's
	// payload links to the run's session there. Empty: no link.
	PublicURL string
	// CheckpointDir holds the shadow repositories that checkpoint the
	// workspaces of this host (default <data-dir>/checkpoints).
	CheckpointDir string
	// CheckpointMaxBytes caps each workspace's checkpoints; after a run the
	// oldest are pruned to fit. 0 never prunes.
	CheckpointMaxBytes int64
	// Getenv reads provider keys (OPENAI_API_KEY, ...) when they are needed,
	// so they are never copied into the configuration.
	Getenv func(string) string
	// Secrets are further values to redact from everything the process
	// writes besides the token and the provider keys in use: every secret
	// the process hid from its environment at start.
	Secrets []string
	// WorkspaceRoots are the directories a new session's workspace may be
	// chosen under (serve only); none means Workspace alone.
	WorkspaceRoots []string
	// KeepOrphans leaves running the background processes of a runner
	// that died, for a person to see and kill from the console's
	// Processes section, instead of the sweep killing them
	// (--kill-orphans=false). Their time limit still applies.
	KeepOrphans bool
	// Observability (see telemetry.go).
	Telemetry
	// The network tools' confinement and the browser (h18-browser; see
	// browser.go).
	Network
}

// Where runs execute.
const (
	RunnerInProcess = "inprocess"
	RunnerNone      = "none"
	RunnerOnly      = "only"
)

// DefaultAddr is loopback: nothing listens beyond this machine by default.
const DefaultAddr = "127.0.0.1:7420"

// The web tier's connection bounds (docs/API.md, "Connections"). A browser
// holds about six connections per origin and one event stream per tab;
// the limits per client address leave room for many tabs, browsers and
// scripts on one machine while stopping one client from holding
// thousands. Behind a reverse proxy every client shares the proxy's
// address: raise them there, or turn them off with 0.
const (
	DefaultReadTimeout       = 30 * time.Second
	DefaultWriteTimeout      = 30 * time.Second
	DefaultTerminalIdle      = 30 * time.Minute
	DefaultMaxTerminals      = 4
	DefaultIdleTimeout       = 60 * time.Second
	DefaultMaxConnsPerAddr   = 128
	DefaultMaxStreamsPerAddr = 32
)

// ParseServe parses the flags of `serve` with env as the environment.
func ParseServe(args []string, getenv func(string) string) (Config, error) {
	return parse("serve", args, getenv)
}

// ParseRunner parses the flags of `runner` with env as the environment.
func ParseRunner(args []string, getenv func(string) string) (Config, error) {
	return parse("runner", args, getenv)
}

func parse(cmd string, args []string, getenv func(string) string) (Config, error) {
	var c Config
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	if cmd == "serve" {
		fs.StringVar(&c.Addr, "addr", envOr(getenv, "CADUCEUS_ADDR", DefaultAddr), "listen address (env CADUCEUS_ADDR)")
		fs.StringVar(&c.Runner, "runner", envOr(getenv, "CADUCEUS_RUNNER", RunnerInProcess), "where runs execute: inprocess, or none for the web tier only with separate `caduceus runner` processes (env CADUCEUS_RUNNER)")
		fs.BoolVar(&c.SecureCookies, "secure-cookies", getenv("CADUCEUS_SECURE_COOKIES") == "1", "mark the sign-in cookie Secure, for a server behind a TLS-terminating proxy (env CADUCEUS_SECURE_COOKIES=1)")
		fs.StringVar(&c.GitEmailDomain, "git-email-domain", getenv("CADUCEUS_GIT_EMAIL_DOMAIN"), "domain of the author email of a signed-in person's Git panel commits, <name>@<domain>; empty: localhost (env CADUCEUS_GIT_EMAIL_DOMAIN)")
		fs.StringVar(&c.PublicURL, "public-url", getenv("CADUCEUS_PUBLIC_URL"), "the address people open the workbench at, such as https://caduceus.example.com; webhook payloads link to runs there; empty: no link (env CADUCEUS_PUBLIC_URL)")
		c.WorkspaceRoots = filepath.SplitList(getenv("CADUCEUS_WORKSPACE_ROOTS"))
		fs.Var(&listFlag{v: &c.WorkspaceRoots}, "workspace-root", "a directory under which sessions may choose their workspace; repeat for several (env CADUCEUS_WORKSPACE_ROOTS, separated by ':'; default: --workspace only)")
		fs.IntVar(&c.MaxRetries, "max-retries", 2, "automatic retries of a run whose runner died or whose provider failed transiently")
		for _, l := range []struct {
			p         *int
			name, env string
			def       int
			usage     string
		}{
			{&c.MaxConnsPerAddr, "max-conns-per-addr", "CADUCEUS_MAX_CONNS_PER_ADDR", DefaultMaxConnsPerAddr, "open connections per client address; more are closed at once; 0 no limit"},
			{&c.MaxStreamsPerAddr, "max-streams-per-addr", "CADUCEUS_MAX_STREAMS_PER_ADDR", DefaultMaxStreamsPerAddr, "event streams per client address; more are refused (429); 0 no limit"},
			{&c.MaxTerminals, "max-terminals", "CADUCEUS_MAX_TERMINALS", DefaultMaxTerminals, "terminals one person may hold open in one session; 0 turns terminals off"},
		} {
			def, err := intEnv(getenv, l.env, l.def)
			if err != nil {
				return c, err
			}
			fs.IntVar(l.p, l.name, def, l.usage+" (env "+l.env+")")
		}
		for _, l := range []struct {
			p         *int64
			name, env string
			def       int64
			usage     string
		}{
			{&c.UploadMaxBytes, "upload-max-bytes", "CADUCEUS_UPLOAD_MAX_BYTES", DefaultUploadMaxBytes, "largest file the composer may attach, in bytes"},
			{&c.UploadMaxRequestBytes, "upload-max-request-bytes", "CADUCEUS_UPLOAD_MAX_REQUEST_BYTES", DefaultUploadMaxRequestBytes, "largest upload request (all its files), in bytes; only the uploads route gets more than the API's 1 MiB"},
		} {
			def, err := int64Env(getenv, l.env, l.def)
			if err != nil {
				return c, err
			}
			fs.Int64Var(l.p, l.name, def, l.usage+" (env "+l.env+")")
		}
	} else {
		c.Runner = RunnerOnly
	}
	fs.StringVar(&c.DataDir, "data-dir", envOr(getenv, "CADUCEUS_DATA_DIR", defaultDataDir(getenv)), "directory of the database (env CADUCEUS_DATA_DIR)")
	fs.StringVar(&c.Workspace, "workspace", envOr(getenv, "CADUCEUS_WORKSPACE", ""), "default workspace of new sessions (env CADUCEUS_WORKSPACE; default: the current directory)")
	fs.StringVar(&c.ConfigFile, "config", envOr(getenv, "CADUCEUS_CONFIG", ""), "providers and models file (env CADUCEUS_CONFIG; default <data-dir>/config.json)")
	fs.StringVar(&c.ApprovalMode, "approval-mode", envOr(getenv, "CADUCEUS_APPROVAL_MODE", "smart"), "default approval policy of new sessions: manual, smart or off (env CADUCEUS_APPROVAL_MODE)")
	fs.StringVar(&c.DemoScript, "demo-script", envOr(getenv, "CADUCEUS_DEMO_SCRIPT", ""), "JSON script for the offline demo model (env CADUCEUS_DEMO_SCRIPT)")
	fs.IntVar(&c.MaxConcurrent, "max-concurrent", 8, "runs this runner executes at once")
	fs.IntVar(&c.MaxSubagents, "max-subagents", 3, "child runs of one delegate call that run at once")
	stuck, err := intEnv(getenv, "CADUCEUS_STUCK_REPEATS", 3)
	if err != nil {
		return c, err
	}
	fs.IntVar(&c.StuckRepeats, "stuck-repeats", stuck, "pause a run as stuck after this many identical tool calls in a row; 0 never (env CADUCEUS_STUCK_REPEATS)")
	fs.StringVar(&c.CheckpointDir, "checkpoint-dir", envOr(getenv, "CADUCEUS_CHECKPOINT_DIR", ""), "directory of the workspaces' checkpoints, on the host whose workspaces they record (env CADUCEUS_CHECKPOINT_DIR; default <data-dir>/checkpoints)")
	maxCkp, err := int64Env(getenv, "CADUCEUS_CHECKPOINT_MAX_BYTES", DefaultCheckpointMaxBytes)
	if err != nil {
		return c, err
	}
	fs.Int64Var(&c.CheckpointMaxBytes, "checkpoint-max-bytes", maxCkp, "size cap of each workspace's checkpoints; the oldest are pruned after a run; 0 never prunes (env CADUCEUS_CHECKPOINT_MAX_BYTES)")
	// The environment is read after parsing, not as the flag's default,
	// so --help never prints a URL that may hold a password.
	fs.StringVar(&c.Database, "database", "", "PostgreSQL URL (postgres://...) of a store shared by several hosts; default the SQLite file in the data dir (env CADUCEUS_DATABASE_URL, the place for a URL with a password)")
	durs := []struct {
		p         *time.Duration
		name, env string
		def       time.Duration
		usage     string
		serveOnly bool
	}{
		{&c.ApprovalTTL, "approval-timeout", "CADUCEUS_APPROVAL_TIMEOUT", 0, "expire unanswered approvals and questions after this long; 0 never", false},
		{&c.Lease, "lease", "CADUCEUS_LEASE", 15 * time.Second, "run lease; a runner silent this long loses its runs", false},
		{&c.Grace, "grace", "CADUCEUS_GRACE", 10 * time.Second, "on SIGTERM, how long runs may take to reach a step boundary before they are handed over", false},
		{&c.RetryBackoff, "retry-backoff", "CADUCEUS_RETRY_BACKOFF", 2 * time.Second, "wait before the first automatic retry; doubles with each retry", true},
		{&c.ReadTimeout, "read-timeout", "CADUCEUS_READ_TIMEOUT", DefaultReadTimeout, "longest time to read a request, headers and body (event streams exempt)", true},
		{&c.WriteTimeout, "write-timeout", "CADUCEUS_WRITE_TIMEOUT", DefaultWriteTimeout, "longest time to write a response, or one write of an event stream", true},
		{&c.IdleTimeout, "idle-timeout", "CADUCEUS_IDLE_TIMEOUT", DefaultIdleTimeout, "close a keep-alive connection idle this long", true},
		{&c.TerminalIdle, "terminal-idle", "CADUCEUS_TERMINAL_IDLE", DefaultTerminalIdle, "close a terminal no browser is attached to and that wrote nothing for this long", true},
	}
	for _, d := range durs {
		if cmd != "serve" && d.serveOnly {
			continue
		}
		def, err := durationEnv(getenv, d.env, d.def)
		if err != nil {
			return c, err
		}
		fs.DurationVar(d.p, d.name, def, d.usage+" (env "+d.env+")")
	}
	c.Telemetry.flags(fs, cmd, getenv)
	if err := c.Network.flags(fs, getenv); err != nil { // h18-browser
		return c, err
	}
	killOrphans := fs.Bool("kill-orphans", getenv("CADUCEUS_KILL_ORPHANS") != "0",
		"kill the background processes a runner that died left behind when a sweep finds them; false lists them as orphaned in the console, for a person to kill (env CADUCEUS_KILL_ORPHANS=0 for false)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("%s: unexpected argument %q", cmd, fs.Arg(0))
	}
	c.KeepOrphans = !*killOrphans
	if c.StuckRepeats == 0 {
		c.StuckRepeats = -1
	} else if c.StuckRepeats < 0 {
		return c, errors.New("stuck-repeats must not be negative (0 never pauses a run as stuck)")
	}
	if c.Database == "" {
		c.Database = getenv("CADUCEUS_DATABASE_URL")
	}
	c.Token = getenv("CADUCEUS_TOKEN")
	c.Getenv = getenv
	return c, c.finish()
}

// emailDomain is what --git-email-domain accepts: dot-separated labels of
// letters, digits and hyphens.
var emailDomain = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$`)

// finish checks and completes a parsed Config.
func (c *Config) finish() error {
	mode, err := policy.ParseMode(c.ApprovalMode)
	if err != nil {
		return fmt.Errorf("approval-mode: %w", err)
	}
	c.ApprovalMode = string(mode)
	if c.UploadMaxBytes < 0 || c.UploadMaxRequestBytes < 0 || c.UploadMaxBytes > c.UploadMaxRequestBytes {
		return fmt.Errorf("upload-max-bytes (%d) must be positive and at most upload-max-request-bytes (%d)", c.UploadMaxBytes, c.UploadMaxRequestBytes)
	}
	switch c.Runner {
	case RunnerInProcess, RunnerNone, RunnerOnly:
	default:
		return fmt.Errorf("runner must be inprocess or none, not %q", c.Runner)
	}
	if d := c.GitEmailDomain; d != "" && !emailDomain.MatchString(d) {
		return fmt.Errorf("git-email-domain must be a domain such as example.com, not %q", d)
	}
	if c.PublicURL != "" { // h17-hooks
		u, err := url.Parse(c.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("public-url must be an absolute http:// or https:// address without query, such as https://caduceus.example.com, not %q", c.PublicURL)
		}
		c.PublicURL = strings.TrimRight(c.PublicURL, "/")
	}
	if c.DataDir == "" {
		return errors.New("no data directory: set --data-dir or CADUCEUS_DATA_DIR (HOME is not set)")
	}
	if c.ConfigFile == "" {
		c.ConfigFile = filepath.Join(c.DataDir, "config.json")
	}
	if c.CheckpointDir == "" {
		c.CheckpointDir = filepath.Join(c.DataDir, "checkpoints")
	}
	if c.Workspace == "" {
		if c.Workspace, err = os.Getwd(); err != nil {
			return fmt.Errorf("workspace: %w", err)
		}
	}
	if c.Workspace, err = filepath.Abs(c.Workspace); err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	if fi, err := os.Stat(c.Workspace); err != nil || !fi.IsDir() {
		return fmt.Errorf("workspace %s is not a directory", c.Workspace)
	}
	for i, r := range c.WorkspaceRoots {
		if c.WorkspaceRoots[i], err = filepath.Abs(r); err != nil {
			return fmt.Errorf("workspace-root: %w", err)
		}
		if fi, err := os.Stat(c.WorkspaceRoots[i]); err != nil || !fi.IsDir() {
			return fmt.Errorf("workspace-root %s is not a directory", c.WorkspaceRoots[i])
		}
	}
	switch {
	case c.Lease < time.Second:
		return errors.New("lease must be at least 1s")
	case c.ApprovalTTL < 0:
		return errors.New("approval-timeout must not be negative")
	case c.Grace < 0:
		return errors.New("grace must not be negative")
	case c.MaxRetries < 0 || c.MaxRetries > 100:
		return errors.New("max-retries must be between 0 and 100")
	case c.RetryBackoff < 0:
		return errors.New("retry-backoff must not be negative")
	case c.MaxConcurrent < 1:
		return errors.New("max-concurrent must be at least 1")
	case c.MaxSubagents < 1:
		return errors.New("max-subagents must be at least 1")
	case c.StuckRepeats > 1000:
		return errors.New("stuck-repeats must be at most 1000")
	case c.CheckpointMaxBytes < 0:
		return errors.New("checkpoint-max-bytes must not be negative (0 never prunes)")
	}
	if err := c.Network.check(); err != nil { // h18-browser
		return err
	}
	if err := c.Telemetry.check(); err != nil {
		return err
	}
	if c.Runner == RunnerOnly {
		return checkDatabase(c.Database) // no listener to bound
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"read-timeout", c.ReadTimeout}, {"write-timeout", c.WriteTimeout}, {"idle-timeout", c.IdleTimeout}, {"terminal-idle", c.TerminalIdle}} {
		if d.v < 100*time.Millisecond {
			return fmt.Errorf("%s must be at least 100ms, not %s", d.name, d.v)
		}
	}
	// On the command line 0 turns a limit off; in Config zero is the
	// default and a negative value no limit.
	for _, p := range []struct {
		name string
		v    *int
	}{{"max-conns-per-addr", &c.MaxConnsPerAddr}, {"max-streams-per-addr", &c.MaxStreamsPerAddr}, {"max-terminals", &c.MaxTerminals}} {
		switch {
		case *p.v < 0:
			return fmt.Errorf("%s must not be negative (0 turns the limit off)", p.name)
		case *p.v == 0:
			*p.v = -1
		}
	}
	return checkDatabase(c.Database)
}

// checkDatabase accepts an empty value (SQLite) or a postgres:// URL. Its
// errors never quote the value: it may hold a password.
func checkDatabase(v string) error {
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	if err != nil {
		return errors.New("database (--database, CADUCEUS_DATABASE_URL) is not a URL: want postgres://user@host:port/dbname")
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return fmt.Errorf("database (--database, CADUCEUS_DATABASE_URL) must be a postgres:// URL, not a %q one; leave it empty for the SQLite file in the data dir", u.Scheme)
	}
	return nil
}

// DatabasePassword is the password in the database URL, if it has one:
// a secret to redact.
func (c Config) DatabasePassword() string {
	u, err := url.Parse(c.Database)
	if err != nil || u.User == nil {
		return ""
	}
	p, _ := u.User.Password()
	return p
}

func envOr(getenv func(string) string, k, def string) string {
	if v := getenv(k); v != "" {
		return v
	}
	return def
}

func intEnv(getenv func(string) string, k string, def int) (int, error) {
	v := getenv(k)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", k, err)
	}
	return n, nil
}

func int64Env(getenv func(string) string, k string, def int64) (int64, error) {
	v := getenv(k)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%s: want a positive number of bytes, got %q", k, v)
	}
	return n, nil
}

// Upload bounds by default: a phone photo or a PDF fits in the first; a
// few of them in the second.
const (
	DefaultUploadMaxBytes        int64 = 20 << 20
	DefaultUploadMaxRequestBytes int64 = 50 << 20
)

// DefaultCheckpointMaxBytes is the default size cap of one workspace's
// checkpoints.
const DefaultCheckpointMaxBytes = 512 << 20

func durationEnv(getenv func(string) string, k string, def time.Duration) (time.Duration, error) {
	v := getenv(k)
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", k, err)
	}
	return d, nil
}

// defaultDataDir follows the XDG base directory spec.
func defaultDataDir(getenv func(string) string) string {
	if x := getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "caduceus")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "share", "caduceus")
	}
	return ""
}

// listFlag is a repeatable string flag. The first use on the command line
// replaces the environment's list rather than adding to it, as every
// other flag wins over its variable.
type listFlag struct {
	v   *[]string
	set bool
}

func (l *listFlag) String() string {
	if l == nil || l.v == nil {
		return ""
	}
	return strings.Join(*l.v, string(filepath.ListSeparator))
}

func (l *listFlag) Set(s string) error {
	if s == "" {
		return errors.New("must not be empty")
	}
	if !l.set {
		*l.v, l.set = nil, true
	}
	*l.v = append(*l.v, s)
	return nil
}
