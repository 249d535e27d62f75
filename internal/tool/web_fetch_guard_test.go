package tool

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/netguard"
)

// hostsFile resolves names from a map, as a hostile DNS would.
type hostsFile map[string]string

func (h hostsFile) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := h[host]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// TestWebFetchRefusesNamesResolvingToPrivateAddresses: the policy's text
// check sees "rebind.test" as public; the guard resolves it to 127.0.0.1
// and refuses, directly and through a redirect from an approved host,
// unless the configuration allows it.
func TestWebFetchRefusesNamesResolvingToPrivateAddresses(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hop" {
			http.Redirect(w, r, "http://rebind.test:"+r.URL.Query().Get("port")+"/", http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "secret of "+r.Host)
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	dns := hostsFile{"rebind.test": "127.0.0.1"}

	tests := []struct {
		name  string
		allow []string
		url   string
		ok    bool
	}{
		{"name resolving to loopback", nil, "http://rebind.test:" + port + "/", false},
		{"redirect from the approved host to such a name", nil, srv.URL + "/hop?port=" + port, false},
		{"approved literal loopback", nil, srv.URL + "/", true},
		{"allowed by name", []string{"rebind.test"}, "http://rebind.test:" + port + "/", true},
		{"allowed by address, through a redirect", []string{"127.0.0.1"}, srv.URL + "/hop?port=" + port, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := netguard.New(netguard.Config{Allow: tc.allow, Resolver: dns})
			if err != nil {
				t.Fatal(err)
			}
			res := fetch(t, NewWebFetch(Config{Net: g}), tc.url, "")
			if tc.ok {
				if res.Status != event.ToolOK || !strings.Contains(res.Output, "secret of") {
					t.Fatalf("status %s: %s", res.Status, res.Output)
				}
				return
			}
			if res.Status != event.ToolError || !strings.Contains(res.Output, "fetch refused") || strings.Contains(res.Output, "secret of") {
				t.Fatalf("status %s: %s", res.Status, res.Output)
			}
		})
	}
}
