package budget

import (
	"errors"
	"math"
	"testing"
	"time"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		name   string
		scope  string
		l      Limits
		u      Usage
		want   bool
		limit  string
		reason string
	}{
		{"no limits", ScopeRun, Limits{}, Usage{Tokens: 1e9}, false, "", ""},
		{"under tokens", ScopeRun, Limits{MaxTokens: 500}, Usage{Tokens: 499}, false, "", ""},
		{"tokens reached", ScopeRun, Limits{MaxTokens: 500}, Usage{Tokens: 512}, true, "max_tokens", "token budget of 500 reached: 512 used"},
		{"session tokens", ScopeSession, Limits{MaxTokens: 10}, Usage{Tokens: 10}, true, "max_tokens", "token budget of this session of 10 reached: 10 used"},
		{"day cost", ScopeDay, Limits{MaxCostUSD: 1.5}, Usage{CostUSD: 1.5}, true, "max_cost_usd", "cost budget of today of $1.5000 reached: $1.5000 used"},
		{"tool calls", ScopeRun, Limits{MaxToolCalls: 3}, Usage{ToolCalls: 3}, true, "max_tool_calls", "tool call budget of 3 reached: 3 used"},
		{"errors", ScopeRun, Limits{MaxConsecutiveErrors: 2}, Usage{ConsecutiveErrors: 2}, true, "max_consecutive_errors", "2 consecutive failed tool calls (limit 2)"},
		{"wall", ScopeRun, Limits{MaxWallSeconds: 60}, Usage{Wall: 61 * time.Second}, true, "max_wall_seconds", "wall time budget of 1m0s reached: 1m1s used"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, ok := Check(tt.scope, tt.l, tt.u)
			if ok != tt.want || b.Limit != tt.limit || b.Reason != tt.reason {
				t.Fatalf("Check = %+v, %v; want %v %q %q", b, ok, tt.want, tt.limit, tt.reason)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name  string
		l     Limits
		field string
	}{
		{"empty", Limits{}, ""},
		{"fine", Limits{MaxTokens: 5000, MaxCostUSD: 2, MaxWallSeconds: 600, MaxToolCalls: 50, MaxConsecutiveErrors: 3}, ""},
		{"negative tokens", Limits{MaxTokens: -1}, "max_tokens"},
		{"huge wall", Limits{MaxWallSeconds: 1 << 40}, "max_wall_seconds"},
		{"nan cost", Limits{MaxCostUSD: math.NaN()}, "max_cost_usd"},
		{"negative cost", Limits{MaxCostUSD: -0.1}, "max_cost_usd"},
		{"negative errors", Limits{MaxConsecutiveErrors: -2}, "max_consecutive_errors"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.l.Validate()
			var fe *FieldError
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate = %v", err)
				}
				return
			}
			if !errors.As(err, &fe) || fe.Field != tt.field {
				t.Fatalf("Validate = %v, want field %s", err, tt.field)
			}
		})
	}
}

func TestMerge(t *testing.T) {
	got := Limits{MaxTokens: 500, MaxToolCalls: 9}.Merge(Limits{MaxTokens: 5000, MaxCostUSD: 1})
	if want := (Limits{MaxTokens: 5000, MaxToolCalls: 9, MaxCostUSD: 1}); got != want {
		t.Fatalf("Merge = %+v, want %+v", got, want)
	}
}

func TestRepeats(t *testing.T) {
	tests := []struct {
		name  string
		n     int
		calls [][2]string
		stuck int // index of the call that reports stuck; -1 none
	}{
		{"three identical", 0, [][2]string{{"read", `{"p":"a"}`}, {"read", `{"p": "a"}`}, {"read", `{"p":"a"}`}}, 2},
		{"key order ignored", 2, [][2]string{{"x", `{"a":1,"b":2}`}, {"x", `{"b":2,"a":1}`}}, 1},
		{"different args reset", 0, [][2]string{{"read", `{"p":"a"}`}, {"read", `{"p":"b"}`}, {"read", `{"p":"a"}`}, {"read", `{"p":"a"}`}}, -1},
		{"different tool", 2, [][2]string{{"a", `{}`}, {"b", `{}`}}, -1},
		{"off", -1, [][2]string{{"a", `{}`}, {"a", `{}`}, {"a", `{}`}, {"a", `{}`}}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Repeats{N: tt.n}
			got := -1
			for i, c := range tt.calls {
				if _, ok := r.Observe(c[0], []byte(c[1])); ok && got < 0 {
					got = i
				}
			}
			if got != tt.stuck {
				t.Fatalf("stuck at %d, want %d", got, tt.stuck)
			}
		})
	}
}
