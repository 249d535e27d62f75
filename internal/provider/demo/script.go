package demo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Step kinds.
const (
	KindText      = "text"      // visible text, streamed in fragments
	KindReasoning = "reasoning" // reasoning text, streamed in fragments; Signature on the last one
	KindToolCall  = "tool_call" // a tool call: ID and Name first, then argument fragments
	KindError     = "error"     // fail the stream with a *provider.Error
	KindDelay     = "delay"     // pause, e.g. to exercise cancellation or slow first tokens
	KindUsage     = "usage"     // report token usage instead of the estimate
)

// Script is what the demo model plays.
type Script struct {
	Scenarios []Scenario `json:"scenarios"`
}

// Scenario is a scripted conversation, chosen by the last user message.
type Scenario struct {
	// Match is a case-insensitive substring of the last user message; ""
	// marks a default scenario, used when no other scenario matches.
	Match string `json:"match,omitempty"`
	// Turns are played one per model call: turn i answers the i-th model
	// call after the user's message (tool results in between).
	Turns []Turn `json:"turns"`
}

// Turn is one model call's output.
type Turn struct {
	Steps []Step `json:"steps"`
}

// Step is one scripted action; Kind says which fields apply.
type Step struct {
	Kind string `json:"kind"`

	// text, reasoning.
	Text      string `json:"text,omitempty"`
	Signature string `json:"signature,omitempty"` // reasoning only

	// tool_call. ID defaults to a deterministic id; Args to {}.
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name,omitempty"`
	Args json.RawMessage `json:"args,omitempty"`

	// delay.
	DelayMS int `json:"delay_ms,omitempty"`

	// ChunkSize splits text and tool arguments into fragments of this many
	// runes (default 4 for text and reasoning, 8 for arguments).
	ChunkSize int `json:"chunk_size,omitempty"`
	// ChunkDelayMS pauses between fragments so streaming is visible.
	ChunkDelayMS int `json:"chunk_delay_ms,omitempty"`

	// error. Code defaults to "scripted".
	Code      string `json:"code,omitempty"`
	Message   string `json:"message,omitempty"`
	Retryable bool   `json:"retryable,omitempty"`

	// usage.
	InputTokens  int64 `json:"input_tokens,omitempty"`
	OutputTokens int64 `json:"output_tokens,omitempty"`
}

// LoadScript reads and validates a JSON script file.
func LoadScript(path string) (Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Script{}, fmt.Errorf("demo script: %w", err)
	}
	s, err := ParseScript(data)
	if err != nil {
		return Script{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// ParseScript decodes and validates a JSON script. Unknown fields are
// rejected so a typo ("delayms") fails loudly instead of being ignored.
//
// Because a script is itself JSON, tool arguments are normally written as a
// JSON value; they may also be written as a string holding JSON (the OpenAI
// wire convention), which is then parsed and validated.
func ParseScript(data []byte) (Script, error) {
	// Steps are decoded one by one so a bad step is reported by position,
	// which a whole-document decode cannot do.
	var raw struct {
		Scenarios []struct {
			Match string `json:"match"`
			Turns []struct {
				Steps []json.RawMessage `json:"steps"`
			} `json:"turns"`
		} `json:"scenarios"`
	}
	if err := decodeStrict(data, &raw); err != nil {
		return Script{}, fmt.Errorf("demo script: %w", describeJSONError(data, err))
	}
	s := Script{Scenarios: make([]Scenario, len(raw.Scenarios))}
	for i, rsc := range raw.Scenarios {
		sc := Scenario{Match: rsc.Match, Turns: make([]Turn, len(rsc.Turns))}
		for j, rt := range rsc.Turns {
			steps := make([]Step, len(rt.Steps))
			for k, rst := range rt.Steps {
				if err := decodeStrict(rst, &steps[k]); err != nil {
					return Script{}, fmt.Errorf("demo script: %s: %w", position(i, rsc.Match, j, k), err)
				}
				steps[k].Args = unquoteArgs(steps[k].Args)
			}
			sc.Turns[j] = Turn{Steps: steps}
		}
		s.Scenarios[i] = sc
	}
	if err := s.Validate(); err != nil {
		return Script{}, err
	}
	return s, nil
}

func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("unexpected data after the JSON value")
	}
	return nil
}

// unquoteArgs turns args written as a JSON string into the JSON it holds.
func unquoteArgs(args json.RawMessage) json.RawMessage {
	if a := bytes.TrimSpace(args); len(a) > 0 && a[0] == '"' {
		var inner string
		if json.Unmarshal(a, &inner) == nil {
			return json.RawMessage(inner)
		}
	}
	return args
}

func position(scenario int, match string, turn, step int) string {
	return fmt.Sprintf("scenario %d (match %q) turn %d step %d", scenario, match, turn, step)
}

// Validate reports the first step that cannot be played as meant. New does
// not call it, so Go tests can deliberately script malformed arguments.
func (s Script) Validate() error {
	for i, sc := range s.Scenarios {
		for j, t := range sc.Turns {
			for k, st := range t.Steps {
				if err := st.validate(); err != nil {
					return fmt.Errorf("demo script: %s: %w", position(i, sc.Match, j, k), err)
				}
			}
		}
	}
	return nil
}

func (st Step) validate() error {
	switch {
	case st.DelayMS < 0:
		return errors.New("delay_ms is negative")
	case st.ChunkSize < 0:
		return errors.New("chunk_size is negative")
	case st.ChunkDelayMS < 0:
		return errors.New("chunk_delay_ms is negative")
	case st.InputTokens < 0 || st.OutputTokens < 0:
		return errors.New("token counts are negative")
	}
	switch st.Kind {
	case KindText, KindReasoning, KindDelay, KindUsage:
		return nil
	case KindToolCall:
		if strings.TrimSpace(st.Name) == "" {
			return errors.New("tool_call has no name")
		}
		if len(st.Args) > 0 && !json.Valid(st.Args) {
			return fmt.Errorf("tool_call %q has invalid JSON args: %.80q", st.Name, string(st.Args))
		}
		return nil
	case KindError:
		if st.Message == "" {
			return errors.New("error step has no message")
		}
		return nil
	case "":
		return errors.New("step has no kind")
	default:
		return fmt.Errorf("unknown kind %q (want text, reasoning, tool_call, error, delay or usage)", st.Kind)
	}
}

// describeJSONError adds a line and column to decoding errors, since byte
// offsets are useless to someone editing a script by hand.
func describeJSONError(data []byte, err error) error {
	var off int64 = -1
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		off = syn.Offset
	case errors.As(err, &typ):
		off = typ.Offset
	}
	if off <= 0 || off > int64(len(data)) {
		return err
	}
	// Offset counts the bytes read, so the culprit is the byte before it.
	before := data[:off-1]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return fmt.Errorf("line %d column %d: %w", line, col, err)
}

// clone deep-copies the script so a caller mutating its value after New
// cannot race with a running stream.
func (s Script) clone() Script {
	out := Script{Scenarios: make([]Scenario, len(s.Scenarios))}
	for i, sc := range s.Scenarios {
		turns := make([]Turn, len(sc.Turns))
		for j, t := range sc.Turns {
			steps := make([]Step, len(t.Steps))
			for k, st := range t.Steps {
				st.Args = bytes.Clone(st.Args)
				steps[k] = st
			}
			turns[j] = Turn{Steps: steps}
		}
		out.Scenarios[i] = Scenario{Match: sc.Match, Turns: turns}
	}
	return out
}
