// Package models knows which language models Caduceus can use: the
// providers configured in the data dir's config file and the environment,
// what each model costs and how large its context window is, and which
// model a run gets when it names none. It never hands out API keys: every
// view it offers has them removed.
package models

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"slices"
	"strings"
)

// Provider types: the wire protocols Caduceus speaks.
const (
	TypeOpenAI    = "openai"    // Chat Completions: OpenAI, OpenRouter, Ollama, vLLM, llama.cpp, LM Studio
	TypeAnthropic = "anthropic" // Messages API
	TypeDemo      = "demo"      // the offline demo model
)

// DemoProvider is the name of the always-available offline provider.
const DemoProvider = "demo"

// ProviderConfig configures one named provider.
type ProviderConfig struct {
	Type    string `json:"type"`
	BaseURL string `json:"base_url,omitempty"`
	// APIKey is the key itself; APIKeyEnv names an environment variable
	// holding it (preferred: the config file then holds no secret).
	APIKey    string            `json:"api_key,omitempty"`
	APIKeyEnv string            `json:"api_key_env,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
	// Models lists the models offered; empty means "ask the server".
	Models []string `json:"models,omitempty"`
	// DefaultModel is used when a run names only this provider.
	DefaultModel string `json:"default_model,omitempty"`
}

// ModelInfo describes one model. Prices are USD per million tokens.
type ModelInfo struct {
	ContextWindow   int64   `json:"context_window,omitempty"`
	MaxOutputTokens int     `json:"max_output_tokens,omitempty"`
	InputPrice      float64 `json:"input_per_mtok,omitempty"`
	CachedPrice     float64 `json:"cached_input_per_mtok,omitempty"`
	OutputPrice     float64 `json:"output_per_mtok,omitempty"`
	// ThinkingBudget turns on extended thinking (Anthropic) with this many
	// tokens; ReasoningEffort is passed to OpenAI reasoning models.
	ThinkingBudget  int    `json:"thinking_budget,omitempty"`
	ReasoningEffort string `json:"reasoning_effort,omitempty"`
	// Images says the model accepts image input. Off unless the built-in
	// table or the config file says so: a message with an image to a
	// model without it is refused before its run starts, which is kinder
	// than a provider's error halfway through.
	Images bool `json:"images,omitempty"`
}

// File is the config file (config.json in the data dir).
type File struct {
	DefaultModel string                    `json:"default_model,omitempty"`
	Providers    map[string]ProviderConfig `json:"providers,omitempty"`
	// Models overrides or adds model metadata, keyed by "provider/model"
	// or by bare model name.
	Models map[string]ModelInfo `json:"models,omitempty"`
}

// LoadFile reads the config file at path. A missing file is an empty
// config; a malformed one is an error naming the problem (never echoing
// the file, which may hold keys).
func LoadFile(path string) (File, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return File{}, nil
	}
	if err != nil {
		return File{}, fmt.Errorf("config file: %w", err)
	}
	return ParseFile(b)
}

// ParseFile parses a config file strictly: a misspelt key is reported
// rather than silently ignored.
func ParseFile(b []byte) (File, error) {
	var f File
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return File{}, errors.New("config file: malformed JSON: unexpected end")
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return File{}, fmt.Errorf("config file: malformed JSON at byte %d", se.Offset)
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return File{}, fmt.Errorf("config file: field %q has the wrong type", te.Field)
		}
		return File{}, fmt.Errorf("config file: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return f, f.validate()
}

func (f File) validate() error {
	for name, p := range f.Providers {
		if name == "" || strings.ContainsAny(name, "/ \t") {
			return fmt.Errorf("config file: provider name %q must be non-empty without '/' or spaces", name)
		}
		if name == DemoProvider {
			return fmt.Errorf("config file: provider name %q is reserved for the offline demo model", name)
		}
		switch p.Type {
		case TypeOpenAI, TypeAnthropic:
		default:
			return fmt.Errorf("config file: provider %q: type must be %q or %q", name, TypeOpenAI, TypeAnthropic)
		}
		if p.BaseURL != "" {
			u, err := url.Parse(p.BaseURL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return fmt.Errorf("config file: provider %q: base_url must be an http(s) URL", name)
			}
		}
	}
	return nil
}

// FromEnv adds the providers the conventional environment variables name,
// unless the config file already defines a provider of that name:
// OPENAI_API_KEY (and OPENAI_BASE_URL), ANTHROPIC_API_KEY, OLLAMA_HOST.
func (f File) FromEnv(getenv func(string) string) File {
	out := f
	out.Providers = make(map[string]ProviderConfig, len(f.Providers)+3)
	for k, v := range f.Providers {
		out.Providers[k] = v
	}
	add := func(name string, p ProviderConfig) {
		if _, ok := out.Providers[name]; !ok {
			out.Providers[name] = p
		}
	}
	if getenv("OPENAI_API_KEY") != "" || getenv("OPENAI_BASE_URL") != "" {
		add("openai", ProviderConfig{Type: TypeOpenAI, BaseURL: getenv("OPENAI_BASE_URL"), APIKeyEnv: "OPENAI_API_KEY"})
	}
	if getenv("ANTHROPIC_API_KEY") != "" {
		add("anthropic", ProviderConfig{Type: TypeAnthropic, BaseURL: getenv("ANTHROPIC_BASE_URL"), APIKeyEnv: "ANTHROPIC_API_KEY"})
	}
	if h := getenv("OLLAMA_HOST"); h != "" {
		add("ollama", ProviderConfig{Type: TypeOpenAI, BaseURL: ollamaBase(h)})
	}
	return out
}

// ollamaBase turns OLLAMA_HOST ("127.0.0.1:11434", "http://box:11434",
// "0.0.0.0") into the base URL of Ollama's OpenAI-compatible API.
func ollamaBase(h string) string {
	h = strings.TrimRight(strings.TrimSpace(h), "/")
	if !strings.Contains(h, "://") {
		h = "http://" + h
	}
	u, err := url.Parse(h)
	if err != nil {
		return h + "/v1"
	}
	if u.Port() == "" {
		u.Host += ":11434"
	}
	if host := u.Hostname(); host == "0.0.0.0" || host == "" {
		u.Host = "127.0.0.1:" + u.Port()
	}
	u.Path = strings.TrimSuffix(u.Path, "/v1") + "/v1"
	return u.String()
}

// KeyEnvNames lists the environment variables the file names as holding
// API keys (api_key_env), so that the process can hide them.
func (f File) KeyEnvNames() []string {
	var names []string
	for _, n := range f.providerNames() {
		if e := f.Providers[n].APIKeyEnv; e != "" && !slices.Contains(names, e) {
			names = append(names, e)
		}
	}
	return names
}

// apiKey returns the key of p from the file or the environment.
func (p ProviderConfig) apiKey(getenv func(string) string) string {
	if p.APIKey != "" {
		return p.APIKey
	}
	if p.APIKeyEnv != "" {
		return getenv(p.APIKeyEnv)
	}
	return ""
}

// providerNames lists configured names in a stable order.
func (f File) providerNames() []string {
	names := make([]string, 0, len(f.Providers))
	for n := range f.Providers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
