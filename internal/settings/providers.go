package settings

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/models"
	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/secret"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// ProviderView is a provider as the API shows it. It never holds a key:
// APIKey is the masked hint ("sk-…4f2a"), "" when no key is set or the
// key is too short to show any of it.
type ProviderView struct {
	ID           string   `json:"id,omitempty"` // database providers only
	Name         string   `json:"name"`
	Kind         string   `json:"kind"`
	BaseURL      string   `json:"base_url"`
	HasKey       bool     `json:"has_key"`
	APIKey       string   `json:"api_key"`
	DefaultModel string   `json:"default_model"`
	Models       []string `json:"models"`
	// Headers are the names of the extra HTTP headers sent; their values
	// are write-only, like the key.
	Headers   []string  `json:"headers"`
	Enabled   bool      `json:"enabled"`
	Source    string    `json:"source"` // env, config, database
	ReadOnly  bool      `json:"read_only"`
	Error     string    `json:"error,omitempty"`
	CreatedAt time.Time `json:"created_at,omitzero"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
}

// ProviderInput creates or changes a database provider; nil leaves a
// field as it is (or empty on create). An empty APIKey removes the key.
type ProviderInput struct {
	Name         *string   `json:"name"`
	Kind         *string   `json:"kind"`
	BaseURL      *string   `json:"base_url"`
	APIKey       *string   `json:"api_key"`
	DefaultModel *string   `json:"default_model"`
	Models       *[]string `json:"models"`
	// Headers replaces the extra HTTP headers ({} removes them all).
	Headers *map[string]string `json:"headers"`
	Enabled *bool              `json:"enabled"`
}

// Providers lists every provider: the environment's and config file's
// (read-only) and the database's, disabled and broken ones included.
func (s *Service) Providers(ctx context.Context) ([]ProviderView, error) {
	stored, err := s.cfg.Store.ListProviders(ctx)
	if err != nil {
		return nil, fmt.Errorf("list providers: %w", err)
	}
	out := []ProviderView{}
	for _, d := range s.cfg.Registry.Describe() {
		if d.Source == models.SourceDatabase {
			continue
		}
		out = append(out, ProviderView{Name: d.Name, Kind: d.Type, BaseURL: d.BaseURL, HasKey: d.HasKey, APIKey: d.KeyHint,
			DefaultModel: d.DefaultModel, Models: nonNil(d.Models), Headers: []string{}, Enabled: true, Source: d.Source, ReadOnly: true, Error: d.Error})
	}
	for _, p := range stored {
		out = append(out, s.view(p))
	}
	return out, nil
}

// Provider returns a database provider.
func (s *Service) Provider(ctx context.Context, pid string) (ProviderView, error) {
	p, err := s.get(ctx, pid)
	if err != nil {
		return ProviderView{}, err
	}
	return s.view(p), nil
}

func (s *Service) get(ctx context.Context, pid string) (store.Provider, error) {
	p, err := s.cfg.Store.GetProvider(ctx, pid)
	if errors.Is(err, store.ErrNotFound) {
		return p, errorf(CodeNotFound, "", "no provider %q in the database (providers of the environment and config.json cannot be changed here)", pid)
	}
	return p, err
}

func (s *Service) view(p store.Provider) ProviderView {
	v := ProviderView{ID: p.ID, Name: p.Name, Kind: p.Kind, BaseURL: p.BaseURL, HasKey: p.APIKeySealed != "", APIKey: p.APIKeyHint,
		DefaultModel: p.DefaultModel, Models: nonNil(p.Models), Headers: nonNil(p.HeaderNames), Enabled: p.Enabled, Source: models.SourceDatabase,
		CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
	if src := s.cfg.Registry.Source(p.Name); src != "" && src != models.SourceDatabase {
		v.Error = fmt.Sprintf("unused: the %s defines a provider named %s, which wins", sourceName(src), p.Name)
	}
	s.mu.Lock()
	if e, ok := s.keyErrs[p.ID]; ok {
		v.Error = e
	}
	s.mu.Unlock()
	return v
}

func nonNil(ms []string) []string {
	if ms == nil {
		return []string{}
	}
	return ms
}

// CreateProvider adds a database provider; it is usable at once.
func (s *Service) CreateProvider(ctx context.Context, in ProviderInput) (ProviderView, error) {
	if in.Name == nil || in.Kind == nil {
		return ProviderView{}, errorf(CodeInvalidInput, "name", "name and kind are required")
	}
	now := s.cfg.Now()
	p := store.Provider{ID: id.New("prv"), Enabled: true, CreatedAt: now, UpdatedAt: now}
	if err := s.apply(&p, in); err != nil {
		return ProviderView{}, err
	}
	if err := s.cfg.Store.Write(ctx, func(tx store.Tx) error { return tx.InsertProvider(ctx, p) }); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return ProviderView{}, errorf(CodeNameTaken, "name", "a provider named %q exists already", p.Name)
		}
		return ProviderView{}, fmt.Errorf("add provider: %w", err)
	}
	if err := s.Reload(ctx); err != nil {
		return ProviderView{}, err
	}
	return s.Provider(ctx, p.ID)
}

// UpdateProvider changes a database provider; runs resolved from now on
// use the change.
func (s *Service) UpdateProvider(ctx context.Context, pid string, in ProviderInput) (ProviderView, error) {
	p, err := s.get(ctx, pid)
	if err != nil {
		return ProviderView{}, err
	}
	if err := s.apply(&p, in); err != nil {
		return ProviderView{}, err
	}
	p.UpdatedAt = s.cfg.Now()
	if err := s.cfg.Store.Write(ctx, func(tx store.Tx) error { return tx.UpdateProvider(ctx, p) }); err != nil {
		switch {
		case errors.Is(err, store.ErrConflict):
			return ProviderView{}, errorf(CodeNameTaken, "name", "a provider named %q exists already", p.Name)
		case errors.Is(err, store.ErrNotFound):
			return ProviderView{}, errorf(CodeNotFound, "", "no provider %q in the database", pid)
		}
		return ProviderView{}, fmt.Errorf("update provider: %w", err)
	}
	if err := s.Reload(ctx); err != nil {
		return ProviderView{}, err
	}
	return s.Provider(ctx, p.ID)
}

// DeleteProvider removes a database provider. Sessions naming its
// models fail to resolve them from now on, with the reason.
func (s *Service) DeleteProvider(ctx context.Context, pid string) error {
	err := s.cfg.Store.Write(ctx, func(tx store.Tx) error { return tx.DeleteProvider(ctx, pid) })
	if errors.Is(err, store.ErrNotFound) {
		return errorf(CodeNotFound, "", "no provider %q in the database", pid)
	}
	if err != nil {
		return fmt.Errorf("delete provider: %w", err)
	}
	return s.Reload(ctx)
}

// apply checks in and writes it to p; on error p is unusable and nothing
// was stored.
func (s *Service) apply(p *store.Provider, in ProviderInput) error {
	if in.Name != nil {
		n := strings.TrimSpace(*in.Name)
		switch {
		case n == "" || len(n) > 64 || strings.ContainsFunc(n, func(r rune) bool { return r == '/' || unicode.IsSpace(r) || !unicode.IsPrint(r) }):
			return errorf(CodeInvalidInput, "name", "name must be 1 to 64 characters without '/' or spaces (it is the first part of model references, name/model)")
		case n == models.DemoProvider:
			return errorf(CodeInvalidInput, "name", "the name %q is reserved for the offline demo model", n)
		}
		if src := s.cfg.Registry.Source(n); src != "" && src != models.SourceDatabase {
			return errorf(CodeNameTaken, "name", "the %s defines a provider named %q already", sourceName(src), n)
		}
		p.Name = n
	}
	if in.Kind != nil {
		switch *in.Kind {
		case models.TypeOpenAI, models.TypeAnthropic:
			p.Kind = *in.Kind
		default:
			return errorf(CodeInvalidInput, "kind", "kind must be %q (OpenAI-compatible: OpenAI, Ollama, vLLM, llama.cpp, OpenRouter, LM Studio) or %q", models.TypeOpenAI, models.TypeAnthropic)
		}
	}
	if in.BaseURL != nil {
		u := strings.TrimSpace(*in.BaseURL)
		if u != "" {
			pu, err := url.Parse(u)
			switch {
			case err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" || len(u) > 2048:
				return errorf(CodeInvalidInput, "base_url", "base_url must be an http(s) URL such as http://127.0.0.1:11434/v1")
			case pu.User != nil || pu.RawQuery != "" || pu.Fragment != "":
				return errorf(CodeInvalidInput, "base_url", "base_url must hold no credentials, query or fragment: put the key in api_key")
			}
		}
		p.BaseURL = u
	}
	if in.DefaultModel != nil {
		m := strings.TrimSpace(*in.DefaultModel)
		if len(m) > 200 || strings.ContainsFunc(m, unicode.IsSpace) {
			return errorf(CodeInvalidInput, "default_model", "default_model must be a model name without spaces, at most 200 characters")
		}
		p.DefaultModel = m
	}
	if in.Models != nil {
		ms := []string{}
		for _, m := range *in.Models {
			m = strings.TrimSpace(m)
			if m == "" || len(m) > 200 || strings.ContainsFunc(m, unicode.IsSpace) {
				return errorf(CodeInvalidInput, "models", "models must be model names without spaces, at most 200 characters each")
			}
			if !slices.Contains(ms, m) {
				ms = append(ms, m)
			}
		}
		if len(ms) > 500 {
			return errorf(CodeInvalidInput, "models", "at most 500 models")
		}
		p.Models = ms
		if len(ms) == 0 {
			p.Models = nil
		}
	}
	if in.Enabled != nil {
		p.Enabled = *in.Enabled
	}
	if in.Headers != nil {
		if err := s.setHeaders(p, *in.Headers); err != nil {
			return err
		}
	}
	if in.APIKey != nil {
		key := *in.APIKey
		switch {
		case key == "":
			p.APIKeySealed, p.APIKeyHint = "", ""
		case len(key) > 4096 || strings.ContainsFunc(key, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }):
			// The message never repeats the key.
			return errorf(CodeInvalidInput, "api_key", "api_key must be at most 4096 characters without spaces or control characters")
		default:
			box, err := s.cfg.Keys(true)
			if err != nil {
				return errorf(CodeNoSecretKey, "api_key", "API keys cannot be stored: %v", err)
			}
			if p.APIKeySealed, err = box.Seal(key, p.ID); err != nil {
				return fmt.Errorf("seal API key: %w", err)
			}
			p.APIKeyHint = secret.Hint(key)
			if s.cfg.Redactor != nil {
				s.cfg.Redactor.Add(key)
			}
		}
	}
	return nil
}

// TestProvider asks a database provider's server for its models, with
// the stored key, within the test timeout.
func (s *Service) TestProvider(ctx context.Context, pid string) ([]string, error) {
	p, err := s.get(ctx, pid)
	if err != nil {
		return nil, err
	}
	key := ""
	if p.APIKeySealed != "" {
		if key, err = s.open(p); err != nil {
			return nil, errorf(CodeKeyDoesNotOpen, "api_key", "%v", err)
		}
	}
	fac, ok := s.cfg.Factories[p.Kind]
	if !ok {
		return nil, errorf(CodeTestFailed, "kind", "provider kind %q is not supported", p.Kind)
	}
	headers, err := s.openHeaders(p)
	if err != nil {
		return nil, errorf(CodeKeyDoesNotOpen, "headers", "%v", err)
	}
	c, err := fac(p.Name, models.ProviderConfig{Type: p.Kind, BaseURL: p.BaseURL, Headers: headers}, key)
	if err != nil {
		return nil, errorf(CodeTestFailed, "", "%s", secret.NewRedactor(key).String(err.Error()))
	}
	tctx, cancel := context.WithTimeout(ctx, s.cfg.TestTimeout)
	defer cancel()
	ms, err := c.Models(tctx)
	if err != nil {
		return nil, testError(tctx, err, key, s.cfg.TestTimeout)
	}
	return nonNil(ms), nil
}

func testError(ctx context.Context, err error, key string, timeout time.Duration) error {
	msg := secret.NewRedactor(key).String(err.Error())
	var pe *provider.Error
	switch {
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		return errorf(CodeTestTimeout, "", "the server did not list its models within %s", timeout)
	case errors.As(err, &pe) && pe.Code == "auth":
		return errorf(CodeTestAuth, "api_key", "%s", msg)
	case errors.As(err, &pe) && (pe.Code == "connection"):
		return errorf(CodeTestUnreachable, "base_url", "%s", msg)
	}
	return errorf(CodeTestFailed, "", "%s", msg)
}
