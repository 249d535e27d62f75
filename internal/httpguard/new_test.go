package httpguard

import (
	"strings"
	"testing"
)

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string // substring; empty means success
	}{
		{"all interfaces without token", Config{Addr: "0.0.0.0:7420"}, "caduceus user add"},
		{"all interfaces with an account", Config{Addr: "0.0.0.0:7420", Accounts: true}, ""},
		{"lan address with an account", Config{Addr: "192.168.1.5:7420", Accounts: true}, ""},
		{"port only without token", Config{Addr: ":7420"}, "CADUCEUS_TOKEN"},
		{"empty address without token", Config{Addr: ""}, "CADUCEUS_TOKEN"},
		{"ipv6 any without token", Config{Addr: "[::]:7420"}, "CADUCEUS_TOKEN"},
		{"lan address without token", Config{Addr: "192.168.1.5:7420"}, "CADUCEUS_TOKEN"},
		{"hostname without token", Config{Addr: "box.lan:7420"}, "CADUCEUS_TOKEN"},
		{"all interfaces with token", Config{Addr: "0.0.0.0:7420", Token: testToken}, ""},
		{"loopback without token", Config{Addr: "127.0.0.1:7420"}, ""},
		{"localhost without token", Config{Addr: "localhost:7420"}, ""},
		{"ipv6 loopback without token", Config{Addr: "[::1]:7420"}, ""},
		{"loopback with token", Config{Addr: "127.0.0.1:7420", Token: testToken}, ""},
		{"token with a space", Config{Addr: "127.0.0.1:7420", Token: "two words"}, "printable ASCII"},
		{"token with a newline", Config{Addr: "0.0.0.0:7420", Token: "abc\n"}, "printable ASCII"},
		{"negative body limit", Config{Addr: "127.0.0.1:7420", MaxBodyBytes: -1}, "MaxBodyBytes"},
		{"wildcard origin", Config{Addr: "127.0.0.1:7420", AllowedOrigins: []string{"*"}}, "wildcard"},
		{"origin with a path", Config{Addr: "127.0.0.1:7420", AllowedOrigins: []string{"http://x.test/app"}}, "origin"},
		{"origin without scheme", Config{Addr: "127.0.0.1:7420", AllowedOrigins: []string{"localhost:5173"}}, "origin"},
		{"origin with trailing slash", Config{Addr: "127.0.0.1:7420", AllowedOrigins: []string{"http://localhost:5173/"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := New(tt.cfg)
			if tt.wantErr == "" {
				if err != nil || g == nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("New succeeded, want an error")
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q does not mention %q", err, tt.wantErr)
			}
			if tt.cfg.Token != "" && strings.Contains(err.Error(), tt.cfg.Token) {
				t.Errorf("error %q echoes the token", err)
			}
		})
	}
}

func TestIsLoopbackAddr(t *testing.T) {
	tests := []struct {
		addr string
		want bool
	}{
		{"127.0.0.1:7420", true},
		{"127.0.0.1", true},
		{"127.9.9.9:1", true},
		{"[::1]:7420", true},
		{"::1", true},
		{"[::1]", true},
		{"localhost:7420", true},
		{"LOCALHOST", true},
		{"", false},
		{":7420", false},
		{"0.0.0.0:7420", false},
		{"0.0.0.0", false},
		{"[::]:7420", false},
		{"10.0.0.1:7420", false},
		{"example.com:7420", false},
		{"localhost.example.com:7420", false},
		{"128.0.0.1:7420", false},
		{"[::1]:7420:1", false},
		{"garbage[", false},
	}
	for _, tt := range tests {
		if got := IsLoopbackAddr(tt.addr); got != tt.want {
			t.Errorf("IsLoopbackAddr(%q) = %v, want %v", tt.addr, got, tt.want)
		}
	}
}
