package mcp

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestNewServerToolsRulesAndRestart(t *testing.T) {
	p := startPeer(t)
	a, b := httpConfig(p), httpConfig(p)
	b.Name = "other"
	m, _ := newTestManager(t, a, b)
	ctx := t.Context()

	rule := func(server, tool string) string {
		switch tool {
		case "echo":
			return "allow"
		case "fail":
			return "deny"
		}
		return ""
	}
	tools, err := NewServerTools(ctx, m, []string{"peer"}, rule)
	if err != nil {
		t.Fatalf("NewServerTools: %v", err)
	}
	byName := toolsByName(t, tools)
	if _, ok := byName["mcp__other__echo"]; ok {
		t.Error("a server not asked for contributed tools")
	}
	if _, ok := byName["mcp__peer__fail"]; ok {
		t.Error("a denied tool is offered")
	}
	for name, want := range map[string]string{"mcp__peer__echo": "allow", "mcp__peer__image": ""} {
		tl, ok := byName[name]
		if !ok {
			t.Fatalf("%s missing from %v", name, byName)
		}
		if got := tl.Intent(json.RawMessage(`{}`)).Rule; got != want {
			t.Errorf("%s intent rule = %q, want %q", name, got, want)
		}
	}
	if _, err := NewServerTools(ctx, m, []string{"nope"}, nil); !errors.Is(err, ErrUnknownServer) {
		t.Errorf("unknown server: %v, want ErrUnknownServer", err)
	}

	// Restart forgets the connection: idle, then ready again on next use.
	if err := m.Restart("peer"); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	if st := stateOf(t, m, "peer"); st.State != StateIdle {
		t.Errorf("after Restart: %+v, want idle", st)
	}
	if _, err := m.Call(ctx, "peer", "echo", json.RawMessage(`{"text":"x"}`)); err != nil {
		t.Errorf("call after Restart: %v", err)
	}
	if st := stateOf(t, m, "peer"); st.State != StateReady {
		t.Errorf("after a call: %+v, want ready", st)
	}
	if err := m.Restart("nope"); !errors.Is(err, ErrUnknownServer) {
		t.Errorf("Restart of an unknown server: %v", err)
	}
}
