package anthropictest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// Validate checks a POST /v1/messages body against the rules the API
// enforces (see the package documentation). The error's text is what the
// server sends in its 400 reply, worded like the API's own messages.
func Validate(body []byte) error {
	var req struct {
		Model     string          `json:"model"`
		MaxTokens *int            `json:"max_tokens"`
		System    json.RawMessage `json:"system"`
		Messages  []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
		Stream   bool `json:"stream"`
		Thinking *struct {
			Type         string `json:"type"`
			BudgetTokens int    `json:"budget_tokens"`
		} `json:"thinking"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return fmt.Errorf("the request body is not valid JSON: %v", err)
	}
	if req.Model == "" {
		return errors.New("model: Field required")
	}
	if req.MaxTokens == nil {
		return errors.New("max_tokens: Field required")
	}
	if *req.MaxTokens < 1 {
		return errors.New("max_tokens: Input should be greater than or equal to 1")
	}
	if !req.Stream {
		return errors.New("anthropictest: only streaming requests (stream: true) are served")
	}
	if err := validateSystem(req.System); err != nil {
		return err
	}
	thinking := false
	if t := req.Thinking; t != nil {
		switch t.Type {
		case "enabled":
			thinking = true
			if t.BudgetTokens < 1024 {
				return errors.New("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
			}
			if *req.MaxTokens <= t.BudgetTokens {
				return errors.New("`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size")
			}
		case "disabled":
		default:
			return fmt.Errorf("thinking: Input tag '%s' found using 'type' does not match any of the expected tags: 'disabled', 'enabled'", t.Type)
		}
	}
	names := map[string]bool{}
	for i, t := range req.Tools {
		if !validName(t.Name, 128) {
			return fmt.Errorf("tools.%d.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'", i)
		}
		if names[t.Name] {
			return errors.New("tools: Tool names must be unique.")
		}
		names[t.Name] = true
		var s struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(t.InputSchema, &s) != nil || s.Type != "object" {
			return fmt.Errorf("tools.%d.custom.input_schema.type: Input should be 'object'", i)
		}
	}

	if len(req.Messages) == 0 {
		return errors.New("messages: at least one message is required")
	}
	msgs := make([][]block, len(req.Messages))
	for i, m := range req.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return fmt.Errorf("messages.%d.role: Input should be 'user' or 'assistant'", i)
		}
		if i == 0 && m.Role != "user" {
			return errors.New("messages: first message must use the \"user\" role")
		}
		if i > 0 && req.Messages[i-1].Role == m.Role {
			return fmt.Errorf("messages: roles must alternate between \"user\" and \"assistant\", but found multiple %q roles in a row", m.Role)
		}
		bs, err := parseContent(i, m.Content)
		if err != nil {
			return err
		}
		final := i == len(req.Messages)-1 && m.Role == "assistant"
		if len(bs) == 0 && !final {
			return fmt.Errorf("messages.%d: all messages must have non-empty content except for the optional final assistant message", i)
		}
		msgs[i] = bs
	}

	seen := map[string]bool{}
	for i, bs := range msgs {
		role := req.Messages[i].Role
		var prevUses []string
		if i > 0 {
			prevUses = toolUses(msgs[i-1])
		}
		answered := map[string]bool{}
		pastResults := false
		for j, b := range bs {
			at := fmt.Sprintf("messages.%d.content.%d", i, j)
			if err := checkBlock(at, role, b); err != nil {
				return err
			}
			switch b.Type {
			case "tool_use":
				if seen[b.ID] {
					return fmt.Errorf("%s: `tool_use` ids must be unique", at)
				}
				seen[b.ID] = true
			case "tool_result":
				if pastResults {
					return fmt.Errorf("messages.%d: `tool_result` blocks must come first in the content of a user message, before any other content", i)
				}
				if !contains(prevUses, b.ToolUseID) {
					return fmt.Errorf("%s: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", at, b.ToolUseID)
				}
				if answered[b.ToolUseID] {
					return fmt.Errorf("%s: each `tool_use` must have a single result. Found multiple `tool_result` blocks with id: %s", at, b.ToolUseID)
				}
				answered[b.ToolUseID] = true
			}
			if b.Type != "tool_result" {
				pastResults = true
			}
		}
		if role == "assistant" {
			if uses := toolUses(bs); len(uses) > 0 {
				var next []block
				if i+1 < len(msgs) {
					next = msgs[i+1]
				}
				got := map[string]bool{}
				for _, b := range next {
					if b.Type == "tool_result" {
						got[b.ToolUseID] = true
					}
				}
				var missing []string
				for _, id := range uses {
					if !got[id] {
						missing = append(missing, id)
					}
				}
				if len(missing) > 0 {
					return fmt.Errorf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i, strings.Join(missing, ", "))
				}
			}
		}
	}

	if last := len(msgs) - 1; req.Messages[last].Role == "assistant" && len(msgs[last]) > 0 {
		if b := msgs[last][len(msgs[last])-1]; b.Type == "text" && b.Text != nil && strings.TrimRightFunc(*b.Text, unicode.IsSpace) != *b.Text {
			return errors.New("messages: final assistant content cannot end with trailing whitespace")
		}
	}

	if thinking {
		for i := len(msgs) - 1; i >= 0; i-- {
			if req.Messages[i].Role != "assistant" {
				continue
			}
			if len(toolUses(msgs[i])) > 0 {
				first := msgs[i][0]
				signed := first.Type == "thinking" && first.Signature != nil && *first.Signature != "" ||
					first.Type == "redacted_thinking" && first.Data != ""
				if !signed {
					return fmt.Errorf("messages.%d.content.0.type: Expected `thinking` or `redacted_thinking`, but found `%s`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking", i, first.Type)
				}
			}
			break
		}
	}
	return nil
}

