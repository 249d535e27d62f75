// Package config reads Caduceus's settings from flags and environment
// variables. Every flag has an environment equivalent; a flag given on the
// command line wins. Secrets (the access token) come only from the
// environment, so they never show in a process listing.
package config

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/caduceus-dev/caduceus/internal/policy"
)

// Config is the resolved configuration of `caduceus serve` or
// `caduceus runner`.
type Config struct {
	Addr        string
	DataDir     string
	Workspace   string
	Token       string
	DemoScript  string
	ApprovalTTL time.Duration
	Lease       time.Duration
	Version     string
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
	// Getenv reads provider keys (OPENAI_API_KEY, ...) when they are needed,
	// so they are never copied into the configuration.
	Getenv func(string) string
	// Observability (see telemetry.go).
	Telemetry
}

// Where runs execute.
const (
	RunnerInProcess = "inprocess"
	RunnerNone      = "none"
	RunnerOnly      = "only"
)

// DefaultAddr is loopback: nothing listens beyond this machine by default.
const DefaultAddr = "127.0.0.1:7420"

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
		fs.IntVar(&c.MaxRetries, "max-retries", 2, "automatic retries of a run whose runner died or whose provider failed transiently")
	} else {
		c.Runner = RunnerOnly
	}
	fs.StringVar(&c.DataDir, "data-dir", envOr(getenv, "CADUCEUS_DATA_DIR", defaultDataDir(getenv)), "directory of the database (env CADUCEUS_DATA_DIR)")
	fs.StringVar(&c.Workspace, "workspace", envOr(getenv, "CADUCEUS_WORKSPACE", ""), "default workspace of new sessions (env CADUCEUS_WORKSPACE; default: the current directory)")
	fs.StringVar(&c.ConfigFile, "config", envOr(getenv, "CADUCEUS_CONFIG", ""), "providers and models file (env CADUCEUS_CONFIG; default <data-dir>/config.json)")
	fs.StringVar(&c.ApprovalMode, "approval-mode", envOr(getenv, "CADUCEUS_APPROVAL_MODE", "smart"), "default approval policy of new sessions: manual, smart or off (env CADUCEUS_APPROVAL_MODE)")
	fs.StringVar(&c.DemoScript, "demo-script", envOr(getenv, "CADUCEUS_DEMO_SCRIPT", ""), "JSON script for the offline demo model (env CADUCEUS_DEMO_SCRIPT)")
	fs.IntVar(&c.MaxConcurrent, "max-concurrent", 8, "runs this runner executes at once")
	durs := []struct {
		p         *time.Duration
		name, env string
		def       time.Duration
		usage     string
	}{
		{&c.ApprovalTTL, "approval-timeout", "CADUCEUS_APPROVAL_TIMEOUT", 0, "expire unanswered approvals and questions after this long; 0 never"},
		{&c.Lease, "lease", "CADUCEUS_LEASE", 15 * time.Second, "run lease; a runner silent this long loses its runs"},
		{&c.Grace, "grace", "CADUCEUS_GRACE", 10 * time.Second, "on SIGTERM, how long runs may take to reach a step boundary before they are handed over"},
		{&c.RetryBackoff, "retry-backoff", "CADUCEUS_RETRY_BACKOFF", 2 * time.Second, "wait before the first automatic retry; doubles with each retry"},
	}
	for _, d := range durs {
		if cmd != "serve" && d.name == "retry-backoff" {
			continue
		}
		def, err := durationEnv(getenv, d.env, d.def)
		if err != nil {
			return c, err
		}
		fs.DurationVar(d.p, d.name, def, d.usage+" (env "+d.env+")")
	}
	c.Telemetry.flags(fs, cmd, getenv)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("%s: unexpected argument %q", cmd, fs.Arg(0))
	}
	c.Token = getenv("CADUCEUS_TOKEN")
	c.Getenv = getenv
	return c, c.finish()
}

// finish checks and completes a parsed Config.
func (c *Config) finish() error {
	mode, err := policy.ParseMode(c.ApprovalMode)
	if err != nil {
		return fmt.Errorf("approval-mode: %w", err)
	}
	c.ApprovalMode = string(mode)
	switch c.Runner {
	case RunnerInProcess, RunnerNone, RunnerOnly:
	default:
		return fmt.Errorf("runner must be inprocess or none, not %q", c.Runner)
	}
	if c.DataDir == "" {
		return errors.New("no data directory: set --data-dir or CADUCEUS_DATA_DIR (HOME is not set)")
	}
	if c.ConfigFile == "" {
		c.ConfigFile = filepath.Join(c.DataDir, "config.json")
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
	}
	return c.Telemetry.check()
}

func envOr(getenv func(string) string, k, def string) string {
	if v := getenv(k); v != "" {
		return v
	}
	return def
}

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
