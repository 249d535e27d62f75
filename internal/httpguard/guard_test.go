package httpguard

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

func TestHostCheck(t *testing.T) {
	loop := mustGuard(t, Config{Addr: "127.0.0.1:7420"})
	open := mustGuard(t, Config{Addr: "0.0.0.0:7420", Token: testToken})
	bearer := hdr("Authorization", "Bearer "+testToken)

	tests := []struct {
		name   string
		g      *Guard
		req    request
		status int
	}{
		{"localhost with port", loop, request{host: "localhost:7420"}, 200},
		{"localhost without port", loop, request{host: "localhost"}, 200},
		{"localhost upper case", loop, request{host: "LocalHost:7420"}, 200},
		{"localhost fqdn", loop, request{host: "localhost.:7420"}, 200},
		{"127.0.0.1", loop, request{host: "127.0.0.1:7420"}, 200},
		{"127.0.0.0/8", loop, request{host: "127.4.5.6"}, 200},
		{"ipv6 loopback", loop, request{host: "[::1]:7420"}, 200},
		{"ipv6 loopback without port", loop, request{host: "[::1]"}, 200},
		{"subdomain of localhost", loop, request{host: "foo.localhost"}, 200},
		{"subdomain of localhost with port", loop, request{host: "ui.foo.localhost:7420"}, 200},
		{"foreign name", loop, request{host: "evil.com"}, 403},
		{"rebinding name with port", loop, request{host: "rebind.attacker.example:7420"}, 403},
		{"localhost as a label of a foreign name", loop, request{host: "localhost.evil.com:7420"}, 403},
		{"localhost as a suffix without dot", loop, request{host: "evillocalhost:7420"}, 403},
		{"bare .localhost", loop, request{host: ".localhost"}, 403},
		{"ip-looking foreign name", loop, request{host: "127.0.0.1.evil.com"}, 403},
		{"unspecified address", loop, request{host: "0.0.0.0:7420"}, 403},
		{"lan address", loop, request{host: "192.168.1.10:7420"}, 403},
		{"ipv6 unspecified", loop, request{host: "[::]:7420"}, 403},
		{"health is not exempt from the host check", loop, request{target: "/api/health", host: "evil.com"}, 403},
		{"non-loopback bind skips the host check", open, request{host: "evil.com", header: bearer}, 200},
		{"non-loopback bind serves its lan name", open, request{host: "box.lan:7420", header: bearer}, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code := ""
			if tt.status == 403 {
				code = CodeForbiddenHost
			}
			checkStatus(t, serve(tt.g, okHandler(), tt.req.build()), tt.status, code)
		})
	}

	t.Run("missing host header", func(t *testing.T) {
		r := request{}.build()
		r.Host = ""
		checkStatus(t, serve(loop, okHandler(), r), 403, CodeForbiddenHost)
	})
}

