package models

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/secret"
)

// Client is a provider that can also list its models.
type Client interface {
	provider.Provider
	Models(ctx context.Context) ([]string, error)
}

// Factory builds the client of one configured provider. apiKey is passed
// apart from cfg because cfg is kept (without its key) for display.
type Factory func(name string, cfg ProviderConfig, apiKey string) (Client, error)

// Resolved is the model a run uses.
type Resolved struct {
	Provider     provider.Provider
	ProviderName string
	Model        string
	Info         ModelInfo
}

// Ref is the "provider/model" form stored on runs and shown to people.
func (r Resolved) Ref() string { return r.ProviderName + "/" + r.Model }

// Demo reports whether the offline demo model answers.
func (r Resolved) Demo() bool { return r.Provider.Demo() }

// Registry holds the configured providers; safe for concurrent use.
// Providers come from three sources: the environment and the config file
// (fixed at start) and the database (SetStored replaces them while the
// server runs).
type Registry struct {
	overrides map[string]ModelInfo
	factories map[string]Factory
	red       *secret.Redactor

	mu          sync.RWMutex
	entries     map[string]*entry
	order       []string // preference order for the default model
	staticOrder []string // the environment's and config file's
	defaultRef  string   // the config file's default_model
	settingRef  string   // the console's default model (SetDefault)
	secrets     []string
}

// Where a provider comes from.
const (
	SourceDemo     = "demo"
	SourceEnv      = "env"
	SourceConfig   = "config"
	SourceDatabase = "database"
)

type entry struct {
	name   string
	source string
	id     string         // the database's id, for SourceDatabase
	cfg    ProviderConfig // APIKey cleared
	hasKey bool
	hint   string // the key masked (secret.Hint)
	client Client
	err    error // why the provider could not be built

	mu       sync.Mutex
	listed   []string
	listErr  error
	listedAt time.Time
}

// listTTL bounds how stale a server's model list may be.
const listTTL = 5 * time.Minute

// New builds the registry from the config file merged with the
// environment. A provider that cannot be built (unknown type, bad URL)
// stays listed with its error instead of failing the whole server.
func New(f File, getenv func(string) string, factories map[string]Factory, demo Client) *Registry {
	fromFile := f.Providers
	f = f.FromEnv(getenv)
	r := &Registry{entries: map[string]*entry{}, overrides: f.Models, factories: factories}
	r.entries[DemoProvider] = &entry{name: DemoProvider, source: SourceDemo, cfg: ProviderConfig{Type: TypeDemo, Models: []string{"demo"}}, client: demo}
	for _, name := range f.providerNames() {
		pc := f.Providers[name]
		key := pc.apiKey(getenv)
		if key != "" {
			r.secrets = append(r.secrets, key)
		}
		e := r.build(name, pc, key)
		e.source = SourceEnv
		if _, ok := fromFile[name]; ok {
			e.source = SourceConfig
		}
		r.entries[name] = e
		r.order = append(r.order, name)
	}
	// Hosted providers first: a key in the environment is a clear intent.
	rank := func(n string) int {
		switch n {
		case "anthropic":
			return 0
		case "openai":
			return 1
		}
		return 2
	}
	slices.SortStableFunc(r.order, func(a, b string) int { return rank(a) - rank(b) })
	r.staticOrder = slices.Clone(r.order)
	r.defaultRef = strings.TrimSpace(f.DefaultModel)
	r.red = secret.NewRedactor(r.secrets...)
	return r
}

// build makes the entry of one provider; a failure is kept on it.
func (r *Registry) build(name string, pc ProviderConfig, key string) *entry {
	shown := pc
	shown.APIKey = ""
	e := &entry{name: name, cfg: shown, hasKey: key != "", hint: secret.Hint(key)}
	if fac, ok := r.factories[pc.Type]; !ok {
		e.err = fmt.Errorf("provider type %q is not supported", pc.Type)
	} else if e.client, e.err = fac(name, pc, key); e.err != nil {
		e.err = fmt.Errorf("provider %s: %w", name, e.err)
	}
	return e
}

// Stored is a provider kept in the database, its key opened.
type Stored struct {
	ID     string
	Name   string
	Config ProviderConfig
	APIKey string
}

