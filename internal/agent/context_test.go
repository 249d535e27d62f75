package agent_test

import (
	"context"
	"encoding/json"
	"iter"
	"strings"
	"sync"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/agent"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/tool"
	"github.com/caduceus-dev/caduceus/internal/transcript"
)

// summariser answers summary requests with "SUMMARY" and everything else
// with "done", reporting usage; it records requests.
type summariser struct {
	mu      sync.Mutex
	reqs    []provider.Request
	failSum bool
}

func (*summariser) Name() string { return "fake" }
func (*summariser) Demo() bool   { return false }
func (s *summariser) Stream(_ context.Context, req provider.Request) iter.Seq2[provider.Chunk, error] {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	return func(yield func(provider.Chunk, error) bool) {
		isSummary := strings.Contains(req.System, "compress a conversation")
		if isSummary && s.failSum {
			yield(provider.Chunk{}, &provider.Error{Provider: "fake", Code: "server_error", Message: "boom"})
			return
		}
		text := "done"
		if isSummary {
			text = "SUMMARY"
		}
		if !yield(provider.Chunk{Kind: provider.ChunkText, Text: text}, nil) {
			return
		}
		if !yield(provider.Chunk{Kind: provider.ChunkUsage, Usage: provider.Usage{InputTokens: 100, OutputTokens: 5}}, nil) {
			return
		}
		yield(provider.Chunk{Kind: provider.ChunkDone, StopReason: provider.StopEnd}, nil)
	}
}

// longHistory is a conversation of n exchanges, each with a tool call and
// a result of about size bytes.
func longHistory(n, size int) []provider.Message {
	var msgs []provider.Message
	for i := range n {
		id := "call_" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)
		msgs = append(msgs,
			provider.Message{Role: provider.RoleUser, Text: "question " + strings.Repeat("q", size/4)},
			provider.Message{Role: provider.RoleAssistant, Text: "looking", ToolCalls: []provider.ToolCall{{ID: id, Name: "read_file", Args: json.RawMessage(`{"path":"a"}`)}}},
			provider.Message{Role: provider.RoleTool, ToolResults: []provider.ToolResult{{ToolCallID: id, Content: strings.Repeat("r", size)}}},
			provider.Message{Role: provider.RoleAssistant, Text: "answer " + strings.Repeat("a", size/4)},
		)
	}
	return append(msgs, provider.Message{Role: provider.RoleUser, Text: "and now?"})
}

func TestAutoCompaction(t *testing.T) {
	p := &summariser{}
	h := &fakeHost{}
	msgs := longHistory(20, 2000) // ~15k tokens
	l := &agent.Loop{Provider: p, Tools: tool.NewRegistry(), Model: "m", Workspace: t.TempDir(), ContextWindow: 16_000}
	res, err := l.Run(context.Background(), h, msgs, nil)
	if err != nil || res.Err != nil {
		t.Fatalf("Run: %v %+v", err, res.Err)
	}
	warn := of[event.ContextWarningPayload](h, event.ContextWarning)
	if len(warn) != 1 || warn[0].ContextWindow != 16_000 || warn[0].Ratio < agent.WarnAt {
		t.Fatalf("warnings = %+v", warn)
	}
	cmp := of[event.ContextCompactedPayload](h, event.ContextCompacted)
	if len(cmp) != 1 {
		t.Fatalf("compactions = %+v", cmp)
	}
	c := cmp[0]
	if c.Reason != "auto" || c.Summary != "SUMMARY" || c.TokensSaved <= 0 || c.Covered <= 0 ||
		c.OriginalCount != len(msgs) || c.CompactedCount != c.PreservedCount+1 || c.Covered != len(msgs)-c.PreservedCount {
		t.Fatalf("compaction = %+v", c)
	}
	if h.index(isType(event.ContextWarning)) > h.index(isType(event.ContextCompacted)) {
		t.Error("warning after compaction")
	}
	reqs := p.reqs
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want summary + answer", len(reqs))
	}
	if len(reqs[0].Tools) != 0 || len(reqs[0].Messages) != 1 {
		t.Errorf("summary request carries tools or history: %+v", reqs[0])
	}
	sent := reqs[1].Messages
	if !strings.HasPrefix(sent[0].Text, transcript.SummaryPrefix) || !strings.HasSuffix(sent[0].Text, "SUMMARY") {
		t.Errorf("first message is not the summary: %.80q", sent[0].Text)
	}
	if sent[1].Role == provider.RoleTool {
		t.Error("a tool result was separated from its call")
	}
	if est := agent.EstimateTokens("", nil, sent); float64(est) > 0.5*16_000 {
		t.Errorf("after compaction the request is still %d tokens", est)
	}
	// The summary call's usage is part of the run's.
	if res.Usage.InputTokens != 200 {
		t.Errorf("usage = %+v, want both calls counted", res.Usage)
	}
}

func TestCompactionFailureDoesNotFailTheRun(t *testing.T) {
	p := &summariser{failSum: true}
	h := &fakeHost{}
	l := &agent.Loop{Provider: p, Tools: tool.NewRegistry(), Model: "m", Workspace: t.TempDir(), ContextWindow: 16_000}
	res, err := l.Run(context.Background(), h, longHistory(20, 2000), nil)
	if err != nil || res.Err != nil {
		t.Fatalf("Run: %v %+v", err, res.Err)
	}
	d := of[event.DiagnosticPayload](h, event.Diagnostic)
	if len(d) != 1 || d[0].Code != "compaction_failed" {
		t.Fatalf("diagnostics = %+v", d)
	}
}

func TestManualCompact(t *testing.T) {
	p := &summariser{}
	for _, tc := range []struct {
		name    string
		msgs    []provider.Message
		covered int
		want    event.Type
	}{
		{"long", longHistory(10, 2000), 0, event.ContextCompacted},
		{"short", []provider.Message{{Role: provider.RoleUser, Text: "hi"}}, 0, event.Diagnostic},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &fakeHost{}
			l := &agent.Loop{Provider: p, Tools: tool.NewRegistry(), Model: "m", ContextWindow: 200_000}
			res, err := l.Compact(context.Background(), h, tc.msgs, tc.covered)
			if err != nil || res.Err != nil {
				t.Fatalf("Compact: %v %+v", err, res.Err)
			}
			if ts := h.types(); len(ts) == 0 || ts[len(ts)-1] != tc.want {
				t.Fatalf("events %v, want last %s", ts, tc.want)
			}
		})
	}
}

// A second compaction covers the first summary's messages plus the ones
// it summarises now, counted in the rebuilt (uncompacted) conversation.
func TestCompactionCoveredAccumulates(t *testing.T) {
	p := &summariser{}
	h := &fakeHost{}
	raw := longHistory(10, 2000)
	const first = 12
	msgs := append([]provider.Message{transcript.SummaryMessage("old")}, raw[first:]...)
	l := &agent.Loop{Provider: p, Tools: tool.NewRegistry(), Model: "m", ContextWindow: 200_000}
	if _, err := l.Compact(context.Background(), h, msgs, first); err != nil {
		t.Fatal(err)
	}
	c := of[event.ContextCompactedPayload](h, event.ContextCompacted)[0]
	if c.Covered != first+(c.OriginalCount-1-c.PreservedCount) {
		t.Fatalf("covered = %d (%+v)", c.Covered, c)
	}
	if raw[c.Covered].Role == provider.RoleTool {
		t.Error("split inside a tool pair")
	}
}
