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

// Config is the resolved configuration of `caduceus serve`.
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
	// Getenv reads provider keys (OPENAI_API_KEY, ...) when they are needed,
	// so they are never copied into the configuration.
	Getenv func(string) string
}

// DefaultAddr is loopback: nothing listens beyond this machine by default.
const DefaultAddr = "127.0.0.1:7420"

// ParseServe parses the flags of `serve` with env as the environment.
func ParseServe(args []string, getenv func(string) string) (Config, error) {
	var c Config
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	fs.StringVar(&c.Addr, "addr", envOr(getenv, "CADUCEUS_ADDR", DefaultAddr), "listen address (env CADUCEUS_ADDR)")
	fs.StringVar(&c.DataDir, "data-dir", envOr(getenv, "CADUCEUS_DATA_DIR", defaultDataDir(getenv)), "directory of the database (env CADUCEUS_DATA_DIR)")
	fs.StringVar(&c.Workspace, "workspace", envOr(getenv, "CADUCEUS_WORKSPACE", ""), "default workspace of new sessions (env CADUCEUS_WORKSPACE; default: the current directory)")
	fs.StringVar(&c.ConfigFile, "config", envOr(getenv, "CADUCEUS_CONFIG", ""), "providers and models file (env CADUCEUS_CONFIG; default <data-dir>/config.json)")
	fs.StringVar(&c.ApprovalMode, "approval-mode", envOr(getenv, "CADUCEUS_APPROVAL_MODE", "smart"), "default approval policy of new sessions: manual, smart or off (env CADUCEUS_APPROVAL_MODE)")
	fs.StringVar(&c.DemoScript, "demo-script", envOr(getenv, "CADUCEUS_DEMO_SCRIPT", ""), "JSON script for the offline demo model (env CADUCEUS_DEMO_SCRIPT)")
	ttl, err := durationEnv(getenv, "CADUCEUS_APPROVAL_TIMEOUT", 0)
	if err != nil {
		return c, err
	}
	lease, err := durationEnv(getenv, "CADUCEUS_LEASE", 15*time.Second)
	if err != nil {
		return c, err
	}
	fs.DurationVar(&c.ApprovalTTL, "approval-timeout", ttl, "expire unanswered approvals and questions after this long; 0 never (env CADUCEUS_APPROVAL_TIMEOUT)")
	fs.DurationVar(&c.Lease, "lease", lease, "run lease; a runner silent this long loses its runs (env CADUCEUS_LEASE)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("serve: unexpected argument %q", fs.Arg(0))
	}
	c.Token = getenv("CADUCEUS_TOKEN")
	c.Getenv = getenv
	mode, err := policy.ParseMode(c.ApprovalMode)
	if err != nil {
		return c, fmt.Errorf("approval-mode: %w", err)
	}
	c.ApprovalMode = string(mode)
	if c.DataDir == "" {
		return c, errors.New("no data directory: set --data-dir or CADUCEUS_DATA_DIR (HOME is not set)")
	}
	if c.ConfigFile == "" {
		c.ConfigFile = filepath.Join(c.DataDir, "config.json")
	}
	if c.Workspace == "" {
		if c.Workspace, err = os.Getwd(); err != nil {
			return c, fmt.Errorf("workspace: %w", err)
		}
	}
	if c.Workspace, err = filepath.Abs(c.Workspace); err != nil {
		return c, fmt.Errorf("workspace: %w", err)
	}
	if fi, err := os.Stat(c.Workspace); err != nil || !fi.IsDir() {
		return c, fmt.Errorf("workspace %s is not a directory", c.Workspace)
	}
	if c.Lease < time.Second {
		return c, errors.New("lease must be at least 1s")
	}
	if c.ApprovalTTL < 0 {
		return c, errors.New("approval-timeout must not be negative")
	}
	return c, nil
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