// SetStored replaces the database's providers (the enabled ones) with
// defs, for runs resolved from now on; runs already under way keep the
// client they resolved. A name the environment or config file already
// uses is skipped: those sources win, as they are what the operator
// fixed outside the console.
func (r *Registry) SetStored(defs []Stored) {
	built := make([]*entry, 0, len(defs))
	for _, d := range defs {
		e := r.build(d.Name, d.Config, d.APIKey)
		e.source, e.id = SourceDatabase, d.ID
		built = append(built, e)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for n, e := range r.entries {
		if e.source == SourceDatabase {
			delete(r.entries, n)
		}
	}
	r.order = slices.Clone(r.staticOrder)
	for i, e := range built {
		if _, taken := r.entries[e.name]; taken {
			continue
		}
		r.entries[e.name] = e
		r.order = append(r.order, e.name)
		if k := defs[i].APIKey; k != "" && !slices.Contains(r.secrets, k) {
			r.secrets = append(r.secrets, k)
		}
	}
	r.red = secret.NewRedactor(r.secrets...)
}

// SetDefault sets the console's default model ("" for none). The config
// file's default_model, when set, still wins: it is read-only here.
func (r *Registry) SetDefault(ref string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.settingRef = strings.TrimSpace(ref)
}

// ConfigDefault is the config file's default model ("" when it sets
// none), shown as a read-only override of the console's.
func (r *Registry) ConfigDefault() string { return r.defaultRef }

// Source says where the named provider comes from ("" if unknown).
func (r *Registry) Source(name string) string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if e, ok := r.entries[name]; ok {
		return e.source
	}
	return ""
}

// Secrets are the API keys in use (every key SetStored has seen
// included), for redaction.
func (r *Registry) Secrets() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Clone(r.secrets)
}

// Default is the model a run gets when neither its message nor its
// session names one: the configured default, else the first usable
// provider's default model, else the demo model.
func (r *Registry) Default() string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.defaultLocked()
}

func (r *Registry) defaultLocked() string {
	if r.defaultRef != "" {
		return r.defaultRef
	}
	if r.settingRef != "" {
		return r.settingRef
	}
	for _, n := range r.order {
		if e := r.entries[n]; e.err == nil {
			if m := e.staticDefault(); m != "" {
				return n + "/" + m
			}
			return n
		}
	}
	return DemoProvider
}

// DemoOnly reports whether no real provider is configured.
func (r *Registry) DemoOnly() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.order) == 0
}

// ErrUnknownModel is returned for a model reference no provider serves.
var ErrUnknownModel = errors.New("unknown model")

// Resolve turns a model reference into a provider and model: "" (the
// default), "provider/model", "provider" (its default model) or a bare
// model name (the provider listing it, else the default provider).
func (r *Registry) Resolve(ctx context.Context, ref string) (Resolved, error) {
	return r.resolve(ctx, ref, true)
}

// Peek resolves like Resolve but never asks a server: a provider whose
// model must come from its server's list answers with the cached list, or
// with an empty Model when it has none yet. It is for places that must not
// block, such as inside a store transaction.
func (r *Registry) Peek(ref string) (Resolved, error) {
	return r.resolve(context.Background(), ref, false)
}

func (r *Registry) resolve(ctx context.Context, ref string, ask bool) (Resolved, error) {
	e, model, err := r.find(ref)
	if err != nil {
		return Resolved{}, err
	}
	if e.err != nil {
		return Resolved{}, e.err
	}
	if e.name == DemoProvider {
		// The demo model takes images (it describes their type and size),
		// so the offline demo shows attachments end to end.
		return Resolved{Provider: e.client, ProviderName: DemoProvider, Model: "demo", Info: ModelInfo{ContextWindow: DefaultContextWindow, Images: true}}, nil
	}
	if model == "" {
		model = e.staticDefault()
		if model == "" && !ask {
			return Resolved{Provider: e.client, ProviderName: e.name, Model: e.cachedFirst()}, nil
		}
		if model == "" {
			ms, err := e.models(ctx)
			if err != nil || len(ms) == 0 {
				return Resolved{}, fmt.Errorf("provider %s: no model configured and the server listed none: %w", e.name, errors.Join(err, errors.New("set default_model")))
			}
			model = ms[0]
		}
	}
	return Resolved{Provider: e.client, ProviderName: e.name, Model: model, Info: r.Info(e.name, model)}, nil
}