func TestOriginCheck(t *testing.T) {
	loop := mustGuard(t, Config{Addr: "127.0.0.1:7420", AllowedOrigins: []string{"http://localhost:5173"}})
	open := mustGuard(t, Config{Addr: "0.0.0.0:7420", Token: testToken})

	tests := []struct {
		name   string
		g      *Guard
		method string
		host   string
		header http.Header
		status int
	}{
		{"same-origin POST", loop, "POST", "localhost:7420", hdr("Origin", "http://localhost:7420"), 200},
		{"same-origin POST by IP", loop, "POST", "127.0.0.1:7420", hdr("Origin", "http://127.0.0.1:7420"), 200},
		{"same-origin POST over IPv6", loop, "POST", "[::1]:7420", hdr("Origin", "http://[::1]:7420"), 200},
		{"same-origin POST on default port", loop, "POST", "localhost", hdr("Origin", "http://localhost"), 200},
		{"same-origin POST, explicit default port in Host", loop, "POST", "localhost:80", hdr("Origin", "http://localhost"), 200},
		{"same-origin POST, case differs", loop, "POST", "LOCALHOST:7420", hdr("Origin", "http://localhost:7420"), 200},
		{"foreign-origin POST", loop, "POST", "localhost:7420", hdr("Origin", "https://evil.com"), 403},
		{"foreign-origin PUT", loop, "PUT", "localhost:7420", hdr("Origin", "https://evil.com"), 403},
		{"foreign-origin PATCH", loop, "PATCH", "localhost:7420", hdr("Origin", "https://evil.com"), 403},
		{"foreign-origin DELETE", loop, "DELETE", "localhost:7420", hdr("Origin", "https://evil.com"), 403},
		{"foreign-origin unusual method", loop, "post", "localhost:7420", hdr("Origin", "https://evil.com"), 403},
		{"other local port is another origin", loop, "POST", "localhost:7420", hdr("Origin", "http://localhost:3000"), 403},
		{"other loopback name is another origin", loop, "POST", "localhost:7420", hdr("Origin", "http://127.0.0.1:7420"), 403},
		{"null origin", loop, "POST", "localhost:7420", hdr("Origin", "null"), 403},
		{"empty origin", loop, "POST", "localhost:7420", hdr("Origin", ""), 403},
		{"origin with a path", loop, "POST", "localhost:7420", hdr("Origin", "http://localhost:7420/x"), 403},
		{"origin with credentials", loop, "POST", "localhost:7420", hdr("Origin", "http://a@localhost:7420"), 403},
		{"two origins", loop, "POST", "localhost:7420", hdr("Origin", "http://localhost:7420", "Origin", "https://evil.com"), 403},
		{"allowed origin", loop, "POST", "localhost:7420", hdr("Origin", "http://localhost:5173"), 200},
		{"allowed origin, different case", loop, "POST", "localhost:7420", hdr("Origin", "HTTP://LocalHost:5173"), 200},
		{"allowed origin, other scheme", loop, "POST", "localhost:7420", hdr("Origin", "https://localhost:5173"), 403},
		{"no origin (curl)", loop, "POST", "localhost:7420", nil, 200},
		{"no origin, cross-site fetch", loop, "POST", "localhost:7420", hdr("Sec-Fetch-Site", "cross-site"), 403},
		{"no origin, cross-site fetch, odd spelling", loop, "DELETE", "localhost:7420", hdr("Sec-Fetch-Site", " Cross-Site "), 403},
		{"no origin, same-origin fetch", loop, "POST", "localhost:7420", hdr("Sec-Fetch-Site", "same-origin"), 200},
		{"no origin, user-initiated", loop, "POST", "localhost:7420", hdr("Sec-Fetch-Site", "none"), 200},
		{"GET with foreign origin", loop, "GET", "localhost:7420", hdr("Origin", "https://evil.com"), 200},
		{"HEAD with foreign origin", loop, "HEAD", "localhost:7420", hdr("Origin", "https://evil.com"), 200},
		{"GET cross-site", loop, "GET", "localhost:7420", hdr("Sec-Fetch-Site", "cross-site"), 200},
		{"token does not excuse a foreign origin", open, "POST", "box.lan:7420",
			hdr("Origin", "https://evil.com", "Authorization", "Bearer "+testToken), 403},
		{"token and same origin off loopback", open, "POST", "box.lan:7420",
			hdr("Origin", "http://box.lan:7420", "Authorization", "Bearer "+testToken), 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code := ""
			if tt.status == 403 {
				code = CodeForbiddenOrigin
			}
			r := request{method: tt.method, host: tt.host, header: tt.header}.build()
			checkStatus(t, serve(tt.g, okHandler(), r), tt.status, code)
		})
	}
}

