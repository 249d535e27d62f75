package models

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"math"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/provider"
)

type fakeClient struct {
	name   string
	demo   bool
	models []string
	err    error
	calls  int
}

func (f *fakeClient) Name() string { return f.name }
func (f *fakeClient) Demo() bool   { return f.demo }
func (f *fakeClient) Stream(context.Context, provider.Request) iter.Seq2[provider.Chunk, error] {
	return func(func(provider.Chunk, error) bool) {}
}
func (f *fakeClient) Models(context.Context) ([]string, error) { f.calls++; return f.models, f.err }

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func factories(local *fakeClient) map[string]Factory {
	mk := func(name string, cfg ProviderConfig, key string) (Client, error) {
		if strings.Contains(cfg.BaseURL, "broken") {
			return nil, errors.New("cannot build")
		}
		if local != nil && cfg.BaseURL != "" {
			local.name = name
			return local, nil
		}
		return &fakeClient{name: name}, nil
	}
	return map[string]Factory{TypeOpenAI: mk, TypeAnthropic: mk}
}

func TestParseFileErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{`, "malformed JSON"},
		{`{"providers": {"x": {"type": "gemini"}}}`, `type must be`},
		{`{"providers": {"demo": {"type": "openai"}}}`, "reserved"},
		{`{"providers": {"a/b": {"type": "openai"}}}`, "without '/'"},
		{`{"providers": {"x": {"type": "openai", "base_url": "ftp://h"}}}`, "http(s) URL"},
		{`{"providerz": {}}`, `unknown field "providerz"`},
		{`{"default_model": 3}`, `"default_model" has the wrong type`},
	} {
		_, err := ParseFile([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseFile(%s) = %v, want %q", tc.in, err, tc.want)
		}
	}
	if _, err := ParseFile([]byte(`{"providers": {"x": {"type": "openai", "api_key": "sk-very-secret-123"}}, "bogus": 1}`)); err == nil || strings.Contains(err.Error(), "sk-very") {
		t.Errorf("error leaks the file: %v", err)
	}
}

func TestOllamaBase(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:11434":    "http://127.0.0.1:11434/v1",
		"http://box:11434/":  "http://box:11434/v1",
		"0.0.0.0":            "http://127.0.0.1:11434/v1",
		"https://ollama.lan": "https://ollama.lan:11434/v1",
		"http://box:8080/v1": "http://box:8080/v1",
	} {
		if got := ollamaBase(in); got != want {
			t.Errorf("ollamaBase(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestResolve(t *testing.T) {
	demo := &fakeClient{name: "demo", demo: true}
	local := &fakeClient{models: []string{"llama3.2:3b", "qwen3:8b"}}
	f, err := ParseFile([]byte(`{"providers": {"router": {"type": "openai", "base_url": "https://openrouter.ai/api/v1", "models": ["anthropic/claude-sonnet-4-5"]}},
		"models": {"llama3.2:3b": {"context_window": 8192}}}`))
	if err != nil {
		t.Fatal(err)
	}
	r := New(f, env(map[string]string{"OPENAI_API_KEY": "sk-openai-secret", "ANTHROPIC_API_KEY": "sk-ant-secret", "OLLAMA_HOST": "127.0.0.1:11434"}),
		factories(local), demo)
	if got := r.Default(); got != "anthropic/claude-sonnet-4-5" {
		t.Errorf("Default = %q", got)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		ref, provider, model string
		window               int64
		err                  string
	}{
		{"", "anthropic", "claude-sonnet-4-5", 200_000, ""},
		{"demo", "demo", "demo", DefaultContextWindow, ""},
		{"openai", "openai", "gpt-4.1", 1_047_576, ""},
		{"openai/gpt-4o-2024-08-06", "openai", "gpt-4o-2024-08-06", 128_000, ""},
		{"gpt-4o-mini", "openai", "gpt-4o-mini", 128_000, ""},
		{"claude-haiku-4-5", "anthropic", "claude-haiku-4-5", 200_000, ""},
		{"router/anthropic/claude-sonnet-4-5", "router", "anthropic/claude-sonnet-4-5", 200_000, ""},
		{"anthropic/claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5", 200_000, ""},
		{"ollama", "ollama", "llama3.2:3b", 8192, ""},
		{"ollama/qwen3:8b", "ollama", "qwen3:8b", DefaultContextWindow, ""},
		{"mistral-large", "anthropic", "mistral-large", DefaultContextWindow, ""}, // bare unknown: default provider
	} {
		res, err := r.Resolve(ctx, tc.ref)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Resolve(%q) err = %v, want %q", tc.ref, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Resolve(%q): %v", tc.ref, err)
			continue
		}
		if res.ProviderName != tc.provider || res.Model != tc.model || res.Info.ContextWindow != tc.window {
			t.Errorf("Resolve(%q) = %s/%s window %d, want %s/%s %d", tc.ref, res.ProviderName, res.Model, res.Info.ContextWindow, tc.provider, tc.model, tc.window)
		}
	}
	if local.calls != 1 {
		t.Errorf("server model list fetched %d times, want 1 (cached)", local.calls)
	}
}

func TestDemoOnlyAndBrokenProvider(t *testing.T) {
	demo := &fakeClient{name: "demo", demo: true}
	r := New(File{}, env(nil), factories(nil), demo)
	if !r.DemoOnly() || r.Default() != "demo" {
		t.Fatalf("DemoOnly=%v Default=%q", r.DemoOnly(), r.Default())
	}
	if res, err := r.Resolve(context.Background(), ""); err != nil || !res.Demo() {
		t.Fatalf("Resolve default = %+v, %v", res, err)
	}
	if _, err := r.Resolve(context.Background(), "gpt-4.1"); !errors.Is(err, ErrUnknownModel) {
		t.Errorf("bare model without providers: %v", err)
	}
	f, _ := ParseFile([]byte(`{"providers": {"bad": {"type": "openai", "base_url": "http://broken"}}}`))
	r = New(f, env(nil), factories(nil), demo)
	if _, err := r.Resolve(context.Background(), "bad/x"); err == nil || !strings.Contains(err.Error(), "cannot build") {
		t.Errorf("broken provider: %v", err)
	}
	if r.Default() != "demo" {
		t.Errorf("a broken provider must not become the default: %q", r.Default())
	}
}

func TestListHidesKeys(t *testing.T) {
	demo := &fakeClient{name: "demo", demo: true}
	local := &fakeClient{err: errors.New("dial tcp: refused with key sk-file-secret-999")}
	f, _ := ParseFile([]byte(`{"providers": {"mine": {"type": "openai", "base_url": "http://user:pw@gpu-box:8000/v1?token=abc", "api_key": "sk-file-secret-999"}}}`))
	r := New(f, env(map[string]string{"ANTHROPIC_API_KEY": "sk-ant-env-secret"}), factories(local), demo)
	views := r.List(context.Background())
	b, _ := json.Marshal(views)
	for _, secret := range []string{"sk-file-secret-999", "sk-ant-env-secret", "pw@", "token=abc"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("List leaks %q: %s", secret, b)
		}
	}
	if !strings.Contains(string(b), `"has_key":true`) || !strings.Contains(string(b), `"demo":true`) {
		t.Errorf("List = %s", b)
	}
	if len(r.Secrets()) != 2 {
		t.Errorf("Secrets = %d", len(r.Secrets()))
	}
}

func TestCost(t *testing.T) {
	m := ModelInfo{InputPrice: 3, CachedPrice: 0.3, OutputPrice: 15}
	usd, ok := m.Cost(1_000_000, 400_000, 100_000)
	if want := 0.6*3 + 0.4*0.3 + 0.1*15; !ok || math.Abs(usd-want) > 1e-9 {
		t.Errorf("Cost = %v %v, want %v", usd, ok, want)
	}
	if _, ok := (ModelInfo{}).Cost(1, 0, 1); ok {
		t.Error("unpriced model has a cost")
	}
}

func TestAcceptsImages(t *testing.T) {
	f, err := ParseFile([]byte(`{"providers": {"local": {"type": "openai", "base_url": "http://127.0.0.1:1/v1", "models": ["tiny", "seer"]}},
		"models": {"seer": {"images": true}}}`))
	if err != nil {
		t.Fatal(err)
	}
	r := New(f, env(map[string]string{"OPENAI_API_KEY": "k"}), factories(nil), &fakeClient{name: "demo", demo: true})
	for _, tc := range []struct {
		ref, model string
		ok         bool
	}{
		{"demo", "demo", true},
		{"openai/gpt-4o", "openai/gpt-4o", true},
		{"gpt-4.1-mini-2025-04-14", "openai/gpt-4.1-mini-2025-04-14", true},
		{"local/tiny", "local/tiny", false},
		{"local/seer", "local/seer", true},
	} {
		model, ok, err := r.AcceptsImages(tc.ref)
		if err != nil || model != tc.model || ok != tc.ok {
			t.Errorf("AcceptsImages(%q) = %q %v %v, want %q %v", tc.ref, model, ok, err, tc.model, tc.ok)
		}
	}
}