// find picks the entry a reference names, under the read lock; what
// follows may ask a server, so it runs without the lock.
func (r *Registry) find(ref string) (*entry, string, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	ref = strings.TrimSpace(ref)
	if ref == "" {
		ref = r.defaultLocked()
	}
	name, model, hasSlash := strings.Cut(ref, "/")
	e, ok := r.entries[name]
	switch {
	case ok && hasSlash:
	case ok:
		model = ""
	default:
		// A bare model name ("gpt-4.1", "llama3.2:3b").
		model = ref
		e = r.owner(ref)
		if e == nil {
			return nil, "", fmt.Errorf("%w %q: no configured provider serves it (use provider/model; providers: %s)",
				ErrUnknownModel, ref, strings.Join(r.names(), ", "))
		}
	}
	return e, model, nil
}

// AcceptsImages reports whether the model ref names (as a run would
// resolve it, "" for the default) accepts image input, and the
// "provider/model" it resolved to, for the refusal to name. It never asks
// a server (Peek): a model known only from a server's list it has not
// fetched yet counts as without images.
func (r *Registry) AcceptsImages(ref string) (string, bool, error) {
	res, err := r.Peek(ref)
	if err != nil {
		return "", false, err
	}
	if res.ProviderName == DemoProvider {
		return DemoProvider, res.Info.Images, nil
	}
	return res.Ref(), res.Info.Images, nil
}

// owner finds the provider of a bare model name.
func (r *Registry) owner(model string) *entry {
	for _, n := range r.order {
		if slices.Contains(r.entries[n].cfg.Models, model) {
			return r.entries[n]
		}
	}
	want := ""
	switch {
	case strings.HasPrefix(model, "claude-"):
		want = TypeAnthropic
	case strings.HasPrefix(model, "gpt-"), strings.HasPrefix(model, "o3"), strings.HasPrefix(model, "o4"):
		want = TypeOpenAI
	}
	for _, n := range r.order {
		// The vendor's own API, or the provider named after the vendor
		// (OPENAI_BASE_URL may point it at a proxy).
		if e := r.entries[n]; want != "" && e.cfg.Type == want && (e.cfg.BaseURL == "" || n == want) {
			return e
		}
	}
	if len(r.order) > 0 {
		def, _, _ := strings.Cut(r.defaultLocked(), "/")
		return r.entries[def]
	}
	return nil
}

// Info describes a model: config overrides first, then the built-in
// table, then defaults.
func (r *Registry) Info(providerName, model string) ModelInfo {
	info, ok := r.overrides[providerName+"/"+model]
	if !ok {
		info, ok = r.overrides[model]
	}
	if !ok {
		info, _ = lookupBuiltin(model)
	}
	if info.ContextWindow <= 0 {
		info.ContextWindow = DefaultContextWindow
	}
	return info
}

func (e *entry) staticDefault() string {
	if e.cfg.DefaultModel != "" {
		return e.cfg.DefaultModel
	}
	if len(e.cfg.Models) > 0 {
		return e.cfg.Models[0]
	}
	if e.cfg.BaseURL == "" {
		return defaultModelFor(e.cfg.Type) // the vendor's own API
	}
	return "" // a local server: ask it
}

// cachedFirst is the first model of the server's list if it was fetched.
func (e *entry) cachedFirst() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.listed) > 0 {
		return e.listed[0]
	}
	return ""
}