func TestBodyLimit(t *testing.T) {
	const limit = 16
	g := mustGuard(t, Config{Addr: "127.0.0.1:7420", MaxBodyBytes: limit})
	def := mustGuard(t, Config{Addr: "127.0.0.1:7420"})

	// io.MultiReader hides the length, as a chunked upload would.
	unknown := func(n int) io.Reader { return io.MultiReader(strings.NewReader(strings.Repeat("x", n))) }
	known := func(n int) io.Reader { return strings.NewReader(strings.Repeat("x", n)) }

	tests := []struct {
		name        string
		g           *Guard
		body        io.Reader
		status      int
		handlerRuns bool
	}{
		{"at the limit with Content-Length", g, known(limit), 200, true},
		{"over the limit with Content-Length", g, known(limit + 1), 413, false},
		{"at the limit without Content-Length", g, unknown(limit), 200, true},
		{"over the limit without Content-Length", g, unknown(limit + 1), 413, true},
		{"empty body", g, nil, 200, true},
		{"default limit admits 1 MiB", def, known(int(DefaultMaxBodyBytes)), 200, true},
		{"default limit refuses 1 MiB + 1", def, known(int(DefaultMaxBodyBytes) + 1), 413, false},
		{"default limit without Content-Length", def, unknown(int(DefaultMaxBodyBytes) + 1), 413, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ran := false
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				ran = true
				okHandler().ServeHTTP(w, r)
			})
			r := request{method: "POST", body: tt.body}.build()
			code := ""
			if tt.status == 413 {
				code = CodeBodyTooLarge
			}
			rec := serve(tt.g, h, r)
			checkStatus(t, rec, tt.status, code)
			if ran != tt.handlerRuns {
				t.Errorf("handler ran = %v, want %v", ran, tt.handlerRuns)
			}
		})
	}

	t.Run("early rejection reports the limit", func(t *testing.T) {
		rec := serve(g, okHandler(), request{method: "POST", body: known(limit + 1)}.build())
		if !strings.Contains(rec.Body.String(), `"limit_bytes":`+strconv.Itoa(limit)) {
			t.Errorf("body %s lacks limit_bytes", rec.Body)
		}
	})
}

func TestSecurityHeaders(t *testing.T) {
	g := mustGuard(t, Config{Addr: "127.0.0.1:7420", Token: testToken, MaxBodyBytes: 4})
	auth := "Bearer " + testToken
	tests := []struct {
		name   string
		req    request
		status int
	}{
		{"success", request{header: hdr("Authorization", auth)}, 200},
		{"forbidden host", request{host: "evil.com"}, 403},
		{"forbidden origin", request{method: "POST", header: hdr("Origin", "https://evil.com")}, 403},
		{"too large", request{method: "POST", header: hdr("Authorization", auth), body: strings.NewReader("12345")}, 413},
		{"health", request{target: "/api/health"}, 200},
		{"CORS preflight", request{method: "OPTIONS", header: hdr("Origin", "https://evil.com",
			"Access-Control-Request-Method", "POST", "Authorization", auth)}, 200},
		{"cross-origin GET", request{header: hdr("Origin", "https://evil.com", "Authorization", auth)}, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := serve(g, okHandler(), tt.req.build())
			checkStatus(t, rec, tt.status, "")
			want := map[string]string{
				"X-Content-Type-Options": "nosniff",
				"Referrer-Policy":        "no-referrer",
				"X-Frame-Options":        "DENY",
			}
			for k, v := range want {
				if got := rec.Header().Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			for k := range rec.Header() {
				if strings.HasPrefix(k, "Access-Control-") {
					t.Errorf("unexpected CORS header %s", k)
				}
			}
		})
	}
}

// TestEndToEnd runs the guard behind a real server, where Host, chunked
// bodies and MaxBytesReader's connection handling are the genuine article.
func TestEndToEnd(t *testing.T) {
	srv := httptest.NewUnstartedServer(nil)
	g := mustGuard(t, Config{Addr: srv.Listener.Addr().String(), MaxBodyBytes: 8})
	srv.Config.Handler = g.Wrap(okHandler())
	srv.Start()
	defer srv.Close()

	do := func(t *testing.T, r *http.Request) int {
		t.Helper()
		resp, err := srv.Client().Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}
	newReq := func(t *testing.T, method string, body io.Reader) *http.Request {
		r, err := http.NewRequest(method, srv.URL+"/api/runs", body)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	t.Run("loopback host", func(t *testing.T) {
		if got := do(t, newReq(t, "GET", nil)); got != 200 {
			t.Errorf("status %d", got)
		}
	})
	t.Run("rebound host", func(t *testing.T) {
		r := newReq(t, "GET", nil)
		r.Host = "attacker.example"
		if got := do(t, r); got != 403 {
			t.Errorf("status %d", got)
		}
	})
	t.Run("chunked body over the limit", func(t *testing.T) {
		r := newReq(t, "POST", io.MultiReader(strings.NewReader("0123456789")))
		if got := do(t, r); got != 413 {
			t.Errorf("status %d", got)
		}
	})
	t.Run("declared body over the limit", func(t *testing.T) {
		if got := do(t, newReq(t, "POST", strings.NewReader("0123456789"))); got != 413 {
			t.Errorf("status %d", got)
		}
	})
}