// block is any content block, as sent.
type block struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text"`
	Thinking  *string         `json:"thinking"`
	Signature *string         `json:"signature"`
	Data      string          `json:"data"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// parseContent reads content that is a string or an array of blocks; a
// string is one text block.
func parseContent(i int, raw json.RawMessage) ([]block, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, fmt.Errorf("messages.%d.content: Field required", i)
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("messages.%d.content: %v", i, err)
		}
		if s == "" {
			return nil, nil
		}
		return []block{{Type: "text", Text: &s}}, nil
	}
	var bs []block
	if err := json.Unmarshal(raw, &bs); err != nil {
		return nil, fmt.Errorf("messages.%d.content: Input should be a valid list or string: %v", i, err)
	}
	return bs, nil
}

// checkBlock checks one block on its own.
func checkBlock(at, role string, b block) error {
	only := func(want string) error {
		if role != want {
			return fmt.Errorf("%s: `%s` blocks can only be in `%s` messages", at, b.Type, want)
		}
		return nil
	}
	switch b.Type {
	case "text":
		if b.Text == nil {
			return fmt.Errorf("%s.text: Field required", at)
		}
		if *b.Text == "" {
			return errors.New("messages: text content blocks must be non-empty")
		}
		if strings.TrimSpace(*b.Text) == "" {
			return errors.New("messages: text content blocks must contain non-whitespace text")
		}
	case "thinking":
		if err := only("assistant"); err != nil {
			return err
		}
		if b.Thinking == nil {
			return fmt.Errorf("%s.thinking.thinking: Field required", at)
		}
		if b.Signature == nil || *b.Signature == "" {
			return fmt.Errorf("%s.thinking.signature: Field required", at)
		}
	case "redacted_thinking":
		if err := only("assistant"); err != nil {
			return err
		}
		if b.Data == "" {
			return fmt.Errorf("%s.redacted_thinking.data: Field required", at)
		}
	case "tool_use":
		if err := only("assistant"); err != nil {
			return err
		}
		if !validName(b.ID, 0) {
			return fmt.Errorf("%s.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'", at)
		}
		if b.Name == "" {
			return fmt.Errorf("%s.tool_use.name: Field required", at)
		}
		in := bytes.TrimSpace(b.Input)
		if len(in) == 0 || in[0] != '{' {
			return fmt.Errorf("%s.tool_use.input: Input should be a valid dictionary", at)
		}
	case "tool_result":
		if err := only("user"); err != nil {
			return err
		}
		if !validName(b.ToolUseID, 0) {
			return fmt.Errorf("%s.tool_result.tool_use_id: String should match pattern '^[a-zA-Z0-9_-]+$'", at)
		}
		if b.IsError && emptyContent(b.Content) {
			return fmt.Errorf("%s.tool_result: content cannot be empty if `is_error` is true", at)
		}
	case "image", "document", "search_result":
		// Accepted as is: the fake does not look inside.
	default:
		return fmt.Errorf("%s: Input tag '%s' found using 'type' does not match any of the expected tags", at, b.Type)
	}
	return nil
}

func emptyContent(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == `""` || string(raw) == "[]" || string(raw) == "null"
}

func validateSystem(raw json.RawMessage) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] == '"' || string(raw) == "null" {
		return nil
	}
	var bs []block
	if err := json.Unmarshal(raw, &bs); err != nil {
		return fmt.Errorf("system: Input should be a valid list or string: %v", err)
	}
	for i, b := range bs {
		if b.Type != "text" || b.Text == nil || *b.Text == "" {
			return fmt.Errorf("system.%d: system blocks must be non-empty text blocks", i)
		}
	}
	return nil
}

func toolUses(bs []block) []string {
	var ids []string
	for _, b := range bs {
		if b.Type == "tool_use" {
			ids = append(ids, b.ID)
		}
	}
	return ids
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// validName matches ^[a-zA-Z0-9_-]+$, at most maxLen runes when maxLen > 0.
func validName(s string, maxLen int) bool {
	if s == "" || maxLen > 0 && len(s) > maxLen {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}
