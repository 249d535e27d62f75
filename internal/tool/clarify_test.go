package tool

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
)

func TestParseClarify(t *testing.T) {
	tests := []struct {
		args     string
		question string
		choices  []string
		err      string
	}{
		{args: `{"question": "Which database?"}`, question: "Which database?"},
		{args: `{"question": " Which? ", "choices": [" SQLite", "Postgres "]}`, question: "Which?", choices: []string{"SQLite", "Postgres"}},
		{args: `{"question": "q", "choices": ["a", "b", "c", "d"]}`, question: "q", choices: []string{"a", "b", "c", "d"}},
		{args: `{"question": "q", "choices": []}`, question: "q"},
		{args: `{"question": "q", "choices": ["a", "b", "c", "d", "e"]}`, err: "at most 4 choices, got 5"},
		{args: `{"question": "q", "choices": ["a", " "]}`, err: "choice 2 is empty"},
		{args: `{"question": "   "}`, err: "question is required"},
		{args: `{}`, err: "question is required"},
		{args: `{"question": "q", "choices": "a"}`, err: `field "choices" must be an array of strings`},
		{args: `{"question": "q", "choices": [1]}`, err: `must be a string`},
		{args: `{"question": "q", "other": 1}`, err: `unknown field "other"`},
		{args: `{"question"`, err: "malformed JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			q, c, err := ParseClarify([]byte(tt.args))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.HasPrefix(err.Error(), "invalid arguments: ") {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || q != tt.question || !slices.Equal(c, tt.choices) {
				t.Fatalf("got %q %q %v", q, c, err)
			}
		})
	}
}

func TestClarifyTool(t *testing.T) {
	tl := NewClarify()
	res, err := tl.Run(context.Background(), Env{}, []byte(`{"question": "q"}`))
	if err != nil || res.Status != event.ToolError || !strings.Contains(res.Output, "handled by the agent loop") {
		t.Errorf("Run = %+v, %v", res, err)
	}
	if tl.Intent([]byte(`{"question": "q"}`)).Effect != EffectNone {
		t.Error("clarify has an effect")
	}
	long := strings.Repeat("why ", 100)
	if l := tl.Label([]byte(`{"question": "` + long + `"}`)); len([]rune(l)) != 120 || !strings.HasSuffix(l, "…") {
		t.Errorf("label %q", l)
	}
	if l := tl.Label([]byte(`{"question": "Which one?\nDetails follow."}`)); l != "Which one?" {
		t.Errorf("label %q", l)
	}
}
