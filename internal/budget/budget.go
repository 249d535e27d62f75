// Package budget holds the limits a run works within (issue 16: budgets
// and health) and the checks the runner makes at every step boundary:
// tokens, cost, wall time, tool calls and consecutive errors, per run, per
// session, per profile and per day, and the detection of a run repeating
// the same tool call. It has no dependencies beyond the standard library,
// so the store, the runner and the API share it.
package budget

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Scopes a limit may apply to.
const (
	ScopeRun     = "run"
	ScopeSession = "session"
	ScopeProfile = "profile"
	ScopeDay     = "day" // server-wide, per UTC day; its target is ""
)

// ValidScope reports whether s names a scope.
func ValidScope(s string) bool {
	switch s {
	case ScopeRun, ScopeSession, ScopeProfile, ScopeDay:
		return true
	}
	return false
}

// Limits are the ceilings of one scope; a zero field sets none.
type Limits struct {
	MaxTokens            int64   `json:"max_tokens,omitempty"`
	MaxCostUSD           float64 `json:"max_cost_usd,omitempty"`
	MaxWallSeconds       int64   `json:"max_wall_seconds,omitempty"`
	MaxToolCalls         int64   `json:"max_tool_calls,omitempty"`
	MaxConsecutiveErrors int64   `json:"max_consecutive_errors,omitempty"`
}

// Zero reports whether l sets no limit.
func (l Limits) Zero() bool { return l == Limits{} }

// Merge returns l with every limit o sets replacing l's.
func (l Limits) Merge(o Limits) Limits {
	if o.MaxTokens != 0 {
		l.MaxTokens = o.MaxTokens
	}
	if o.MaxCostUSD != 0 {
		l.MaxCostUSD = o.MaxCostUSD
	}
	if o.MaxWallSeconds != 0 {
		l.MaxWallSeconds = o.MaxWallSeconds
	}
	if o.MaxToolCalls != 0 {
		l.MaxToolCalls = o.MaxToolCalls
	}
	if o.MaxConsecutiveErrors != 0 {
		l.MaxConsecutiveErrors = o.MaxConsecutiveErrors
	}
	return l
}

// Ceilings bound every limit so a typo cannot overflow a counter.
const (
	maxTokens    = 1 << 40
	maxCostUSD   = 1e6
	maxWall      = 366 * 24 * 3600
	maxToolCalls = 1 << 30
)

// FieldError is an invalid limit: Field names it in the JSON form.
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// Validate reports the first limit that is negative, not a number or
// beyond its ceiling.
func (l Limits) Validate() error {
	ints := []struct {
		field  string
		v, max int64
	}{
		{"max_tokens", l.MaxTokens, maxTokens},
		{"max_wall_seconds", l.MaxWallSeconds, maxWall},
		{"max_tool_calls", l.MaxToolCalls, maxToolCalls},
		{"max_consecutive_errors", l.MaxConsecutiveErrors, maxToolCalls},
	}
	for _, f := range ints {
		if f.v < 0 || f.v > f.max {
			return &FieldError{Field: f.field, Message: fmt.Sprintf("must be between 0 (no limit) and %d", f.max)}
		}
	}
	if math.IsNaN(l.MaxCostUSD) || l.MaxCostUSD < 0 || l.MaxCostUSD > maxCostUSD {
		return &FieldError{Field: "max_cost_usd", Message: fmt.Sprintf("must be between 0 (no limit) and %g", float64(maxCostUSD))}
	}
	return nil
}

// Usage is what a scope has spent.
type Usage struct {
	Tokens            int64
	CostUSD           float64
	ToolCalls         int64
	ConsecutiveErrors int64
	Wall              time.Duration
}

// Breach is a limit reached: the run pauses with Reason.
type Breach struct {
	Scope  string `json:"scope"`
	Limit  string `json:"limit"` // the Limits field's JSON name
	Max    string `json:"max"`
	Used   string `json:"used"`
	Reason string `json:"reason"`
	// MaxValue is the limit as a number in the field's unit, for a form
	// offering a higher one.
	MaxValue float64 `json:"max_value"`
}

// Check returns the first limit of l that u reaches, if any.
func Check(scope string, l Limits, u Usage) (Breach, bool) {
	b, ok := check(scope, l, u)
	switch b.Limit {
	case "max_tokens":
		b.MaxValue = float64(l.MaxTokens)
	case "max_cost_usd":
		b.MaxValue = l.MaxCostUSD
	case "max_tool_calls":
		b.MaxValue = float64(l.MaxToolCalls)
	case "max_consecutive_errors":
		b.MaxValue = float64(l.MaxConsecutiveErrors)
	case "max_wall_seconds":
		b.MaxValue = float64(l.MaxWallSeconds)
	}
	return b, ok
}

func check(scope string, l Limits, u Usage) (Breach, bool) {
	of := ""
	if scope != ScopeRun {
		of = " of this " + scope
		if scope == ScopeDay {
			of = " of today"
		}
	}
	b := func(limit, what, max, used string) (Breach, bool) {
		return Breach{Scope: scope, Limit: limit, Max: max, Used: used,
			Reason: fmt.Sprintf("%s%s of %s reached: %s used", what, of, max, used)}, true
	}
	switch {
	case l.MaxTokens > 0 && u.Tokens >= l.MaxTokens:
		return b("max_tokens", "token budget", strconv.FormatInt(l.MaxTokens, 10), strconv.FormatInt(u.Tokens, 10))
	case l.MaxCostUSD > 0 && u.CostUSD >= l.MaxCostUSD:
		return b("max_cost_usd", "cost budget", usd(l.MaxCostUSD), usd(u.CostUSD))
	case l.MaxToolCalls > 0 && u.ToolCalls >= l.MaxToolCalls:
		return b("max_tool_calls", "tool call budget", strconv.FormatInt(l.MaxToolCalls, 10), strconv.FormatInt(u.ToolCalls, 10))
	case l.MaxConsecutiveErrors > 0 && u.ConsecutiveErrors >= l.MaxConsecutiveErrors:
		return Breach{Scope: scope, Limit: "max_consecutive_errors", Max: strconv.FormatInt(l.MaxConsecutiveErrors, 10),
			Used:   strconv.FormatInt(u.ConsecutiveErrors, 10),
			Reason: fmt.Sprintf("%d consecutive failed tool calls (limit %d)", u.ConsecutiveErrors, l.MaxConsecutiveErrors)}, true
	case l.MaxWallSeconds > 0 && u.Wall >= time.Duration(l.MaxWallSeconds)*time.Second:
		return b("max_wall_seconds", "wall time budget", (time.Duration(l.MaxWallSeconds) * time.Second).String(), u.Wall.Round(time.Second).String())
	}
	return Breach{}, false
}

func usd(v float64) string { return "$" + strconv.FormatFloat(v, 'f', 4, 64) }

// DayUsage is a step's addition to the server's day.
type DayUsage struct {
	Tokens    int64
	CostUSD   float64
	ToolCalls int64
}

// Day is the key of the UTC day t falls on.
func Day(t time.Time) string { return t.UTC().Format(time.DateOnly) }
