package app

// Providers and settings (issue 16, h16-providers): where the key sealing
// API keys comes from, and which settings the environment fixes.

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/caduceus-dev/caduceus/internal/config"
	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/hook"
	"github.com/caduceus-dev/caduceus/internal/models"
	"github.com/caduceus-dev/caduceus/internal/runner"
	"github.com/caduceus-dev/caduceus/internal/secret"
	"github.com/caduceus-dev/caduceus/internal/secretbox"
	"github.com/caduceus-dev/caduceus/internal/settings"
)

// secretKeys chooses the key sealing provider API keys: CADUCEUS_SECRET_KEY
// when set (a malformed one stops the start); else, for SQLite, the data
// dir's key file, made on first use; else (PostgreSQL, whose several
// servers must share one key that no server can make alone) none.
//
// The key, once known, is redacted in every text form (red.Add).
func secretKeys(cfg config.Config, getenv func(string) string, red *secret.Redactor) (settings.Keys, error) {
	if v := getenv(secretbox.EnvKey); v != "" {
		box, err := secretbox.FromEnv(v)
		if err != nil {
			return nil, err
		}
		red.Add(box.TextForms()...)
		return func(bool) (*secretbox.Box, error) { return box, nil }, nil
	}
	if shared(cfg) {
		return func(bool) (*secretbox.Box, error) {
			return nil, fmt.Errorf("%w: a server on PostgreSQL takes its key from %s (base64 of 32 random bytes, the same on every server; make one with: head -c 32 /dev/urandom | base64)",
				settings.ErrNoKey, secretbox.EnvKey)
		}, nil
	}
	path := filepath.Join(cfg.DataDir, secretbox.KeyFileName)
	var mu sync.Mutex
	var box *secretbox.Box
	return func(create bool) (*secretbox.Box, error) {
		mu.Lock()
		defer mu.Unlock()
		if box != nil {
			return box, nil
		}
		var err error
		if create {
			box, err = secretbox.LoadOrCreateFile(path)
		} else {
			box, err = secretbox.LoadFile(path)
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: the key file %s does not exist", settings.ErrNoKey, path)
		}
		if err == nil {
			red.Add(box.TextForms()...)
		}
		return box, err
	}, nil
}

// fixedSettings are the settings the environment and config.json set: in
// force, and read-only in the console. Command-line flags alone are the
// defaults the console's values override; a flag given beside the
// variable wins over it, so the value shown is the one in force, named
// as the command line's when it is not the variable's.
func fixedSettings(file models.File, getenv func(string) string, cfg config.Config) map[string]settings.Fixed {
	fixed := map[string]settings.Fixed{}
	if file.DefaultModel != "" {
		fixed[settings.KeyDefaultModel] = settings.Fixed{Value: file.DefaultModel, Source: "config"}
	}
	from := func(same bool) string {
		if same {
			return "env"
		}
		return "flag"
	}
	if v := getenv("CADUCEUS_APPROVAL_MODE"); v != "" {
		fixed[settings.KeyApprovalMode] = settings.Fixed{Value: cfg.ApprovalMode,
			Source: from(strings.EqualFold(strings.TrimSpace(v), cfg.ApprovalMode))}
	}
	if v := getenv("CADUCEUS_APPROVAL_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		fixed[settings.KeyApprovalTimeout] = settings.Fixed{Value: cfg.ApprovalTTL.String(), Source: from(err == nil && d == cfg.ApprovalTTL)}
	}
	if v := getenv("CADUCEUS_RETRY_BACKOFF"); v != "" {
		d, err := time.ParseDuration(v)
		fixed[settings.KeyRetryBackoff] = settings.Fixed{Value: cfg.RetryBackoff.String(), Source: from(err == nil && d == cfg.RetryBackoff)}
	}
	return fixed
}

// settingsDefaults are the values in force where neither the console nor
// the environment sets one: the command line's.
func settingsDefaults(cfg config.Config) settings.Effective {
	return settings.Effective{ApprovalMode: cfg.ApprovalMode, ApprovalTimeout: settings.Duration(cfg.ApprovalTTL),
		MaxRetries: cfg.MaxRetries, RetryBackoff: settings.Duration(cfg.RetryBackoff),
		Notifications: settings.Notifications{Approvals: true, Questions: true}}
}

// applySettings hands the settings in force to the parts that use them;
// the registry takes the default model itself.
func (a *App) applySettings(e settings.Effective) {
	if a.runner != nil {
		a.runner.SetPolicy(runner.Policy{ApprovalMode: e.ApprovalMode, ApprovalTTL: durationOf(e.ApprovalTimeout)})
	}
	if a.control != nil {
		a.control.SetRetryPolicy(control.RetryPolicy{Max: e.MaxRetries, Backoff: durationOf(e.RetryBackoff)})
	}
}

func durationOf(d settings.Duration) time.Duration { return time.Duration(d) }

// hookSecrets opens webhook secrets (h17-hooks) with the key provider API
// keys are sealed with; a server without one yet makes none for it.
func hookSecrets(keys settings.Keys) func() (hook.Opener, error) {
	return func() (hook.Opener, error) {
		box, err := keys(false)
		if err != nil {
			return nil, err
		}
		return box, nil
	}
}

// runHookKey is the key signing deliveries to a run's own webhook_url:
// derived from the secretbox key, so every server sharing it signs alike.
func runHookKey(keys settings.Keys) func() (string, error) {
	return func() (string, error) {
		box, err := keys(false)
		if err != nil {
			return "", err
		}
		return box.Derive(hook.RunKeyLabel), nil
	}
}

// runLink is where a webhook's payload sends people to see a run: its
// session in the workbench at --public-url (nil without one: no link).
func runLink(public string) func(sessionID, runID string) string {
	if public == "" {
		return nil
	}
	return func(sessionID, _ string) string { return public + "/s/" + sessionID }
}
