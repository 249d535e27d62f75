package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"image"
	_ "image/gif" // image.DecodeConfig reads the dimensions of attached images
	_ "image/jpeg"
	_ "image/png"
	"iter"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/caduceus-dev/caduceus/internal/provider"
)

// Default fragment sizes, in runes: small enough that streaming shows.
const (
	defaultTextChunk = 4
	defaultArgsChunk = 8
)

// EndOfScript is the text played when a conversation outlives its scenario,
// so the agent loop still gets a well-formed final answer.
const EndOfScript = "(end of demo script)"

// Provider is the offline demo model. It is safe for concurrent use: it
// holds only its own copy of the script.
type Provider struct {
	script Script
}

var _ provider.Provider = (*Provider)(nil)

// New returns a demo model playing s. The script is copied and not
// validated (see Script.Validate).
func New(s Script) *Provider {
	return &Provider{script: s.clone()}
}

// Name implements provider.Provider.
func (p *Provider) Name() string { return "demo" }

// Demo implements provider.Provider; always true.
func (p *Provider) Demo() bool { return true }

// Stream plays the turn of the scenario that req's history is at. The
// scenario is chosen by the last user message; the turn by how many
// assistant messages follow it.
func (p *Provider) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Chunk, error] {
	return func(yield func(provider.Chunk, error) bool) {
		userIdx, userText := lastUser(req.Messages)
		turn := 0
		for _, m := range req.Messages[userIdx+1:] {
			if m.Role == provider.RoleAssistant {
				turn++
			}
		}
		pl := player{
			ctx:    ctx,
			yield:  yield,
			turn:   turn,
			idSeed: idSeed(userIdx, userText),
		}
		steps := []Step{{Kind: KindText, Text: EndOfScript, ChunkSize: utf8.RuneCountInString(EndOfScript)}}
		if sc, ok := p.pick(userText); ok && turn < len(sc.Turns) {
			steps = sc.Turns[turn].Steps
		}
		if d := describeImages(req.Messages, userIdx); d != "" && turn == 0 {
			// The demo model cannot see; it says what it was given, which
			// shows an attached image reached the model as image input.
			steps = []Step{{Kind: KindText, Text: d, ChunkSize: 24}}
		}
		for _, st := range steps {
			if !pl.step(st) {
				return
			}
		}
		usage := provider.Usage{
			InputTokens:  int64(inputRunes(req) / 4),
			OutputTokens: int64(pl.outRunes / 4),
		}
		if pl.usage != nil {
			usage = *pl.usage
		}
		if !yield(provider.Chunk{Kind: provider.ChunkUsage, Usage: usage}, nil) {
			return
		}
		stop := provider.StopEnd
		if pl.toolCalls > 0 {
			stop = provider.StopToolUse
		}
		yield(provider.Chunk{Kind: provider.ChunkDone, StopReason: stop}, nil)
	}
}

// pick returns the first scenario whose non-empty Match occurs in text, else
// the first default scenario. Defaults are skipped in the first pass because
// "" occurs in every message and would shadow later, specific scenarios.
func (p *Provider) pick(text string) (Scenario, bool) {
	lower := strings.ToLower(text)
	for _, sc := range p.script.Scenarios {
		if sc.Match != "" && strings.Contains(lower, strings.ToLower(sc.Match)) {
			return sc, true
		}
	}
	for _, sc := range p.script.Scenarios {
		if sc.Match == "" {
			return sc, true
		}
	}
	return Scenario{}, false
}

// describeImages describes the loaded images of message i by type, size
// and dimensions; "" when it has none.
func describeImages(msgs []provider.Message, i int) string {
	if i < 0 {
		return ""
	}
	var lines []string
	for _, im := range msgs[i].Images {
		if im.Data == nil {
			continue
		}
		d := fmt.Sprintf("%s (%s, %d bytes", path.Base(im.Path), im.MIME, len(im.Data))
		if c, _, err := image.DecodeConfig(bytes.NewReader(im.Data)); err == nil {
			d += fmt.Sprintf(", %d×%d pixels", c.Width, c.Height)
		}
		lines = append(lines, "- "+d+")")
	}
	if len(lines) == 0 {
		return ""
	}
	return fmt.Sprintf("I am the offline demo model, so I cannot look at images, but I received %d as image input:\n\n%s", len(lines), strings.Join(lines, "\n"))
}

// lastUser returns the index and text of the last user message, or -1 and ""
// when there is none (the default scenario then answers).
func lastUser(msgs []provider.Message) (int, string) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == provider.RoleUser {
			return i, msgs[i].Text
		}
	}
	return -1, ""
}

// idSeed makes default tool-call ids stable for a given history yet distinct
// across user messages; the position is included so repeating the same
// message later in a session does not reuse ids (events are keyed by them).
func idSeed(userIdx int, userText string) uint32 {
	h := fnv.New32a()
	fmt.Fprintf(h, "%d\x00%s", userIdx, userText)
	return h.Sum32()
}

