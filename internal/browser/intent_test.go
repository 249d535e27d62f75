package browser

import (
	"encoding/json"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/policy"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// TestIntents: only browser_open is judged by the approval policy, by its
// URL like web_fetch; the other tools act on the opened page.
func TestIntents(t *testing.T) {
	tools := map[string]tool.Tool{}
	for _, tl := range (&Manager{}).Tools() {
		tools[tl.Spec().Name] = tl
	}
	tests := []struct {
		tool, args string
		mode       policy.Mode
		want       policy.Verdict
		risk       string
	}{
		{NameOpen, `{"url":"https://example.com/"}`, policy.ModeSmart, policy.Allow, ""},
		{NameOpen, `{"url":"https://example.com/"}`, policy.ModeManual, policy.Ask, policy.RiskSideEffect},
		{NameOpen, `{"url":"http://localhost:8080/"}`, policy.ModeSmart, policy.Ask, policy.RiskNetworkPrivate},
		{NameOpen, `{"url":"http://169.254.169.254/"}`, policy.ModeSmart, policy.Ask, policy.RiskNetworkPrivate},
		{NameOpen, `{"url":"file:///etc/passwd"}`, policy.ModeManual, policy.Allow, ""}, // invalid: fails without effect
		{NameClick, `{"ref":"e1"}`, policy.ModeManual, policy.Allow, ""},
		{NameType, `{"selector":"#q","text":"x"}`, policy.ModeManual, policy.Allow, ""},
		{NameScreenshot, `{}`, policy.ModeManual, policy.Allow, ""},
	}
	for _, tc := range tests {
		t.Run(tc.tool+" "+tc.args+" "+string(tc.mode), func(t *testing.T) {
			it := tools[tc.tool].Intent(json.RawMessage(tc.args))
			d := policy.Decide(policy.Input{Mode: tc.mode, Tool: tc.tool, Intent: it, Workspace: "/w"})
			if d.Verdict != tc.want || d.Risk != tc.risk {
				t.Fatalf("decision %+v (intent %+v), want %v %q", d, it, tc.want, tc.risk)
			}
		})
	}
	if got := tools[NameOpen].Label(json.RawMessage(`{"url":"https://example.com/a"}`)); got != "browser open https://example.com/a" {
		t.Errorf("label %q", got)
	}
}
