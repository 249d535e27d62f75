package config

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestNetworkFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		check   func(Network) bool
		wantErr string
	}{
		{"defaults", nil, nil, func(n Network) bool {
			return n.Browser == BrowserOff && n.BrowserIdle == DefaultBrowserIdle && !n.BrowserSandbox && n.NetAllow == nil && n.NetBlock == nil
		}, ""},
		{"env lists", nil, map[string]string{"CADUCEUS_NET_ALLOW": "intra.corp, 10.0.0.0/8", "CADUCEUS_NET_BLOCK": "evil.example"}, func(n Network) bool {
			return slices.Equal(n.NetAllow, []string{"intra.corp", "10.0.0.0/8"}) && slices.Equal(n.NetBlock, []string{"evil.example"})
		}, ""},
		{"flags replace the environment's list", []string{"--net-allow", "a.test", "--net-allow", "b.test"}, map[string]string{"CADUCEUS_NET_ALLOW": "c.test"},
			func(n Network) bool { return slices.Equal(n.NetAllow, []string{"a.test", "b.test"}) }, ""},
		{"auto, idle, sandbox", []string{"--browser", "auto", "--browser-idle", "90s", "--browser-sandbox"}, nil, func(n Network) bool {
			return n.Browser == BrowserAuto && n.BrowserIdle == 90*time.Second && n.BrowserSandbox
		}, ""},
		{"missing binary", []string{"--browser", "/nonexistent/chromium"}, nil, nil, "not off, auto or a Chromium binary"},
		{"zero idle", []string{"--browser-idle", "0s"}, nil, nil, "browser-idle must be positive"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"CADUCEUS_DATA_DIR": t.TempDir()}
			for k, v := range tc.env {
				env[k] = v
			}
			c, err := ParseServe(append([]string{"--workspace", t.TempDir()}, tc.args...), func(k string) string { return env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(c.Network) {
				t.Fatalf("network config %+v", c.Network)
			}
		})
	}
}
