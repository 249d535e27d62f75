package transcript

import (
	"fmt"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider"
)

// InterruptedResult is what the model is told about a tool call that started
// but never finished (its worker stopped): it was not re-run.
const InterruptedResult = "interrupted: this tool call did not finish because the worker executing it stopped; it was not re-run, so its effects are unknown"

// History rebuilds model history from transcript items. Every assistant turn
// becomes one assistant message (reasoning, text, tool calls) followed by
// one tool message with a result for every call, so the history is valid
// for every provider. When the final turn has unfinished calls, all of its
// calls are returned as pending instead (finished ones with their Result)
// for a resuming run to settle; unfinished calls of earlier turns get
// InterruptedResult. A call that had begun executing is reported, never
// silently run twice.
//
// After a compaction, the messages it covered are replaced by one user
// message carrying its summary (see SummaryMessage).
func History(items []Item) (msgs []provider.Message, pending []Pending) {
	var compaction *Item
	type turn struct {
		id    string
		msg   provider.Message
		calls []*Tool
	}
	var cur *turn
	flush := func(last bool) {
		if cur == nil {
			return
		}
		msgs = append(msgs, cur.msg)
		if len(cur.calls) > 0 {
			open := false
			for _, t := range cur.calls {
				open = open || !t.Done()
			}
			res := provider.Message{Role: provider.RoleTool}
			for _, t := range cur.calls {
				var r *provider.ToolResult
				switch {
				case t.Done():
					r = &provider.ToolResult{ToolCallID: t.ToolCallID, Content: ResultText(t), IsError: t.Status != event.ToolOK}
				case !last:
					r = &provider.ToolResult{ToolCallID: t.ToolCallID, Content: InterruptedResult, IsError: true}
				}
				if last && open {
					pending = append(pending, Pending{
						Call:      provider.ToolCall{ID: t.ToolCallID, Name: t.Name, Args: t.Args},
						Executing: t.Status == ToolRunning,
						Result:    r,
					})
					continue
				}
				res.ToolResults = append(res.ToolResults, *r)
			}
			if len(res.ToolResults) > 0 {
				msgs = append(msgs, res)
			}
		}
		cur = nil
	}
	for i := range items {
		it := &items[i]
		switch it.Kind {
		case KindUser:
			if it.Pending {
				continue // not delivered: the model reads it at a step boundary
			}
			flush(false)
			msgs = append(msgs, UserMessage(it.Text, it.Attachments))
			continue
		case KindRunEnd, KindNotice:
			continue
		case KindCompaction:
			// Compactions happen between turns, so nothing is open here.
			flush(false)
			compaction = it
			continue
		}
		if cur != nil && it.TurnID != "" && cur.msg.Role == provider.RoleAssistant && cur.id != "" && cur.id != it.TurnID {
			flush(false)
		}
		if cur == nil {
			cur = &turn{msg: provider.Message{Role: provider.RoleAssistant}}
		}
		if cur.id == "" {
			cur.id = it.TurnID
		}
		switch it.Kind {
		case KindReasoning:
			cur.msg.Reasoning = append(cur.msg.Reasoning, provider.Reasoning{Text: it.Text, Signature: it.Signature, Redacted: it.Redacted})
		case KindAssistant:
			cur.msg.Text += it.Text
		case KindTool:
			cur.msg.ToolCalls = append(cur.msg.ToolCalls, provider.ToolCall{ID: it.Tool.ToolCallID, Name: it.Tool.Name, Args: it.Tool.Args})
			cur.calls = append(cur.calls, it.Tool)
		}
	}
	flush(true)
	if c := compaction; c != nil && c.Compaction != nil && c.Compaction.Covered > 0 && c.Compaction.Covered <= len(msgs) {
		msgs = append([]provider.Message{SummaryMessage(c.Text)}, msgs[c.Compaction.Covered:]...)
	}
	return msgs, pending
}

// SummaryPrefix starts the message that stands for compacted history.
const SummaryPrefix = "[Summary of the earlier conversation, written when the context window filled up. The full history is in the journal.]\n\n"

// SummaryMessage is the message that replaces compacted history.
func SummaryMessage(summary string) provider.Message {
	return provider.Message{Role: provider.RoleUser, Text: SummaryPrefix + summary}
}

// Covered returns how many messages of the rebuilt conversation the latest
// compaction replaced (0 when there was none).
func Covered(items []Item) int {
	for i := len(items) - 1; i >= 0; i-- {
		if items[i].Kind == KindCompaction && items[i].Compaction != nil {
			return items[i].Compaction.Covered
		}
	}
	return 0
}

// Pending is an unfinished tool call of the final turn. Executing calls
// had begun running when their worker stopped.
type Pending struct {
	Call      provider.ToolCall
	Executing bool
	Result    *provider.ToolResult // set when this call already finished
}

// ResultText is what the model reads for a finished tool call.
func ResultText(t *Tool) string {
	switch {
	case t.Output != "":
		return t.Output
	case t.Error != "":
		return t.Status + ": " + t.Error
	default:
		return t.Status
	}
}

// UserMessage is a person's message as the model sees it. Every
// attachment is named at the end of the text, so the agent can read it
// with its tools; images also travel as image input (their bytes are
// loaded when the request is built, see provider.Image).
func UserMessage(text string, atts []event.Attachment) provider.Message {
	m := provider.Message{Role: provider.RoleUser, Text: text}
	if len(atts) == 0 {
		return m
	}
	var b strings.Builder
	b.WriteString(text)
	for i, a := range atts {
		if i == 0 && strings.TrimSpace(text) != "" {
			b.WriteString("\n\n")
		} else if i > 0 {
			b.WriteString("\n")
		}
		label := "Attached"
		if a.Kind == event.AttachImage {
			label = "Attached image"
			m.Images = append(m.Images, provider.Image{Path: a.Path, MIME: a.MIME, Size: a.Size, SHA256: a.SHA256})
		}
		fmt.Fprintf(&b, "%s: %s (%s, %d bytes)", label, a.Path, a.MIME, a.Size)
	}
	m.Text = b.String()
	return m
}
