package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/event"
)

// renderer prints a run's events for a person: the answer as it streams,
// tool calls as "$ command" lines with their outcome, the questions a
// person must answer and how the run ended. It prints only what the
// server sent, which the server has already redacted.
type renderer struct {
	w     io.Writer
	color bool
	// midLine: the last thing written did not end a line (streamed text or
	// tool output), so a status line must start on a new one.
	midLine bool
}

const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiDim    = "\x1b[2m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiCyan   = "\x1b[36m"
)

func (r *renderer) paint(code, s string) string {
	if !r.color || code == "" {
		return s
	}
	return code + s + ansiReset
}

// text writes streamed text, remembering whether it ended a line.
func (r *renderer) text(s string) {
	if s == "" {
		return
	}
	fmt.Fprint(r.w, s)
	r.midLine = !strings.HasSuffix(s, "\n")
}

// line writes one whole line, on a line of its own.
func (r *renderer) line(code, s string) {
	r.endLine()
	fmt.Fprintln(r.w, r.paint(code, s))
}

func (r *renderer) endLine() {
	if r.midLine {
		fmt.Fprintln(r.w)
		r.midLine = false
	}
}

// render prints e; events a person does not need (deltas of reasoning,
// usage, checkpoints, ...) print nothing.
func (r *renderer) render(e event.Event) {
	switch e.Type {
	case event.MessageDelta:
		var p event.DeltaPayload
		if decode(e, &p) {
			r.text(p.Delta)
		}
	case event.MessageDone:
		var p event.DonePayload
		if decode(e, &p) && p.Partial {
			r.line(ansiDim, "[answer cut short]")
		}
		r.endLine()
	case event.ToolStarted:
		var p event.ToolStartedPayload
		if decode(e, &p) {
			r.line(ansiBold, toolLine(p))
		}
	case event.ToolUpdated:
		var p event.ToolUpdatedPayload
		if decode(e, &p) && p.Output != "" {
			r.text(p.Output)
		}
	case event.ToolDone:
		var p event.ToolDonePayload
		if decode(e, &p) {
			r.toolDone(p)
		}
	case event.ApprovalRequested:
		var p event.ApprovalRequestedPayload
		if decode(e, &p) {
			r.line(ansiYellow, "? approval needed: "+oneLine(p.Action))
			if p.Reason != "" {
				r.line("", "  reason: "+p.Reason)
			}
			r.line(ansiDim, "  request: "+p.RequestID)
		}
	case event.ApprovalResolved, event.ClarifyResolved:
		var p event.ResolvedPayload
		if decode(e, &p) {
			r.line(ansiDim, "  "+resolution(e.Type, p))
		}
	case event.ClarifyRequested:
		var p event.ClarifyRequestedPayload
		if decode(e, &p) {
			r.line(ansiYellow, "? question: "+p.Question)
			if len(p.Choices) > 0 {
				r.line("", "  choices: "+strings.Join(p.Choices, " | "))
			}
			r.line(ansiDim, "  request: "+p.RequestID)
		}
	case event.RunStatus:
		var p event.RunStatusPayload
		if decode(e, &p) {
			switch p.Status {
			case "recovering", "interrupted", "paused", "cancelling":
				r.line(ansiYellow, "["+bracket("run "+p.Status, p.Reason)+"]")
			}
		}
	case event.RunDone:
		var p event.RunDonePayload
		if decode(e, &p) {
			r.runDone(p)
		}
	case event.ContextCompacted:
		r.line(ansiDim, "[older turns were summarised to fit the context]")
	case event.Resync:
		r.line(ansiYellow, "[the stream restarted from the beginning]")
	}
}

func toolLine(p event.ToolStartedPayload) string {
	label := oneLine(p.Label)
	if label == "" {
		label = p.Name
	}
	if strings.HasPrefix(label, "$ ") {
		return label
	}
	return "> " + label
}

func (r *renderer) toolDone(p event.ToolDonePayload) {
	if p.Status == event.ToolOK {
		r.line(ansiGreen, fmt.Sprintf("  ok (%d ms)", p.DurationMS))
		return
	}
	msg := p.Error
	if msg == "" {
		msg = firstLine(p.Output)
	}
	r.line(ansiRed, bracket("  "+p.Status, msg))
}

func (r *renderer) runDone(p event.RunDonePayload) {
	switch p.Status {
	case "completed":
		r.line(ansiGreen, "[run completed]")
	case "failed":
		msg := ""
		if p.Error != nil {
			msg = p.Error.Code + ": " + p.Error.Message
		}
		r.line(ansiRed, bracket("[run failed", msg)+"]")
	default:
		r.line(ansiYellow, "[run "+p.Status+"]")
	}
}

func resolution(t event.Type, p event.ResolvedPayload) string {
	what := "approval"
	if t == event.ClarifyResolved {
		what = "question"
	}
	switch {
	case p.Status != "resolved":
		return what + " " + p.Status
	case t == event.ClarifyResolved:
		return "answered: " + oneLine(p.Answer)
	case p.Choice == "deny":
		if p.Note != "" {
			return "denied: " + oneLine(p.Note)
		}
		return "denied"
	default:
		return "approved (" + p.Choice + ")"
	}
}

// bracket joins a status and its optional detail: "run paused: budget".
func bracket(status, detail string) string {
	if detail == "" {
		return status
	}
	return status + ": " + detail
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// decode reads e's payload; a payload this client cannot read is skipped
// rather than stopping the stream (payloads are additive).
func decode(e event.Event, into any) bool {
	return json.Unmarshal(e.Payload, into) == nil
}
