package httpguard

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
)

// garbageRequest builds a request by hand, bypassing the validation of
// http.NewRequest, so the guard sees whatever a hostile client could put on
// the wire (and some things it could not).
func garbageRequest(method, host, rawQuery, origin, auth, accept, fetchSite string) *http.Request {
	h := http.Header{}
	for k, v := range map[string]string{
		"Origin": origin, "Authorization": auth, "Accept": accept, "Sec-Fetch-Site": fetchSite,
	} {
		if v != "" {
			h.Set(k, v)
		}
	}
	return &http.Request{
		Method:     method,
		Host:       host,
		URL:        &url.URL{Path: "/api/events", RawQuery: rawQuery},
		RequestURI: "/api/events?" + rawQuery,
		Header:     h,
		Body:       http.NoBody,
	}
}

type garbageSeed struct{ method, host, query, origin, auth, accept, fetchSite string }

func garbageSeeds() []garbageSeed {
	return []garbageSeed{
		{"POST", "[", "access_token=%zz", "http://[::1", "Bearer", "text/event-stream", "cross-site"},
		{"POST", "[::1", "%", "://", "Bearer \x00\xff", ";;,,", "\x00"},
		{"GET", "localhost:7420:7420", "access_token", "http://%41", "Bearer  ", ",", ""},
		{"DELETE", "]:", "&&&=&", "http://localhost:7420\x00", "bearer\ttok", "text/event-stream;;;", "same-origin"},
		{"", "\xff\xfe", "access_token=" + testToken + "&access_token=x", "null", "Basic", "*/*", "CROSS-SITE"},
		{"PATCH", "localhost:99999999999999999999", "a=%ZZ&access%5Ftoken=1", "HTTP://LOCALHOST:99999999999999999999", "Bearer " + testToken + " extra", "text/event-stream", ""},
		{"GET", "[::1%25lo]:7420", "access_token=" + testToken, "", "", "TEXT/EVENT-STREAM", ""},
		{"POST", ":", "=", "http://:0", ":", "", "none"},
	}
}

func TestGarbageHeadersDoNotPanic(t *testing.T) {
	guards := []*Guard{
		mustGuard(t, Config{Addr: "127.0.0.1:7420"}),
		mustGuard(t, Config{Addr: "127.0.0.1:7420", Token: testToken, AllowedOrigins: []string{"http://localhost:5173"}}),
		mustGuard(t, Config{Addr: ":7420", Token: testToken}),
	}
	for _, g := range guards {
		for _, s := range garbageSeeds() {
			r := garbageRequest(s.method, s.host, s.query, s.origin, s.auth, s.accept, s.fetchSite)
			rec := httptest.NewRecorder()
			g.Wrap(okHandler()).ServeHTTP(rec, r)
			switch rec.Code {
			case 200, 401, 403:
			default:
				t.Errorf("%+v: unexpected status %d", s, rec.Code)
			}
		}
	}
}

func FuzzWrap(f *testing.F) {
	for _, s := range garbageSeeds() {
		f.Add(s.method, s.host, s.query, s.origin, s.auth, s.accept, s.fetchSite)
	}
	g := mustGuardF(f, Config{Addr: "127.0.0.1:7420", Token: testToken, AllowedOrigins: []string{"http://localhost:5173"}})
	h := g.Wrap(okHandler())
	f.Fuzz(func(t *testing.T, method, host, query, origin, auth, accept, fetchSite string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, garbageRequest(method, host, query, origin, auth, accept, fetchSite))
		if rec.Code == 200 && !isLoopbackHost(host) {
			t.Fatalf("non-loopback Host %q was served", host)
		}
	})
}

func mustGuardF(f *testing.F, cfg Config) *Guard {
	g, err := New(cfg)
	if err != nil {
		f.Fatal(err)
	}
	return g
}
