package agent_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/checkpoint"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// ckpRecorder is a Checkpointer that records what it was asked, or fails.
type ckpRecorder struct {
	metas []checkpoint.Meta
	fail  error
}

func (r *ckpRecorder) Checkpoint(_ context.Context, _ string, m checkpoint.Meta) (event.CheckpointCreatedPayload, error) {
	if r.fail != nil {
		return event.CheckpointCreatedPayload{}, r.fail
	}
	r.metas = append(r.metas, m)
	return event.CheckpointCreatedPayload{CheckpointID: "ckp_x", ToolCallID: m.ToolCallID, Files: []string{}}, nil
}

// Every call that may change the workspace (writes, edits, every command)
// is checkpointed before it runs, reads are not; a checkpoint that fails
// refuses the call with a tool error and the file stays as it was.
func TestCheckpointBeforeChanges(t *testing.T) {
	tests := []struct {
		name       string
		tool, args string
		fail       bool
		want       bool   // a checkpoint is taken
		status     string // of the call
	}{
		{"write", tool.NameWriteFile, `{"path":"a.txt","content":"new"}`, false, true, event.ToolOK},
		{"edit", tool.NameEditFile, `{"path":"hello.txt","old_string":"hello","new_string":"bye"}`, false, true, event.ToolOK},
		{"a harmless-looking command", tool.NameRunCommand, `{"command":"echo hi"}`, false, true, event.ToolOK},
		{"read", tool.NameReadFile, `{"path":"hello.txt"}`, false, false, event.ToolOK},
		{"arguments that do not parse", tool.NameWriteFile, `{"path":1}`, false, false, event.ToolError},
		{"failed checkpoint refuses a write", tool.NameWriteFile, `{"path":"a.txt","content":"new"}`, true, false, event.ToolError},
		{"failed checkpoint refuses a command", tool.NameRunCommand, `{"command":"echo x > a.txt"}`, true, false, event.ToolError},
		{"failed checkpoint does not stop a read", tool.NameReadFile, `{"path":"hello.txt"}`, true, false, event.ToolOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, turns(
				[]demo.Step{callTool("call_c", tt.tool, tt.args)},
				[]demo.Step{say("ok")},
			))
			if err := os.WriteFile(filepath.Join(f.ws, "a.txt"), []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			rec := &ckpRecorder{}
			if tt.fail {
				rec.fail = errors.New("disk full")
			}
			f.loop.Checkpoints = rec
			f.loop.Mode = "off"
			h := &fakeHost{choice: "once"}
			if res := run(t, f, h); res.Err != nil {
				t.Fatalf("Err = %+v", res.Err)
			}
			created := of[event.CheckpointCreatedPayload](h, event.CheckpointCreated)
			if got := len(created) == 1 && len(rec.metas) == 1; got != tt.want {
				t.Fatalf("checkpoint taken = %v (%+v), want %v", got, rec.metas, tt.want)
			}
			if tt.want && (rec.metas[0].ToolCallID != "call_c" || rec.metas[0].Reason != "before "+tt.tool || created[0].ToolCallID != "call_c") {
				t.Errorf("meta = %+v, event = %+v", rec.metas[0], created[0])
			}
			done := of[event.ToolDonePayload](h, event.ToolDone)
			if len(done) != 1 || done[0].Status != tt.status {
				t.Fatalf("tool.done = %+v, want status %s", done, tt.status)
			}
			if tt.fail && tt.status == event.ToolError {
				if !strings.Contains(done[0].Output, "could not be checkpointed") || !strings.Contains(done[0].Output, "disk full") {
					t.Errorf("refusal says %q", done[0].Output)
				}
				if b, _ := os.ReadFile(filepath.Join(f.ws, "a.txt")); string(b) != "old" {
					t.Errorf("refused call changed a.txt to %q", b)
				}
			}
		})
	}
}
