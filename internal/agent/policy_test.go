package agent_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/policy"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// The loop asks, runs or refuses each call as the policy decides, and tells
// the host whether a remembered rule may answer.
func TestLoopFollowsApprovalPolicy(t *testing.T) {
	tests := []struct {
		name         string
		mode         policy.Mode
		tool, args   string
		wantAsk      bool
		rememberable bool
		wantStatus   string
	}{
		{"smart runs a plain command", policy.ModeSmart, tool.NameRunCommand, `{"command":"echo hi"}`, false, false, event.ToolOK},
		{"smart asks for a recursive delete", policy.ModeSmart, tool.NameRunCommand, `{"command":"rm -rf build"}`, true, false, event.ToolOK},
		{"off still asks for a force push", policy.ModeOff, tool.NameRunCommand, `{"command":"git push --force origin main"}`, true, false, event.ToolError}, // no repository here
		{"manual asks for a plain command", policy.ModeManual, tool.NameRunCommand, `{"command":"echo hi"}`, true, true, event.ToolOK},
		{"manual asks for a write", policy.ModeManual, tool.NameWriteFile, `{"path":"a.txt","content":"x"}`, true, true, event.ToolOK},
		{"smart writes in the workspace", policy.ModeSmart, tool.NameWriteFile, `{"path":"a.txt","content":"x"}`, false, false, event.ToolOK},
		{"off refuses rm -rf / without asking", policy.ModeOff, tool.NameRunCommand, `{"command":"rm -rf /"}`, false, false, event.ToolDenied},
		{"writes outside the workspace are refused", policy.ModeOff, tool.NameWriteFile, `{"path":"/etc/x","content":"x"}`, false, false, event.ToolDenied},
		{"smart asks before fetching from loopback", policy.ModeSmart, tool.NameWebFetch, `{"url":"http://127.0.0.1:1/"}`, true, true, event.ToolError},
		{"reads never ask, even in manual", policy.ModeManual, tool.NameReadFile, `{"path":"hello.txt"}`, false, false, event.ToolOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, turns(
				[]demo.Step{callTool("call_p", tt.tool, tt.args)},
				[]demo.Step{say("ok")},
			))
			if err := os.MkdirAll(filepath.Join(f.ws, "build"), 0o755); err != nil {
				t.Fatal(err)
			}
			f.loop.Mode = tt.mode
			h := &fakeHost{choice: "once"}
			if res := run(t, f, h); res.Err != nil {
				t.Fatalf("Err = %+v", res.Err)
			}
			if asked := len(h.approvals) == 1; asked != tt.wantAsk {
				t.Fatalf("asked = %v (%+v), want %v", asked, h.approvals, tt.wantAsk)
			}
			if tt.wantAsk {
				a := h.approvals[0]
				if a.Rememberable != tt.rememberable || a.Reason == "" || a.Pattern == "" {
					t.Errorf("ask = %+v", a)
				}
			}
			done := of[event.ToolDonePayload](h, event.ToolDone)
			if len(done) != 1 || done[0].Status != tt.wantStatus {
				t.Fatalf("tool.done = %+v, want status %s", done, tt.wantStatus)
			}
		})
	}
}
