package e2etest

import (
	"encoding/json"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/provider/demo"
)

// Builders of demo scripts: what the offline demo model answers.

// Text is a text step.
func Text(s string) demo.Step { return demo.Step{Kind: demo.KindText, Text: s} }

// Reasoning is a reasoning step.
func Reasoning(s string) demo.Step { return demo.Step{Kind: demo.KindReasoning, Text: s} }

// Delay pauses the model for ms milliseconds.
func Delay(ms int) demo.Step { return demo.Step{Kind: demo.KindDelay, DelayMS: ms} }

// Call is a tool call with JSON arguments args.
func Call(name, args string) demo.Step {
	return demo.Step{Kind: demo.KindToolCall, Name: name, Args: json.RawMessage(args)}
}

// Turn is one model answer made of steps.
func Turn(steps ...demo.Step) demo.Turn { return demo.Turn{Steps: steps} }

// Script is a script of one scenario, whatever the user says.
func Script(turns ...demo.Turn) demo.Script {
	return demo.Script{Scenarios: []demo.Scenario{{Turns: turns}}}
}

// Scenario is a demo scenario chosen by a substring of the user's message.
func Scenario(match string, turns ...demo.Turn) demo.Scenario {
	return demo.Scenario{Match: match, Turns: turns}
}

// Scenarios is a script of several scenarios.
func Scenarios(sc ...demo.Scenario) demo.Script { return demo.Script{Scenarios: sc} }

// SlowText streams n fragments with a pause between them.
func SlowText(n, pauseMS int) demo.Step {
	return demo.Step{Kind: demo.KindText, Text: strings.Repeat("tok ", n), ChunkSize: 4, ChunkDelayMS: pauseMS}
}

// Paced is a text step streamed chunk runes at a time, pauseMS apart.
func Paced(s string, chunk, pauseMS int) demo.Step {
	return demo.Step{Kind: demo.KindText, Text: s, ChunkSize: chunk, ChunkDelayMS: pauseMS}
}
