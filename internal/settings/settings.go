// Package settings is the console's configuration kept in the database
// (issue 16): model providers added, edited and removed while the server
// runs, their API keys sealed by internal/secretbox, and the settings
// (default model, approval mode, retries, notifications).
//
// The environment and config.json configure providers and settings too;
// those win and are shown read-only. A change made here reaches this
// process at once (Reload after every write) and the other processes
// sharing the database within PollEvery (Watch polls two small tables:
// simpler than a journal event, and it also sees a change made by a
// process that died before announcing it).
package settings

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/caduceus-dev/caduceus/internal/models"
	"github.com/caduceus-dev/caduceus/internal/secretbox"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// PollEvery is how often Watch looks for changes other processes made.
const PollEvery = 2 * time.Second

// Registry is the model registry the providers go to.
type Registry interface {
	SetStored(defs []models.Stored)
	SetDefault(ref string)
	Describe() []models.Described
	Source(name string) string
	ConfigDefault() string
}

// Redactor learns every key opened, so none reaches a log or an output.
type Redactor interface{ Add(secrets ...string) }

// Keys gives the box sealing API keys. create asks for a key to be made
// when none exists yet (the data dir's key file); without create, or
// when no key can exist (PostgreSQL without CADUCEUS_SECRET_KEY), it
// returns ErrNoKey.
type Keys func(create bool) (*secretbox.Box, error)

// ErrNoKey means no key to seal or open API keys with is configured.
var ErrNoKey = errors.New("no secret key")

// Applied receives the effective settings after each change.
type Applied func(Effective)

// Config assembles a Service.
type Config struct {
	Store    store.Store
	Registry Registry
	Redactor Redactor
	Keys     Keys
	// Factories build a client for "test"; the registry's own.
	Factories map[string]models.Factory
	// Fixed are the settings the environment or command line set: shown,
	// not editable, and winning over the stored value.
	Fixed map[string]Fixed
	// Defaults are the values in force when nothing sets a key.
	Defaults Effective
	Apply    Applied
	Now      func() time.Time
	Log      *slog.Logger
	// TestTimeout bounds "test"; default 10s.
	TestTimeout time.Duration
}

// Fixed is a setting's value from outside the console, and where from
// ("env", "flag", "config").
type Fixed struct {
	Value  any    `json:"value"`
	Source string `json:"source"`
}

// Service manages providers and settings. Safe for concurrent use.
type Service struct {
	cfg Config

	mu       sync.Mutex
	stamp    string            // what the last Reload saw
	keyErrs  map[string]string // provider id -> why its key did not open
	settings map[string]string // stored key -> JSON
}

// New returns a Service; call Reload before serving.
func New(cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.TestTimeout <= 0 {
		cfg.TestTimeout = 10 * time.Second
	}
	if cfg.Apply == nil {
		cfg.Apply = func(Effective) {}
	}
	return &Service{cfg: cfg, keyErrs: map[string]string{}, settings: map[string]string{}}
}

// Reload reads providers and settings from the store and hands them to
// the registry and Apply if anything changed since the last Reload.
func (s *Service) Reload(ctx context.Context) error {
	provs, err := s.cfg.Store.ListProviders(ctx)
	if err != nil {
		return fmt.Errorf("load providers: %w", err)
	}
	sets, err := s.cfg.Store.ListSettings(ctx)
	if err != nil {
		return fmt.Errorf("load settings: %w", err)
	}
	stamp := stampOf(provs, sets)
	s.mu.Lock()
	defer s.mu.Unlock()
	if stamp == s.stamp {
		return nil
	}
	var defs []models.Stored
	keyErrs := map[string]string{}
	var keys []string
	for _, p := range provs {
		key := ""
		if p.APIKeySealed != "" {
			key, err = s.open(p)
			if err != nil {
				keyErrs[p.ID] = err.Error()
				s.cfg.Log.Error("a provider's API key does not open: the provider is left out", "provider", p.Name, "err", err)
				continue
			}
			keys = append(keys, key)
		}
		headers, err := s.openHeaders(p)
		if err != nil {
			keyErrs[p.ID] = err.Error()
			s.cfg.Log.Error("a provider's headers do not open: the provider is left out", "provider", p.Name, "err", err)
			continue
		}
		for _, v := range headers {
			keys = append(keys, v)
		}
		if !p.Enabled {
			continue
		}
		defs = append(defs, models.Stored{ID: p.ID, Name: p.Name, APIKey: key, Config: models.ProviderConfig{Type: p.Kind,
			BaseURL: p.BaseURL, Models: p.Models, DefaultModel: p.DefaultModel, Headers: headers}})
	}
	if s.cfg.Redactor != nil {
		s.cfg.Redactor.Add(keys...)
	}
	s.cfg.Registry.SetStored(defs)
	s.keyErrs = keyErrs
	s.settings = map[string]string{}
	for _, st := range sets {
		s.settings[st.Key] = st.Value
	}
	eff := s.effectiveLocked()
	s.cfg.Registry.SetDefault(eff.DefaultModel)
	s.cfg.Apply(eff)
	s.stamp = stamp
	return nil
}

// open opens a provider's sealed key.
func (s *Service) open(p store.Provider) (string, error) {
	box, err := s.cfg.Keys(false)
	if err != nil {
		return "", fmt.Errorf("the API key of provider %s cannot be opened: %w", p.Name, err)
	}
	key, err := box.Open(p.APIKeySealed, p.ID)
	if err != nil {
		return "", fmt.Errorf("the API key of provider %s cannot be opened: %w", p.Name, err)
	}
	return key, nil
}

// stampOf summarises what Reload would load: ids and update times.
func stampOf(provs []store.Provider, sets []store.Setting) string {
	var b strings.Builder
	for _, p := range provs {
		b.WriteString(p.ID + "@" + strconv.FormatInt(p.UpdatedAt.UnixNano(), 10) + ";")
	}
	b.WriteString("|")
	for _, st := range sets {
		b.WriteString(st.Key + "@" + strconv.FormatInt(st.UpdatedAt.UnixNano(), 10) + "=" + st.Value + ";")
	}
	return b.String()
}

// Watch reloads every PollEvery until ctx ends, so that changes other
// processes make take effect here.
func (s *Service) Watch(ctx context.Context, every time.Duration) {
	if every <= 0 {
		every = PollEvery
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := s.Reload(ctx); err != nil && ctx.Err() == nil {
				s.cfg.Log.Warn("reloading providers and settings failed; keeping the last ones", "err", err)
			}
		}
	}
}

// CheckKey refuses to start a server whose database holds sealed keys
// it has no key to open: better said at start than as failing runs.
func CheckKey(ctx context.Context, st store.Store, keys Keys) error {
	provs, err := st.ListProviders(ctx)
	if err != nil {
		return fmt.Errorf("load providers: %w", err)
	}
	i := slices.IndexFunc(provs, func(p store.Provider) bool { return p.APIKeySealed != "" })
	if i < 0 {
		return nil
	}
	if _, err := keys(false); err != nil {
		return fmt.Errorf("the database holds encrypted provider API keys (provider %s) but %w: set %s to the key the other servers use",
			provs[i].Name, err, secretbox.EnvKey)
	}
	return nil
}
