package websearch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/caduceus-dev/caduceus/internal/secret"
	"github.com/caduceus-dev/caduceus/internal/secretbox"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// SettingKey is the settings-table row holding the back-end. The generic
// settings routes neither show nor write it: its key is sealed and only
// this package opens it.
const SettingKey = "web_search"

// sealContext binds the sealed key to this row.
const sealContext = "setting:" + SettingKey

// Store is the part of the store the configuration lives in.
type Store interface {
	ListSettings(ctx context.Context) ([]store.Setting, error)
	Write(ctx context.Context, fn func(store.Tx) error) error
}

// Redactor learns every key opened, so none reaches a log or an output.
type Redactor interface{ Add(secrets ...string) }

// Keys gives the box sealing API keys (internal/settings.Keys): create
// asks for a key to be made when none exists yet.
type Keys = func(create bool) (*secretbox.Box, error)

// stored is the row's JSON.
type stored struct {
	Kind   string    `json:"kind"`
	URL    string    `json:"url"`
	Sealed string    `json:"api_key_sealed,omitempty"`
	Hint   string    `json:"api_key_hint,omitempty"`
	At     time.Time `json:"updated_at"`
}

// View is the configuration as the API shows it: the key masked.
type View struct {
	Configured bool      `json:"configured"`
	Kind       string    `json:"kind,omitempty"`
	URL        string    `json:"url,omitempty"`
	HasKey     bool      `json:"has_key"`
	APIKey     string    `json:"api_key"` // the masked hint, "" when none or short
	Kinds      []string  `json:"kinds"`
	UpdatedAt  time.Time `json:"updated_at,omitzero"`
	Error      string    `json:"error,omitempty"` // why the stored key does not open
}

// Input changes the configuration; nil leaves a field as it is. An empty
// APIKey removes the key.
type Input struct {
	Kind   *string `json:"kind"`
	URL    *string `json:"url"`
	APIKey *string `json:"api_key"`
}

// Config assembles a Service.
type Config struct {
	Store    Store
	Keys     Keys
	Redactor Redactor
	// Client makes the requests; nil: a plain client.
	Client  *http.Client
	Timeout time.Duration
	Now     func() time.Time
}

// Service keeps the configured back-end and searches with it. It reads
// the store on every call, so a change made by another process sharing
// the database applies at its next search. Safe for concurrent use.
type Service struct{ cfg Config }

// New returns a Service.
func New(cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	return &Service{cfg: cfg}
}

func (s *Service) load(ctx context.Context) (stored, bool, error) {
	sets, err := s.cfg.Store.ListSettings(ctx)
	if err != nil {
		return stored{}, false, fmt.Errorf("load the web search settings: %w", err)
	}
	i := slices.IndexFunc(sets, func(st store.Setting) bool { return st.Key == SettingKey })
	if i < 0 {
		return stored{}, false, nil
	}
	var st stored
	if err := json.Unmarshal([]byte(sets[i].Value), &st); err != nil || !slices.Contains(Kinds(), st.Kind) {
		// Not ours to repair: treated as absent, so no broken tool is offered.
		return stored{}, false, nil
	}
	return st, true, nil
}

// open returns the key in clear ("" when none is stored).
func (s *Service) open(st stored) (string, error) {
	if st.Sealed == "" {
		return "", nil
	}
	if s.cfg.Keys == nil {
		return "", errorf(CodeKeyUnreadable, "api_key", "the web search API key cannot be opened: no secret key is configured")
	}
	box, err := s.cfg.Keys(false)
	if err != nil {
		return "", errorf(CodeKeyUnreadable, "api_key", "the web search API key cannot be opened: %v", err)
	}
	key, err := box.Open(st.Sealed, sealContext)
	if err != nil {
		return "", errorf(CodeKeyUnreadable, "api_key", "the web search API key cannot be opened: %v", err)
	}
	if s.cfg.Redactor != nil {
		s.cfg.Redactor.Add(key)
	}
	return key, nil
}

// Backend is the configured back-end, key opened; false when none is
// configured (or its key does not open: a tool that can only fail is
// not offered).
func (s *Service) Backend(ctx context.Context) (Backend, bool, error) {
	st, ok, err := s.load(ctx)
	if err != nil || !ok {
		return Backend{}, false, err
	}
	key, err := s.open(st)
	if err != nil {
		return Backend{}, false, err
	}
	if st.Kind != KindSearXNG && key == "" {
		return Backend{}, false, nil
	}
	return Backend{Kind: st.Kind, URL: st.URL, APIKey: key}, true, nil
}

// Configured says whether a usable back-end is configured.
func (s *Service) Configured(ctx context.Context) bool {
	_, ok, err := s.Backend(ctx)
	return ok && err == nil
}

