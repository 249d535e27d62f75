package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/transcript"
)

// Context thresholds as fractions of the model's context window.
const (
	WarnAt         = 0.80 // context.warning
	DefaultCompact = 0.85 // automatic compaction
	// keepShare is how much of the window the kept recent messages may
	// fill after a compaction, leaving room for the summary and the work
	// ahead.
	keepShare = 0.35
	// summaryMaxTokens bounds the summary the model writes.
	summaryMaxTokens = 2048
)

// ErrNothingToCompact is returned by Compact when the conversation is too
// short to summarise.
var ErrNothingToCompact = errors.New("nothing to compact: the conversation is already short")

// window tracks the conversation's size against the model's context
// window for one run.
type window struct {
	size   int64   // context window in tokens; 0 disables management
	calib  float64 // actual input tokens / estimate of the last call
	warned bool
}

// EstimateTokens estimates the tokens of a request without a tokenizer:
// about four bytes a token for English and code, plus a few tokens of
// framing per message. The loop corrects it with the input tokens the
// provider reports (see window.calibrate).
func EstimateTokens(system string, tools []provider.ToolSpec, msgs []provider.Message) int64 {
	n := bytesToTokens(len(system))
	for _, t := range tools {
		n += bytesToTokens(len(t.Name)+len(t.Description)+len(t.Parameters)) + 8
	}
	for _, m := range msgs {
		n += MessageTokens(m)
	}
	return n
}

// MessageTokens estimates one message.
func MessageTokens(m provider.Message) int64 {
	n := int64(4) + bytesToTokens(len(m.Text))
	for _, r := range m.Reasoning {
		n += bytesToTokens(len(r.Text) + len(r.Redacted)/2)
	}
	for _, c := range m.ToolCalls {
		n += 8 + bytesToTokens(len(c.Name)+len(c.Args))
	}
	for _, r := range m.ToolResults {
		n += 8 + bytesToTokens(len(r.Content))
	}
	// Providers bill an image by its pixels, not its bytes; about this
	// much for the sizes they scale images down to.
	n += int64(len(m.Images)) * imageTokens
	return n
}

// imageTokens is the estimate of one image input.
const imageTokens = 1600

func bytesToTokens(b int) int64 { return int64((b + 3) / 4) }

func (w *window) estimate(req provider.Request) int64 {
	est := EstimateTokens(req.System, req.Tools, req.Messages)
	if w.calib > 0 {
		return int64(float64(est) * w.calib)
	}
	return est
}

// calibrate learns the ratio between what the provider counted and what
// we estimated for the same request.
func (w *window) calibrate(req provider.Request, inputTokens int64) {
	est := EstimateTokens(req.System, req.Tools, req.Messages)
	if est <= 0 || inputTokens <= 0 {
		return
	}
	w.calib = min(max(float64(inputTokens)/float64(est), 0.5), 3)
}

// manageContext runs before each model call: it warns once per run at
// WarnAt and compacts past the loop's threshold. It returns the messages
// to send.
func (l *Loop) manageContext(ctx context.Context, h Host, w *window, msgs []provider.Message, covered *int, usage *event.UsageTotals) ([]provider.Message, error) {
	if w.size <= 0 {
		return msgs, nil
	}
	req := provider.Request{System: l.System, Tools: l.Tools.Specs(), Messages: msgs}
	est := w.estimate(req)
	ratio := float64(est) / float64(w.size)
	if ratio >= WarnAt && !w.warned {
		w.warned = true
		if err := h.Emit(event.ContextWarning, event.ContextWarningPayload{EstimatedTokens: est, ContextWindow: w.size,
			Ratio: round2(ratio), Threshold: WarnAt}); err != nil {
			return msgs, err
		}
	}
	threshold := l.CompactAt
	if threshold <= 0 {
		threshold = DefaultCompact
	}
	if ratio < threshold {
		return msgs, nil
	}
	out, err := l.compact(ctx, h, w, msgs, covered, "auto", usage)
	var he *hostError
	switch {
	case err == nil:
		w.warned = false // a later fill-up deserves a new warning
		return out, nil
	case errors.As(err, &he):
		return msgs, he.err
	case ctx.Err() != nil:
		return msgs, ctx.Err()
	default:
		// The model call may still fit; if not, the provider says so.
		w.size = 0 // do not try again on every turn of this run
		return msgs, h.Emit(event.Diagnostic, event.DiagnosticPayload{Level: "warning", Code: "compaction_failed",
			Message: "The context is nearly full and summarising older turns failed: " + err.Error()})
	}
}

