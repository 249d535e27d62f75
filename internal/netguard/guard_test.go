package netguard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// mapResolver answers from a map, as a hostile or split DNS would.
type mapResolver map[string][]string

func (m mapResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	ss, ok := m[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out, nil
}

var dns = mapResolver{
	"public.test":  {"93.184.215.14"},
	"rebind.test":  {"127.0.0.1"},
	"mixed.test":   {"93.184.215.14", "10.1.2.3"},
	"v6local.test": {"::1"},
	"meta.test":    {"169.254.169.254"},
	"intra.corp":   {"10.0.0.7"},
	"a.intra.corp": {"10.0.0.8"},
	"bad.example":  {"93.184.215.15"},
}

func TestResolve(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		host    string
		blocked bool
	}{
		{"public name", Config{}, "public.test", false},
		{"name resolving to loopback", Config{}, "rebind.test", true},
		{"one private address among public ones", Config{}, "mixed.test", true},
		{"ipv6 loopback", Config{}, "v6local.test", true},
		{"cloud metadata", Config{}, "meta.test", true},
		{"literal loopback", Config{}, "127.0.0.1", true},
		{"legacy loopback spelling", Config{}, "2130706433", true},
		{"bracketed ipv6", Config{}, "[::1]", true},
		{"this network", Config{}, "0.0.0.0", true},
		{"cgnat", Config{}, "100.100.1.1", true},
		{"public literal", Config{}, "8.8.8.8", false},
		{"allowed by address", Config{Allow: []string{"127.0.0.1"}}, "rebind.test", false},
		{"allowed by network", Config{Allow: []string{"10.0.0.0/8"}}, "intra.corp", false},
		{"allowed by name covers subdomains", Config{Allow: []string{"intra.corp"}}, "a.intra.corp", false},
		{"allowing one name does not allow another", Config{Allow: []string{"intra.corp"}}, "rebind.test", true},
		{"allow private", Config{AllowPrivate: true}, "rebind.test", false},
		{"blocked name", Config{Block: []string{"*.example"}}, "bad.example", true},
		{"blocked network", Config{Block: []string{"93.184.215.0/24"}}, "public.test", true},
		{"block wins over allow", Config{Allow: []string{"bad.example"}, Block: []string{"bad.example"}}, "bad.example", true},
		{"block wins over allow private", Config{AllowPrivate: true, Block: []string{"127.0.0.0/8"}}, "rebind.test", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Resolver = dns
			g, err := New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			addrs, err := g.Resolve(context.Background(), tc.host)
			if tc.blocked {
				var be *BlockedError
				if !errors.As(err, &be) || !errors.Is(err, ErrBlocked) {
					t.Fatalf("Resolve(%s) = %v, %v; want a BlockedError", tc.host, addrs, err)
				}
				return
			}
			if err != nil || len(addrs) == 0 {
				t.Fatalf("Resolve(%s) = %v, %v; want addresses", tc.host, addrs, err)
			}
		})
	}
}

func TestResolveUnknownNameIsALookupError(t *testing.T) {
	g, _ := New(Config{Resolver: dns})
	_, err := g.Resolve(context.Background(), "nowhere.test")
	if err == nil || errors.Is(err, ErrBlocked) {
		t.Fatalf("err = %v, want a lookup error that is not a refusal", err)
	}
}

func TestNewRefusesBadEntries(t *testing.T) {
	for _, cfg := range []Config{{Allow: []string{"10.0.0.0/99"}}, {Block: []string{"http://x/"}}, {Allow: []string{"a b"}}} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) = nil error", cfg)
		}
	}
}

func TestPrivateName(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "api.localhost": true, "printer.local": true, "metadata.google.internal": true,
		"127.1": true, "0x7f.0.0.1": true, "10.0.0.1": true, "[fe80::1]": true, "example.com": false, "8.8.8.8": false,
		"rebind.test": false, // text alone cannot tell: Resolve can
	} {
		if got := PrivateName(host); got != want {
			t.Errorf("PrivateName(%q) = %v, want %v", host, got, want)
		}
	}
}

// TestDialDialsTheCheckedAddress: the guard dials the address it checked,
// so a second lookup cannot send the connection elsewhere.
func TestDialDialsTheCheckedAddress(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "inside") }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())

	refuse, _ := New(Config{Resolver: dns})
	if _, err := refuse.DialContext(context.Background(), "tcp", "rebind.test:"+port); !errors.Is(err, ErrBlocked) {
		t.Fatalf("dial rebind.test = %v, want refused", err)
	}
	allow, _ := New(Config{Resolver: dns, Allow: []string{"127.0.0.1"}})
	c := &http.Client{Transport: &http.Transport{DialContext: allow.DialContext}}
	resp, err := c.Get("http://rebind.test:" + port + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "inside" {
		t.Fatalf("body %q", b)
	}
}

// TestProxy drives the proxy as a browser would: a plain request, a
// CONNECT tunnel, and a redirect into a refused address.
func TestProxy(t *testing.T) {
	var target *httptest.Server
	target = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redirect":
			_, port, _ := net.SplitHostPort(target.Listener.Addr().String())
			http.Redirect(w, r, "http://rebind.test:"+port+"/", http.StatusFound)
		default:
			io.WriteString(w, "page "+r.Host)
		}
	}))
	defer target.Close()
	tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "secure") }))
	defer tls.Close()
	_, port, _ := net.SplitHostPort(target.Listener.Addr().String())
	_, tlsPort, _ := net.SplitHostPort(tls.Listener.Addr().String())

	// 127.0.0.1 itself is allowed (the test page), names that resolve to
	// it are not unless named: "allowed.test" is, "rebind.test" is not.
	res := mapResolver{"rebind.test": {"127.0.0.1"}, "allowed.test": {"127.0.0.1"}}
	g, err := New(Config{Resolver: res, Allow: []string{"allowed.test"}})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var refused []string
	p, err := NewProxy(g, func(host string, _ error) { mu.Lock(); refused = append(refused, host); mu.Unlock() }, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	purl, _ := url.Parse("http://" + p.Addr())
	tr := tls.Client().Transport.(*http.Transport).Clone()
	tr.Proxy = http.ProxyURL(purl)
	tr.TLSClientConfig.ServerName = "example.com" // the test certificate's name
	client := &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()

	get := func(u string) (int, string) {
		t.Helper()
		resp, err := client.Get(u)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("http://allowed.test:" + port + "/"); code != 200 || body != "page allowed.test:"+port {
		t.Errorf("allowed page: %d %q", code, body)
	}
	if code, body := get("http://rebind.test:" + port + "/"); code != http.StatusForbidden || !strings.Contains(body, "not allowed") {
		t.Errorf("rebind page: %d %q", code, body)
	}
	if code, body := get("http://allowed.test:" + port + "/redirect"); code != http.StatusForbidden {
		t.Errorf("redirect into rebind.test: %d %q", code, body)
	}
	if code, body := get("https://allowed.test:" + tlsPort + "/"); code != 200 || body != "secure" {
		t.Errorf("tunnel: %d %q", code, body)
	}
	if code, body := get("https://rebind.test:" + tlsPort + "/"); code == 200 {
		t.Errorf("tunnel to rebind.test: %d %q", code, body)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := fmt.Sprint(refused); got != "[rebind.test rebind.test rebind.test]" {
		t.Errorf("refused = %s", got)
	}
}