func inputRunes(req provider.Request) int {
	n := utf8.RuneCountInString(req.System)
	for _, m := range req.Messages {
		n += utf8.RuneCountInString(m.Text)
		for _, r := range m.Reasoning {
			n += utf8.RuneCountInString(r.Text)
		}
		for _, tc := range m.ToolCalls {
			n += utf8.RuneCountInString(tc.Name) + utf8.RuneCount(tc.Args)
		}
		for _, tr := range m.ToolResults {
			n += utf8.RuneCountInString(tr.Content)
		}
	}
	return n
}

// player streams one turn. Its methods return false when the stream must
// stop: the consumer broke off, ctx was cancelled, or an error was scripted.
type player struct {
	ctx       context.Context
	yield     func(provider.Chunk, error) bool
	turn      int
	idSeed    uint32
	toolCalls int
	outRunes  int
	usage     *provider.Usage
}

func (pl *player) step(st Step) bool {
	if err := pl.ctx.Err(); err != nil {
		pl.yield(provider.Chunk{}, err)
		return false
	}
	switch st.Kind {
	case KindText, KindReasoning:
		return pl.text(st)
	case KindToolCall:
		return pl.toolCall(st)
	case KindDelay:
		return pl.sleep(st.DelayMS)
	case KindUsage:
		pl.usage = &provider.Usage{InputTokens: st.InputTokens, OutputTokens: st.OutputTokens}
		return pl.yield(provider.Chunk{Kind: provider.ChunkUsage, Usage: *pl.usage}, nil)
	case KindError:
		code := st.Code
		if code == "" {
			code = "scripted"
		}
		pl.yield(provider.Chunk{}, &provider.Error{Provider: "demo", Code: code, Message: st.Message, Retryable: st.Retryable})
		return false
	default:
		// Unvalidated scripts reach here; failing beats silently skipping,
		// which would make a typo look like a model that said nothing.
		pl.yield(provider.Chunk{}, &provider.Error{Provider: "demo", Code: "bad_script", Message: fmt.Sprintf("unknown step kind %q", st.Kind)})
		return false
	}
}

func (pl *player) text(st Step) bool {
	kind := provider.ChunkText
	if st.Kind == KindReasoning {
		kind = provider.ChunkReasoning
	}
	frags := split(st.Text, orDefault(st.ChunkSize, defaultTextChunk))
	if len(frags) == 0 && st.Signature != "" {
		// A signed block with no visible text (redacted thinking) still
		// has to reach the consumer for replay.
		frags = []string{""}
	}
	for i, f := range frags {
		if i > 0 && !pl.sleep(st.ChunkDelayMS) {
			return false
		}
		c := provider.Chunk{Kind: kind, Text: f}
		if kind == provider.ChunkReasoning && i == len(frags)-1 {
			c.Signature = st.Signature
		}
		pl.outRunes += utf8.RuneCountInString(f)
		if !pl.yield(c, nil) {
			return false
		}
	}
	return true
}

func (pl *player) toolCall(st Step) bool {
	idx := pl.toolCalls
	pl.toolCalls++
	id := st.ID
	if id == "" {
		id = fmt.Sprintf("call_%08x_%d_%d", pl.idSeed, pl.turn, idx)
	}
	if !pl.yield(provider.Chunk{Kind: provider.ChunkToolCall, ToolCall: provider.ToolCallDelta{Index: idx, ID: id, Name: st.Name}}, nil) {
		return false
	}
	pl.outRunes += utf8.RuneCountInString(st.Name)
	args := compactArgs(st.Args)
	for _, f := range split(args, orDefault(st.ChunkSize, defaultArgsChunk)) {
		if !pl.sleep(st.ChunkDelayMS) {
			return false
		}
		pl.outRunes += utf8.RuneCountInString(f)
		if !pl.yield(provider.Chunk{Kind: provider.ChunkToolCall, ToolCall: provider.ToolCallDelta{Index: idx, ArgsFragment: f}}, nil) {
			return false
		}
	}
	return true
}

// sleep pauses for ms milliseconds unless ctx ends first, in which case it
// reports ctx's error to the consumer.
func (pl *player) sleep(ms int) bool {
	if ms <= 0 {
		return true
	}
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-pl.ctx.Done():
		pl.yield(provider.Chunk{}, pl.ctx.Err())
		return false
	}
}

// compactArgs returns args as real providers send them: compact JSON, {}
// when absent. Invalid JSON is passed through untouched so tests can
// exercise how the agent copes with a model emitting broken arguments.
func compactArgs(args json.RawMessage) string {
	if len(bytes.TrimSpace(args)) == 0 {
		return "{}"
	}
	var b bytes.Buffer
	if err := json.Compact(&b, args); err != nil {
		return string(args)
	}
	return b.String()
}

// split cuts s into pieces of n runes (the last may be shorter).
func split(s string, n int) []string {
	var out []string
	for s != "" {
		i, count := 0, 0
		for i < len(s) && count < n {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
			count++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

func orDefault(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// Models lists the one model the demo provider offers.
func (p *Provider) Models(context.Context) ([]string, error) { return []string{"demo"}, nil }