// models returns the configured list, else the server's (cached).
func (e *entry) models(ctx context.Context) ([]string, error) {
	if len(e.cfg.Models) > 0 {
		return e.cfg.Models, nil
	}
	if e.client == nil {
		return nil, e.err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if time.Since(e.listedAt) < listTTL && (e.listed != nil || e.listErr != nil) {
		return e.listed, e.listErr
	}
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	e.listed, e.listErr = e.client.Models(lctx)
	e.listedAt = time.Now()
	return e.listed, e.listErr
}

func (r *Registry) names() []string {
	return append([]string{DemoProvider}, r.order...)
}

// ProviderView is a provider as the API shows it: no key, only whether one
// is set.
type ProviderView struct {
	Name    string      `json:"name"`
	Source  string      `json:"source"`       // env, config, database or demo
	ID      string      `json:"id,omitempty"` // a database provider's id
	Type    string      `json:"type"`
	BaseURL string      `json:"base_url,omitempty"`
	HasKey  bool        `json:"has_key"`
	Demo    bool        `json:"demo,omitempty"`
	Models  []ModelView `json:"models"`
	Error   string      `json:"error,omitempty"`
}

// ModelView is one model of a provider.
type ModelView struct {
	Ref           string   `json:"ref"` // provider/model
	Name          string   `json:"name"`
	ContextWindow int64    `json:"context_window"`
	Pricing       *Pricing `json:"pricing,omitempty"`
	Default       bool     `json:"default,omitempty"`
	Images        bool     `json:"images,omitempty"` // accepts image input
}

// Pricing is USD per million tokens.
type Pricing struct {
	Input  float64 `json:"input_per_mtok"`
	Cached float64 `json:"cached_input_per_mtok,omitempty"`
	Output float64 `json:"output_per_mtok"`
}

// List describes every provider and its models. Servers without a
// configured model list are asked (cached); a failure shows as the
// provider's error rather than failing the list.
func (r *Registry) List(ctx context.Context) []ProviderView {
	r.mu.RLock()
	def := r.defaultLocked()
	names := r.names()
	entries := make([]*entry, len(names))
	for i, n := range names {
		entries[i] = r.entries[n]
	}
	red := r.red
	r.mu.RUnlock()
	out := make([]ProviderView, 0, len(entries))
	for _, e := range entries {
		n := e.name
		// Models is always a list, empty when the provider failed: a
		// client iterating it must not meet null.
		v := ProviderView{Name: n, Source: e.source, ID: e.id, Type: e.cfg.Type, BaseURL: displayURL(e.cfg.BaseURL), HasKey: e.hasKey,
			Demo: n == DemoProvider, Models: []ModelView{}}
		if e.err != nil {
			v.Error = red.String(e.err.Error())
			out = append(out, v)
			continue
		}
		ms, err := e.models(ctx)
		if err != nil {
			v.Error = red.String(err.Error())
		}
		if sd := e.staticDefault(); sd != "" && !slices.Contains(ms, sd) {
			ms = append([]string{sd}, ms...)
		}
		for _, m := range ms {
			info := r.Info(n, m)
			mv := ModelView{Ref: n + "/" + m, Name: m, ContextWindow: info.ContextWindow, Images: info.Images}
			if n == DemoProvider {
				mv.Ref, mv.Images = DemoProvider, true
			}
			if info.InputPrice > 0 || info.OutputPrice > 0 {
				mv.Pricing = &Pricing{Input: info.InputPrice, Cached: info.CachedPrice, Output: info.OutputPrice}
			}
			mv.Default = mv.Ref == def || (def == n && m == e.staticDefault())
			v.Models = append(v.Models, mv)
		}
		out = append(out, v)
	}
	return out
}

// Described is a provider as configured, without asking its server.
type Described struct {
	Name         string
	Source       string
	ID           string
	Type         string
	BaseURL      string // credentials removed
	HasKey       bool
	KeyHint      string // the key masked, "" for short keys
	DefaultModel string
	Models       []string
	Error        string
}

// Describe lists the providers of the environment, the config file and
// the database (those SetStored was given), in preference order, without
// the demo model and without asking any server.
func (r *Registry) Describe() []Described {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Described, 0, len(r.order))
	for _, n := range r.order {
		e := r.entries[n]
		d := Described{Name: n, Source: e.source, ID: e.id, Type: e.cfg.Type, BaseURL: displayURL(e.cfg.BaseURL), HasKey: e.hasKey,
			KeyHint: e.hint, DefaultModel: e.cfg.DefaultModel, Models: slices.Clone(e.cfg.Models)}
		if e.err != nil {
			d.Error = r.red.String(e.err.Error())
		}
		out = append(out, d)
	}
	return out
}

// displayURL drops credentials a base URL may embed (user:pass@host).
func displayURL(s string) string {
	if s == "" {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil {
		return "(invalid URL)"
	}
	u.User = nil
	u.RawQuery = ""
	return u.String()
}