// Get returns the configuration, key masked.
func (s *Service) Get(ctx context.Context) (View, error) {
	st, ok, err := s.load(ctx)
	if err != nil {
		return View{}, err
	}
	v := View{Kinds: Kinds(), APIKey: ""}
	if !ok {
		return v, nil
	}
	v.Configured, v.Kind, v.URL, v.HasKey, v.APIKey, v.UpdatedAt = true, st.Kind, st.URL, st.Sealed != "", st.Hint, st.At
	if _, err := s.open(st); err != nil {
		v.Error = err.Error()
	}
	return v, nil
}

// Put changes the configuration (all fields checked before anything is
// written) and returns it.
func (s *Service) Put(ctx context.Context, in Input) (View, error) {
	cur, _, err := s.load(ctx)
	if err != nil {
		return View{}, err
	}
	next := cur
	if in.Kind != nil {
		next.Kind = strings.TrimSpace(*in.Kind)
	}
	if !slices.Contains(Kinds(), next.Kind) {
		return View{}, errorf(CodeInvalidInput, "kind", "kind must be one of %s", strings.Join(Kinds(), ", "))
	}
	if in.URL != nil {
		next.URL = strings.TrimSpace(*in.URL)
	}
	if next.URL == "" && next.Kind == KindSearXNG {
		return View{}, errorf(CodeInvalidInput, "url", "a SearXNG back-end needs the address of its instance")
	}
	if next.URL != "" {
		if err := CheckURL(next.URL); err != nil {
			return View{}, err
		}
	}
	if in.APIKey != nil {
		key := strings.TrimSpace(*in.APIKey)
		switch {
		case key == "":
			next.Sealed, next.Hint = "", ""
		case len(key) > 1000 || strings.ContainsAny(key, "\r\n"):
			// Never echo it: a person may have pasted something else.
			return View{}, errorf(CodeInvalidInput, "api_key", "the API key must be one line of at most 1000 characters")
		default:
			if s.cfg.Keys == nil {
				return View{}, errorf(CodeNoSecretKey, "api_key", "no secret key to seal the API key with is configured")
			}
			box, err := s.cfg.Keys(true)
			if err != nil {
				return View{}, errorf(CodeNoSecretKey, "api_key", "no secret key to seal the API key with: %v (set %s)", err, secretbox.EnvKey)
			}
			sealed, err := box.Seal(key, sealContext)
			if err != nil {
				return View{}, fmt.Errorf("seal the web search key: %w", err)
			}
			next.Sealed, next.Hint = sealed, secret.Hint(key)
			if s.cfg.Redactor != nil {
				s.cfg.Redactor.Add(key)
			}
		}
	}
	if next.Kind != KindSearXNG && next.Sealed == "" {
		return View{}, errorf(CodeInvalidInput, "api_key", "a %s back-end needs an API key", next.Kind)
	}
	next.At = s.cfg.Now().UTC()
	raw, err := json.Marshal(next)
	if err != nil {
		return View{}, fmt.Errorf("encode the web search settings: %w", err)
	}
	err = s.cfg.Store.Write(ctx, func(tx store.Tx) error {
		return tx.PutSetting(ctx, store.Setting{Key: SettingKey, Value: string(raw), UpdatedAt: next.At})
	})
	if err != nil {
		return View{}, fmt.Errorf("save the web search settings: %w", err)
	}
	return s.Get(ctx)
}

// Delete removes the back-end: web_search is no longer offered.
func (s *Service) Delete(ctx context.Context) error {
	err := s.cfg.Store.Write(ctx, func(tx store.Tx) error { return tx.DeleteSetting(ctx, SettingKey) })
	if err != nil {
		return fmt.Errorf("delete the web search settings: %w", err)
	}
	return nil
}

// Search runs a query on the configured back-end.
func (s *Service) Search(ctx context.Context, query string, count int) ([]Result, error) {
	b, ok, err := s.Backend(ctx)
	var we *Error
	switch {
	case errors.As(err, &we):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("web search: %w", err)
	case !ok:
		return nil, errorf(CodeNotConfigured, "", "no web search back-end is configured (Settings → Web search)")
	}
	return Search(ctx, s.cfg.Client, b, query, count, s.cfg.Timeout)
}

// Endpoint is the address the configured back-end is reached at ("" when
// none), for the approval policy: the operator chose it, the model
// only chooses the query.
func (s *Service) Endpoint(ctx context.Context) string {
	st, ok, err := s.load(ctx)
	if err != nil || !ok {
		return ""
	}
	if st.URL != "" {
		return st.URL
	}
	return DefaultURL(st.Kind)
}