// hostError wraps an error of the Host (the run lost its lease), which
// must stop the run, unlike a failure of the model asked to summarise.
type hostError struct{ err error }

func (e *hostError) Error() string { return e.err.Error() }
func (e *hostError) Unwrap() error { return e.err }

// Compact summarises the older part of msgs on request (a compact run).
// covered is how many messages of the rebuilt conversation the current
// summary (msgs[0]) stands for, 0 when there is none.
func (l *Loop) Compact(ctx context.Context, h Host, msgs []provider.Message, covered int) (Result, error) {
	var res Result
	w := &window{size: max(l.ContextWindow, 1)}
	_, err := l.compact(ctx, h, w, msgs, &covered, "manual", &res.Usage)
	var he *hostError
	switch {
	case errors.As(err, &he):
		return res, he.err
	case ctx.Err() != nil:
		return res, ctx.Err()
	case errors.Is(err, ErrNothingToCompact):
		return res, h.Emit(event.Diagnostic, event.DiagnosticPayload{Level: "info", Code: "nothing_to_compact", Message: err.Error()})
	case err != nil:
		res.Err = providerError(l.Provider.Name(), err)
	}
	return res, h.Flush(ctx)
}

// compact replaces the older messages with a summary written by the model,
// keeping the recent working set (about keepShare of the window) verbatim
// and never separating a tool call from its result.
func (l *Loop) compact(ctx context.Context, h Host, w *window, msgs []provider.Message, covered *int, reason string, usage *event.UsageTotals) ([]provider.Message, error) {
	hasSummary := *covered > 0 && len(msgs) > 0 && strings.HasPrefix(msgs[0].Text, transcript.SummaryPrefix)
	first := 0
	if hasSummary {
		first = 1
	}
	keep := int64(keepShare * float64(w.size))
	if reason == "manual" {
		// Asked for explicitly: compact even a conversation that fits,
		// keeping about the last quarter of it.
		keep = min(keep, EstimateTokens("", nil, msgs)/4)
	}
	split := splitPoint(msgs, first, keep)
	if split <= first {
		return msgs, ErrNothingToCompact
	}
	before := EstimateTokens(l.System, nil, msgs)
	summary, u, err := l.summarise(ctx, msgs[:split])
	*usage = usage.Add(u)
	if err != nil {
		return msgs, err
	}
	out := append([]provider.Message{transcript.SummaryMessage(summary)}, msgs[split:]...)
	after := EstimateTokens(l.System, nil, out)
	newCovered := *covered + split - first
	p := event.ContextCompactedPayload{Reason: reason, OriginalCount: len(msgs), CompactedCount: len(out),
		PreservedCount: len(msgs) - split, TokensBefore: before, TokensAfter: after, TokensSaved: before - after,
		Summary: summary, Covered: newCovered}
	if u != (event.UsageTotals{}) {
		if err := h.Emit(event.Usage, event.UsagePayload{TurnID: "compaction", Turn: u, Total: *usage}); err != nil {
			return msgs, &hostError{err}
		}
	}
	if err := h.Emit(event.ContextCompacted, p); err != nil {
		return msgs, &hostError{err}
	}
	// Durable before the next model call: a resumed run must rebuild the
	// same conversation.
	if err := h.Flush(ctx); err != nil {
		return msgs, &hostError{err}
	}
	*covered = newCovered
	return out, nil
}

// splitPoint picks the first message to keep: walking back from the end
// while the kept part fits keep, then stepping back over tool results so
// they stay with the call that asked for them. At least the last message
// is kept.
func splitPoint(msgs []provider.Message, first int, keep int64) int {
	split := len(msgs) - 1
	var kept int64 = MessageTokens(msgs[split])
	for split-1 > first {
		t := MessageTokens(msgs[split-1])
		if kept+t > keep {
			break
		}
		kept += t
		split--
	}
	for split > first && msgs[split].Role == provider.RoleTool {
		split-- // keep the assistant message whose calls these answer
	}
	return split
}

