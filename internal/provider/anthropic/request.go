package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"
	"unicode"

	"github.com/caduceus-dev/caduceus/internal/provider"
)

// minThinkingBudget is the smallest budget_tokens the API accepts.
const minThinkingBudget = 1024

// continuedText opens a conversation whose stored history starts with the
// assistant: the API insists on a user message first.
const continuedText = "(continued)"

// missingResultText answers a tool_use whose result never made it into the
// history (an interrupted run): the API rejects an unanswered tool_use.
const missingResultText = "no result was recorded for this tool call"

// emptyErrorText stands in for an empty error result: the API rejects
// empty content when is_error is set.
const emptyErrorText = "(the tool failed without output)"

// emptySchema is the input_schema of a tool that declared none; the API
// requires an object schema.
const emptySchema = `{"type":"object","properties":{}}`

// messagesRequest is the body of POST /v1/messages.
type messagesRequest struct {
	Model     string          `json:"model"`
	MaxTokens int             `json:"max_tokens"`
	System    string          `json:"system,omitempty"`
	Messages  []message       `json:"messages"`
	Tools     []tool          `json:"tools,omitempty"`
	Stream    bool            `json:"stream"`
	Thinking  *thinkingConfig `json:"thinking,omitempty"`
}

type thinkingConfig struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
}

type tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type message struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

// Content block types.
const (
	blockText       = "text"
	blockThinking   = "thinking"
	blockRedacted   = "redacted_thinking"
	blockToolUse    = "tool_use"
	blockToolResult = "tool_result"
	blockImage      = "image"
)

// block is one content block. One struct for every type keeps the repair
// passes simple; MarshalJSON sends only the fields the type has, because
// the API rejects unknown or misplaced fields.
type block struct {
	Type      string
	Text      string // text, thinking, tool_result content
	Signature string // thinking
	Data      string // redacted_thinking
	ID        string // tool_use id, tool_result tool_use_id
	Name      string // tool_use
	Input     json.RawMessage
	IsError   bool
	MediaType string // image
	Bytes     []byte // image
}

