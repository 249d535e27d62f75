package demo

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/policy"
	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// undelayed strips pauses so content tests of the default script run fast;
// TestDefaultStreamsVisibly checks the pauses separately.
func undelayed(s Script) Script {
	for i := range s.Scenarios {
		for j := range s.Scenarios[i].Turns {
			for k := range s.Scenarios[i].Turns[j].Steps {
				st := &s.Scenarios[i].Turns[j].Steps[k]
				st.ChunkDelayMS, st.DelayMS = 0, 0
			}
		}
	}
	return s
}

func TestDefaultPlainAnswer(t *testing.T) {
	p := New(undelayed(Default()))
	for _, msg := range []string{"hello", "What can you do?", ""} {
		t.Run(msg, func(t *testing.T) {
			r := collect(t, context.Background(), p, req(user(msg)))
			if r.Err != nil || r.Stop != provider.StopEnd || len(r.Calls) != 0 {
				t.Fatalf("err %v stop %q calls %v", r.Err, r.Stop, r.Calls)
			}
			if r.Chunks[0].Kind != provider.ChunkReasoning || r.Reasoning == "" {
				t.Fatalf("want reasoning first, got %+v", r.Chunks[0])
			}
			for _, want := range []string{"offline demo model", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY",
				"OLLAMA_HOST", "config.json"} {
				if !strings.Contains(r.Text, want) {
					t.Fatalf("answer does not mention %q:\n%s", want, r.Text)
				}
			}
			if len(r.TextFrags) < 10 {
				t.Fatalf("answer in %d fragments; want visible streaming", len(r.TextFrags))
			}
		})
	}
}

func TestDefaultToolBranches(t *testing.T) {
	tests := []struct {
		msg      string
		tool     string
		args     string
		followUp string // a substring of the reply after the tool result
	}{
		{"Show me the FILES please", "list_dir", `{"path":"."}`, "files"},
		{"run something", "run_command", runArgs(), "approval mode"},
		{"which command would you use?", "run_command", runArgs(), "approval mode"},
		{"ask me", "clarify", `{"question":"Which do you prefer?","choices":["Option A","Option B"]}`, "answer"},
		{"a question for you", "clarify", `{"question":"Which do you prefer?","choices":["Option A","Option B"]}`, "answer"},
	}
	p := New(undelayed(Default()))
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.msg, func(t *testing.T) {
			r0 := collect(t, ctx, p, req(user(tt.msg)))
			if r0.Err != nil || r0.Stop != provider.StopToolUse || len(r0.Calls) != 1 {
				t.Fatalf("turn 0: err %v stop %q calls %+v", r0.Err, r0.Stop, r0.Calls)
			}
			c := r0.Calls[0]
			if c.Name != tt.tool || c.Args != tt.args {
				t.Fatalf("call %s %s, want %s %s", c.Name, c.Args, tt.tool, tt.args)
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(c.Args), &v); err != nil {
				t.Fatalf("args do not parse: %v", err)
			}

			history := []provider.Message{
				user(tt.msg),
				{Role: provider.RoleAssistant, Text: r0.Text, ToolCalls: []provider.ToolCall{{ID: c.ID, Name: c.Name, Args: json.RawMessage(c.Args)}}},
				{Role: provider.RoleTool, ToolResults: []provider.ToolResult{{ToolCallID: c.ID, Content: "Option B"}}},
			}
			r1 := collect(t, ctx, p, req(history...))
			if r1.Err != nil || r1.Stop != provider.StopEnd || len(r1.Calls) != 0 {
				t.Fatalf("turn 1: err %v stop %q calls %+v", r1.Err, r1.Stop, r1.Calls)
			}
			if !strings.Contains(r1.Text, tt.followUp) || !strings.Contains(r1.Text, "demo model") {
				t.Fatalf("turn 1 reply does not mention %q and the demo:\n%s", tt.followUp, r1.Text)
			}

			history = append(history, assistant(r1.Text))
			r2 := collect(t, ctx, p, req(history...))
			if r2.Text != EndOfScript || r2.Stop != provider.StopEnd {
				t.Fatalf("turn 2: %q %q", r2.Text, r2.Stop)
			}
		})
	}
}

// TestDefaultStreamsVisibly keeps the shipped script paced: without pauses
// the UI would show the whole answer at once and hide the streaming.
func TestDefaultStreamsVisibly(t *testing.T) {
	s := Default()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	for i, sc := range s.Scenarios {
		for j, turn := range sc.Turns {
			for k, st := range turn.Steps {
				if st.Kind != KindDelay && st.Kind != KindUsage && (st.ChunkDelayMS <= 0 || st.ChunkDelayMS > 50) {
					t.Errorf("scenario %d turn %d step %d: chunk_delay_ms %d, want a small pause", i, j, k, st.ChunkDelayMS)
				}
			}
		}
	}
	// Default returns a fresh value each time, so one caller's edits cannot
	// leak into another's.
	a := Default()
	a.Scenarios[0].Turns[0].Steps[0].Text = "edited"
	if Default().Scenarios[0].Turns[0].Steps[0].Text == "edited" {
		t.Fatal("Default shares state between calls")
	}
}

// The approval scenario exists to show an approval: on default settings
// (smart mode) the policy must ask about its command, and no stricter
// verdict may stop it from running once approved.
func TestDefaultRunAsksOnDefaults(t *testing.T) {
	var args struct{ Command string }
	if err := json.Unmarshal([]byte(runArgs()), &args); err != nil || args.Command != RunCommand {
		t.Fatalf("args %s: %v", runArgs(), err)
	}
	in := tool.Intent{Effect: tool.EffectExec, Command: RunCommand, Action: "$ " + RunCommand}
	for _, mode := range []policy.Mode{"", policy.ModeSmart, policy.ModeManual, policy.ModeOff} {
		d := policy.Decide(policy.Input{Mode: mode, Tool: "run_command", Intent: in, Workspace: t.TempDir()})
		if d.Verdict != policy.Ask {
			t.Errorf("mode %q: %+v, want ask", mode, d)
		}
	}
	// Every scenario that calls run_command uses it.
	for _, sc := range Default().Scenarios {
		for _, turn := range sc.Turns {
			for _, st := range turn.Steps {
				if st.Kind == KindToolCall && st.Name == "run_command" && string(st.Args) != runArgs() {
					t.Errorf("scenario %q runs %s", sc.Match, st.Args)
				}
			}
		}
	}
}
