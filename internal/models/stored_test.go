package models

import (
	"context"
	"slices"
	"sync"
	"testing"
)

func TestSourcesAndStoredProviders(t *testing.T) {
	ctx := context.Background()
	f := File{Providers: map[string]ProviderConfig{"lab": {Type: TypeOpenAI, BaseURL: "http://lab:8000/v1", Models: []string{"qwen"}}}}
	r := New(f, env(map[string]string{"ANTHROPIC_API_KEY": "sk-ant-env-0123456789"}), factories(nil), &fakeClient{name: "demo", demo: true})
	for name, want := range map[string]string{"demo": SourceDemo, "anthropic": SourceEnv, "lab": SourceConfig, "nope": ""} {
		if got := r.Source(name); got != want {
			t.Errorf("Source(%s) = %q, want %q", name, got, want)
		}
	}
	r.SetStored([]Stored{
		{ID: "prv-1", Name: "local", Config: ProviderConfig{Type: TypeOpenAI, BaseURL: "http://127.0.0.1:9/v1", Models: []string{"llama3"}}, APIKey: "sk-db-key-0123456789"},
		// The config file's name wins.
		{ID: "prv-2", Name: "lab", Config: ProviderConfig{Type: TypeOpenAI, Models: []string{"other"}}},
	})
	res, err := r.Resolve(ctx, "local/llama3")
	if err != nil || res.ProviderName != "local" {
		t.Fatalf("Resolve(local/llama3) = %+v, %v", res, err)
	}
	if res, err := r.Resolve(ctx, "llama3"); err != nil || res.ProviderName != "local" {
		t.Fatalf("a stored provider's model by bare name = %+v, %v", res, err)
	}
	if res, err := r.Resolve(ctx, "lab/qwen"); err != nil || r.Source("lab") != SourceConfig {
		t.Fatalf("the config file's lab was replaced: %+v, %v, %s", res, err, r.Source("lab"))
	}
	if !slices.Contains(r.Secrets(), "sk-db-key-0123456789") {
		t.Fatal("a stored key is not among the secrets to redact")
	}
	var listed ProviderView
	for _, v := range r.List(ctx) {
		if v.Name == "local" {
			listed = v
		}
	}
	if listed.Source != SourceDatabase || listed.ID != "prv-1" || !listed.HasKey {
		t.Fatalf("listed stored provider = %+v", listed)
	}

	// The console's default model applies when the config file names none.
	r.SetDefault("local/llama3")
	if got := r.Default(); got != "local/llama3" {
		t.Fatalf("Default = %q", got)
	}
	// Removing it takes effect for the next resolution.
	r.SetStored(nil)
	if _, err := r.Resolve(ctx, "local/llama3"); err == nil {
		t.Fatal("a removed provider still resolves")
	}
	if r.Source("local") != "" || r.Source("lab") != SourceConfig || r.Source("anthropic") != SourceEnv {
		t.Fatal("SetStored(nil) touched the fixed sources")
	}
	// Keys seen once stay redacted: text written before may hold them.
	if !slices.Contains(r.Secrets(), "sk-db-key-0123456789") {
		t.Fatal("a removed provider's key is no longer redacted")
	}

	f.DefaultModel = "lab/qwen"
	fixed := New(f, env(nil), factories(nil), &fakeClient{name: "demo", demo: true})
	fixed.SetDefault("local/llama3")
	if fixed.Default() != "lab/qwen" || fixed.ConfigDefault() != "lab/qwen" {
		t.Fatalf("the config file's default lost to the console's: %q", fixed.Default())
	}
}

// TestSetStoredConcurrent is for the race detector: runs resolve while the
// console changes providers.
func TestSetStoredConcurrent(t *testing.T) {
	r := New(File{}, env(nil), factories(nil), &fakeClient{name: "demo", demo: true})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 200 {
			r.SetStored([]Stored{{ID: "p", Name: "local", Config: ProviderConfig{Type: TypeOpenAI, Models: []string{"m"}}, APIKey: string(rune('a'+i%26)) + "-key-0123456789"}})
		}
	})
	for range 200 {
		_, _ = r.Resolve(context.Background(), "local/m")
		_ = r.List(context.Background())
		_ = r.Default()
	}
	wg.Wait()
}