func (b block) MarshalJSON() ([]byte, error) {
	switch b.Type {
	case blockText:
		return json.Marshal(struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}{b.Type, b.Text})
	case blockThinking:
		return json.Marshal(struct {
			Type      string `json:"type"`
			Thinking  string `json:"thinking"`
			Signature string `json:"signature"`
		}{b.Type, b.Text, b.Signature})
	case blockRedacted:
		return json.Marshal(struct {
			Type string `json:"type"`
			Data string `json:"data"`
		}{b.Type, b.Data})
	case blockToolUse:
		return json.Marshal(struct {
			Type  string          `json:"type"`
			ID    string          `json:"id"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		}{b.Type, b.ID, b.Name, b.Input})
	case blockImage:
		type source struct {
			Type      string `json:"type"`
			MediaType string `json:"media_type"`
			Data      []byte `json:"data"` // encoding/json writes base64
		}
		return json.Marshal(struct {
			Type   string `json:"type"`
			Source source `json:"source"`
		}{b.Type, source{"base64", b.MediaType, b.Bytes}})
	case blockToolResult:
		return json.Marshal(struct {
			Type      string `json:"type"`
			ToolUseID string `json:"tool_use_id"`
			Content   string `json:"content,omitempty"`
			IsError   bool   `json:"is_error,omitempty"`
		}{b.Type, b.ID, b.Text, b.IsError})
	}
	return nil, fmt.Errorf("anthropic: unknown content block type %q", b.Type)
}

// buildRequest turns a provider request into the API's body.
func buildRequest(req provider.Request, defaultMax int) messagesRequest {
	msgs := convertMessages(req.Messages)
	out := messagesRequest{
		Model:     req.Model,
		MaxTokens: req.MaxTokens,
		System:    req.System,
		Messages:  msgs,
		Stream:    true,
	}
	if out.MaxTokens <= 0 {
		out.MaxTokens = defaultMax
	}
	for _, t := range req.Tools {
		out.Tools = append(out.Tools, tool{Name: t.Name, Description: t.Description, InputSchema: schema(t.Parameters)})
	}
	if req.ThinkingBudget > 0 && thinkingAllowed(msgs) {
		budget := max(req.ThinkingBudget, minThinkingBudget)
		out.Thinking = &thinkingConfig{Type: "enabled", BudgetTokens: budget}
		if out.MaxTokens <= budget {
			out.MaxTokens = budget + defaultMax
		}
	}
	return out
}

// thinkingAllowed reports whether thinking may be enabled for msgs. While a
// tool-use loop is running the API demands that its assistant message start
// with a signed thinking block; when it does not (thinking was off for that
// turn, or the turn came from another provider) the only request the API
// accepts is one without thinking, until the next user turn.
func thinkingAllowed(msgs []message) bool {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role != "assistant" {
			continue
		}
		if !hasType(m.Content, blockToolUse) {
			return true
		}
		first := m.Content[0]
		return first.Type == blockThinking && first.Signature != "" || first.Type == blockRedacted && first.Data != ""
	}
	return true
}

func hasType(bs []block, typ string) bool {
	for _, b := range bs {
		if b.Type == typ {
			return true
		}
	}
	return false
}

// schema returns p when it is a JSON object, else an empty object schema.
func schema(p json.RawMessage) json.RawMessage {
	if isObject(p) {
		return p
	}
	return json.RawMessage(emptySchema)
}

func isObject(p json.RawMessage) bool {
	p = bytes.TrimSpace(p)
	return len(p) > 0 && p[0] == '{' && json.Valid(p)
}

// convertMessages turns the provider history into messages the API
// accepts whatever the history looks like: it is stored across runs,
// resumes and providers, so it may be interrupted, start with the
// assistant or hold blocks another provider produced.
func convertMessages(in []provider.Message) []message {
	var out []message
	ids := idMap{used: map[string]bool{}}
	for _, m := range in {
		ids.message(m.Role)
		role, content := "user", userBlocks(m, &ids)
		if m.Role == provider.RoleAssistant {
			role, content = "assistant", assistantBlocks(m, &ids)
		}
		if len(content) == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, content...)
			continue
		}
		out = append(out, message{Role: role, Content: content})
	}
	if len(out) == 0 || out[0].Role != "user" {
		out = append([]message{{Role: "user", Content: []block{{Type: blockText, Text: continuedText}}}}, out...)
	}
	out = pairToolResults(out)
	for i := range out {
		out[i].Content = orderBlocks(out[i].Content)
	}
	trimTrailingAssistant(&out)
	return out
}

func assistantBlocks(m provider.Message, ids *idMap) []block {
	if !hasText(m.Text) && len(m.ToolCalls) == 0 {
		// Thinking alone answers nothing; the API strips old thinking
		// blocks, which would leave an empty message.
		return nil
	}
	var bs []block
	for _, r := range m.Reasoning {
		switch {
		case r.Redacted != "":
			bs = append(bs, block{Type: blockRedacted, Data: r.Redacted})
		case r.Signature != "":
			bs = append(bs, block{Type: blockThinking, Text: r.Text, Signature: r.Signature})
		}
		// Unsigned reasoning (another provider's, or a cut stream's) would
		// be rejected; the model does not need it to continue.
	}
	if hasText(m.Text) {
		bs = append(bs, block{Type: blockText, Text: m.Text})
	}
	for _, c := range m.ToolCalls {
		bs = append(bs, block{Type: blockToolUse, ID: ids.call(c.ID), Name: c.Name, Input: toolInput(c.Args)})
	}
	return bs
}

func userBlocks(m provider.Message, ids *idMap) []block {
	var bs []block
	for _, r := range m.ToolResults {
		bs = append(bs, resultBlock(ids.result(r.ToolCallID), r.Content, r.IsError))
	}
	// Images before the text that speaks of them, as Anthropic advises.
	for _, im := range m.Images {
		if im.Data != nil {
			bs = append(bs, block{Type: blockImage, MediaType: im.MIME, Bytes: im.Data})
		}
	}
	if hasText(m.Text) {
		bs = append(bs, block{Type: blockText, Text: m.Text})
	}
	return bs
}

func resultBlock(id, content string, isError bool) block {
	if isError && content == "" {
		content = emptyErrorText
	}
	return block{Type: blockToolResult, ID: id, Text: content, IsError: isError}
}

// hasText reports whether s may be sent as a text block: the API rejects
// empty and whitespace-only ones.
func hasText(s string) bool {
	return strings.TrimSpace(s) != ""
}

// toolInput returns args when they are a JSON object; the API requires an
// object and a broken one must not make the whole history unusable.
func toolInput(args json.RawMessage) json.RawMessage {
	if isObject(args) {
		return args
	}
	return json.RawMessage("{}")
}

// pairToolResults makes every tool_use answered in the next user message
// and every tool_result answer a tool_use of the message before it, the
// API's rule. Unanswered calls get an error result; results without their
// call become text so the model still sees them.
func pairToolResults(msgs []message) []message {
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		if m.Role == "assistant" {
			if hasType(m.Content, blockToolUse) && (i+1 == len(msgs) || msgs[i+1].Role != "user") {
				msgs = append(msgs[:i+1], append([]message{{Role: "user"}}, msgs[i+1:]...)...)
			}
			continue
		}
		var uses []string
		if i > 0 {
			for _, b := range msgs[i-1].Content {
				if b.Type == blockToolUse {
					uses = append(uses, b.ID)
				}
			}
		}
		answered := map[string]bool{}
		for j, b := range m.Content {
			if b.Type != blockToolResult {
				continue
			}
			if !contains(uses, b.ID) || answered[b.ID] {
				m.Content[j] = block{Type: blockText, Text: orphanText(b)}
				continue
			}
			answered[b.ID] = true
		}
		var missing []block
		for _, id := range uses {
			if !answered[id] {
				missing = append(missing, resultBlock(id, missingResultText, true))
				answered[id] = true // a duplicated id needs one answer
			}
		}
		msgs[i].Content = append(m.Content, missing...)
	}
	return msgs
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func orphanText(b block) string {
	state := "result"
	if b.IsError {
		state = "error"
	}
	content := b.Text
	if content == "" {
		content = "(empty)"
	}
	return fmt.Sprintf("[%s of an earlier tool call %s]\n%s", state, b.ID, content)
}

// orderBlocks puts a message's blocks in the order the API expects:
// thinking first and tool_use last in assistant messages (merged messages
// would otherwise interleave them), tool_result first in user messages.
// The sort is stable so each kind keeps its order.
func orderBlocks(bs []block) []block {
	rank := func(b block) int {
		switch b.Type {
		case blockThinking, blockRedacted, blockToolResult:
			return 0
		case blockToolUse:
			return 2
		}
		return 1
	}
	out := make([]block, 0, len(bs))
	for r := range 3 {
		for _, b := range bs {
			if rank(b) == r {
				out = append(out, b)
			}
		}
	}
	return out
}

// trimTrailingAssistant strips trailing whitespace from a final assistant
// message (a prefill): the API rejects it there.
func trimTrailingAssistant(msgs *[]message) {
	n := len(*msgs)
	if n == 0 || (*msgs)[n-1].Role != "assistant" {
		return
	}
	m := &(*msgs)[n-1]
	last := &m.Content[len(m.Content)-1]
	if last.Type != blockText {
		return
	}
	last.Text = strings.TrimRightFunc(last.Text, unicode.IsSpace)
	if last.Text == "" {
		m.Content = m.Content[:len(m.Content)-1]
	}
	if len(m.Content) == 0 {
		*msgs = (*msgs)[:n-1]
	}
}

// idMap gives every tool_use of a request a valid id, unique across the
// request as the API demands, and points each tool_result at the call it
// answers. Other providers reuse ids ("call_0" every turn, or
// "functions.read:0" which sanitises the same each turn), so a repeated id
// gets a suffix and the results that follow the call are renamed with it.
type idMap struct {
	used map[string]bool
	// open holds, per sanitised id, the final ids of the calls of the
	// latest run of assistant messages not answered yet, in call order.
	open        map[string][]string
	inAssistant bool
}

// message notes the role of the next message: a new run of assistant
// messages starts a new set of calls to answer.
func (m *idMap) message(role provider.Role) {
	asst := role == provider.RoleAssistant
	if asst && !m.inAssistant {
		m.open = map[string][]string{}
	}
	m.inAssistant = asst
}

func (m *idMap) call(id string) string {
	s := sanitizeID(id)
	f := s
	for n := 2; m.used[f]; n++ {
		f = fmt.Sprintf("%s_%d", s, n)
	}
	m.used[f] = true
	m.open[s] = append(m.open[s], f)
	return f
}

func (m *idMap) result(id string) string {
	s := sanitizeID(id)
	if q := m.open[s]; len(q) > 0 {
		m.open[s] = q[1:]
		return q[0]
	}
	return s // answers no open call: pairToolResults turns it into text
}

// sanitizeID maps a tool call id onto the API's ^[a-zA-Z0-9_-]+$. Ids from
// other providers ("functions.read:0") are rewritten with a hash of the
// original appended, so two ids that differ only in replaced characters
// stay distinct; the mapping is a pure function, so a tool_use and its
// tool_result always agree.
func sanitizeID(id string) string {
	ok := id != ""
	for _, r := range id {
		if !idRune(r) {
			ok = false
			break
		}
	}
	if ok {
		return id
	}
	var b strings.Builder
	b.WriteString("toolu_")
	for _, r := range id {
		if idRune(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	h := fnv.New32a()
	h.Write([]byte(id))
	fmt.Fprintf(&b, "_%08x", h.Sum32())
	return b.String()
}

func idRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
}
