package mcp

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkCall measures one echo call through the Manager (lookup, state
// check, timeout, result conversion) against the same call on a bare SDK
// session to the same kind of server: the baseline is the protocol's own
// cost, the difference is what the manager adds.
func BenchmarkCall(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	args := json.RawMessage(`{"text":"hello"}`)
	stdio := ServerConfig{Name: "helper", Transport: TransportStdio, Command: exe, Env: []string{helperMode + "=serve"}}
	for _, tr := range []string{TransportStdio, TransportHTTP} {
		b.Run(tr+"/sdk", func(b *testing.B) {
			var transport sdk.Transport
			if tr == TransportStdio {
				cmd := exec.Command(exe)
				cmd.Env = append(os.Environ(), helperMode+"=serve")
				transport = &sdk.CommandTransport{Command: cmd}
			} else {
				p := startBenchPeer(b)
				transport = &sdk.StreamableClientTransport{Endpoint: p.url(), HTTPClient: &http.Client{Transport: headerTransport{
					headers: map[string]string{"Authorization": "Bearer " + testToken}, base: http.DefaultTransport}}}
			}
			client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
			sess, err := client.Connect(b.Context(), transport, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer sess.Close()
			b.ResetTimer()
			for b.Loop() {
				if _, err := sess.CallTool(b.Context(), &sdk.CallToolParams{Name: "echo", Arguments: args}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(tr+"/manager", func(b *testing.B) {
			cfg := stdio
			if tr == TransportHTTP {
				p := startBenchPeer(b)
				cfg = ServerConfig{Name: "peer", Transport: TransportHTTP, URL: p.url(), Headers: map[string]string{"Authorization": "Bearer " + testToken}}
			}
			m, err := NewManager(Options{}, []ServerConfig{cfg})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			if _, err := m.ListTools(b.Context(), cfg.Name); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := m.Call(b.Context(), cfg.Name, "echo", args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func startBenchPeer(b *testing.B) *peer {
	p := &peer{addr: "127.0.0.1:0", tb: b}
	p.start()
	b.Cleanup(p.stop)
	return p
}