const summarisePrompt = `You compress a conversation between a user and a coding agent so the agent can continue the work with less context. Write a faithful summary in Markdown with these sections: Goal (what the user wants, in their words where it matters), Decisions and constraints, Work done (files read or changed with paths, commands run and their outcomes), Open questions, Next steps. Keep exact identifiers: file paths, function names, error messages, commands. Do not invent anything. Do not address the user.`

// maxSummaryInput bounds what is sent to be summarised (bytes); tool
// output beyond a few KiB per call adds little to a summary.
const (
	maxSummaryInput   = 400 << 10
	maxPerToolResult  = 4 << 10
	maxPerMessageText = 16 << 10
)

// summarise asks the model for a summary of msgs, rendered as plain text
// so the request carries no tool calls that would need their results.
func (l *Loop) summarise(ctx context.Context, msgs []provider.Message) (string, event.UsageTotals, error) {
	var b strings.Builder
	for _, m := range msgs {
		switch m.Role {
		case provider.RoleUser:
			fmt.Fprintf(&b, "## User\n%s\n\n", clip(m.Text, maxPerMessageText))
		case provider.RoleAssistant:
			b.WriteString("## Agent\n")
			if m.Text != "" {
				fmt.Fprintf(&b, "%s\n", clip(m.Text, maxPerMessageText))
			}
			for _, c := range m.ToolCalls {
				args, _ := json.Marshal(c.Args)
				fmt.Fprintf(&b, "- called %s %s (id %s)\n", c.Name, clip(string(args), 2000), c.ID)
			}
			b.WriteString("\n")
		case provider.RoleTool:
			for _, r := range m.ToolResults {
				status := "result"
				if r.IsError {
					status = "error"
				}
				fmt.Fprintf(&b, "## Tool %s for %s\n%s\n\n", status, r.ToolCallID, clip(r.Content, maxPerToolResult))
			}
		}
	}
	text := b.String()
	if len(text) > maxSummaryInput {
		// Keep the start (the goal) and the end (the latest state).
		text = clip(text, maxSummaryInput)
	}
	req := provider.Request{Model: l.Model, System: summarisePrompt, MaxTokens: summaryMaxTokens,
		Messages: []provider.Message{{Role: provider.RoleUser, Text: "Summarise this conversation:\n\n" + text}}}
	var out strings.Builder
	var u provider.Usage
	callCtx, endCall := l.observer().ModelCall(ctx, l.Provider.Name(), l.Model)
	for c, err := range l.Provider.Stream(callCtx, req) {
		if err != nil {
			endCall(ModelOutcome{Usage: l.usageOf(u), ErrCode: callErrCode(ctx, l.Provider.Name(), err)})
			return "", l.usageOf(u), err
		}
		switch c.Kind {
		case provider.ChunkText:
			out.WriteString(c.Text)
		case provider.ChunkUsage:
			u = c.Usage
		}
	}
	endCall(ModelOutcome{Usage: l.usageOf(u)})
	s := strings.TrimSpace(out.String())
	if s == "" {
		return "", l.usageOf(u), errors.New("the model returned an empty summary")
	}
	return s, l.usageOf(u), nil
}

func (l *Loop) usageOf(u provider.Usage) event.UsageTotals {
	t := event.UsageTotals{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CachedTokens: u.CachedTokens, ReasoningTokens: u.ReasoningTokens}
	if l.Cost != nil {
		if usd, ok := l.Cost(u.InputTokens, u.CachedTokens, u.OutputTokens); ok {
			t.CostUSD = usd
		}
	}
	return t
}

// clip keeps the head and tail of s within about n bytes, on rune
// boundaries.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head, tail := n/2, len(s)-n/2
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return s[:head] + "\n[… cut …]\n" + s[tail:]
}

func round2(f float64) float64 { return float64(int64(f*100+0.5)) / 100 }
