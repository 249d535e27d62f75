package models

import (
	"context"
	"errors"
	"testing"
)

// Available (h16-profiles): a model its provider's list lacks is not
// available, although Resolve sends it to the default provider; without
// ask only a list already fetched counts.
func TestAvailable(t *testing.T) {
	demo := &fakeClient{name: "demo", demo: true}
	local := &fakeClient{models: []string{"llama3.2:3b", "qwen3:8b"}}
	f, err := ParseFile([]byte(`{"providers": {"router": {"type": "openai", "base_url": "https://openrouter.ai/api/v1", "models": ["anthropic/claude-sonnet-4-5"]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	r := New(f, env(map[string]string{"OPENAI_API_KEY": "sk-openai-secret", "OLLAMA_HOST": "127.0.0.1:11434"}), factories(local), demo)
	ctx := context.Background()

	// Before the local server's list is fetched, a model of it is judged
	// available without asking; nothing was asked.
	if err := r.Available(ctx, "ollama/nope", false); err != nil || local.calls != 0 {
		t.Fatalf("without ask, unfetched list: %v (calls %d)", err, local.calls)
	}
	for _, tc := range []struct {
		ref   string
		ask   bool
		avail bool
	}{
		{"ollama/qwen3:8b", true, true},
		{"ollama/nope", true, false},
		{"ollama/nope", false, false}, // the list is known now
		{"router/anthropic/claude-sonnet-4-5", false, true},
		{"router/other", false, false}, // a configured list
		{"openai/gpt-4o", true, true},  // the vendor's API lists nothing here: not judged
		{"openai", false, true},        // a provider's default
		{"demo", false, true},
	} {
		err := r.Available(ctx, tc.ref, tc.ask)
		if (err == nil) != tc.avail {
			t.Errorf("Available(%q, ask=%v) = %v, want available %v", tc.ref, tc.ask, err, tc.avail)
		}
		if err != nil && !errors.Is(err, ErrUnknownModel) {
			t.Errorf("Available(%q) = %v, want ErrUnknownModel", tc.ref, err)
		}
	}
	if local.calls != 1 {
		t.Errorf("list fetched %d times, want 1", local.calls)
	}
}
