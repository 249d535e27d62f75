package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider"
)

// MaxClarifyChoices is how many suggested answers a question may offer; a
// person picks faster from a few.
const MaxClarifyChoices = 4

type clarifyArgs struct {
	Question string   `json:"question"`
	Choices  []string `json:"choices"`
}

type clarify struct{}

// NewClarify returns the clarify tool. Only its Spec and Label are useful:
// the agent loop turns a clarify call into a human request (ParseClarify)
// instead of running it.
func NewClarify() Tool { return clarify{} }

const clarifySchema = `{
  "type": "object",
  "properties": {
    "question": {"type": "string", "minLength": 1, "description": "The question for the person, self-contained."},
    "choices": {"type": "array", "items": {"type": "string", "minLength": 1}, "maxItems": 4, "description": "Up to four suggested answers; the person may also answer freely."}
  },
  "required": ["question"],
  "additionalProperties": false
}`

func (clarify) Spec() provider.ToolSpec {
	return provider.ToolSpec{
		Name: NameClarify,
		Description: "Ask the person a question and wait for the answer. Use it only when you cannot proceed " +
			"sensibly without their decision; offer up to four short choices when the options are clear.",
		Parameters: json.RawMessage(clarifySchema),
	}
}

func (clarify) Label(args json.RawMessage) string {
	q, _, err := ParseClarify(args)
	if err != nil {
		return "ask (invalid arguments)"
	}
	l, _ := firstLine(q)
	return truncate(l, 120)
}

func (clarify) Intent(json.RawMessage) Intent { return Intent{Effect: EffectNone} }

func (clarify) Run(context.Context, Env, json.RawMessage) (Result, error) {
	return Result{
		Status: event.ToolError,
		Output: "clarify is handled by the agent loop and cannot be run as a tool here",
	}, nil
}

// ParseClarify validates clarify arguments: a non-empty question and at most
// four non-empty choices. Both are returned trimmed.
func ParseClarify(args json.RawMessage) (question string, choices []string, err error) {
	var a clarifyArgs
	if err := decodeArgs(args, &a); err != nil {
		return "", nil, fmt.Errorf("invalid arguments: %w", err)
	}
	question = strings.TrimSpace(a.Question)
	if question == "" {
		return "", nil, errors.New("invalid arguments: question is required")
	}
	if len(a.Choices) > MaxClarifyChoices {
		return "", nil, fmt.Errorf("invalid arguments: at most %d choices, got %d", MaxClarifyChoices, len(a.Choices))
	}
	for i, c := range a.Choices {
		c = strings.TrimSpace(c)
		if c == "" {
			return "", nil, fmt.Errorf("invalid arguments: choice %d is empty", i+1)
		}
		choices = append(choices, c)
	}
	return question, choices, nil
}
