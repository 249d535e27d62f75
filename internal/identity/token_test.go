package identity

import (
	"strings"
	"testing"
)

func TestTokenCheck(t *testing.T) {
	st := testStore(t)
	g := resolver(st, Config{Token: testToken, Loopback: true})
	open := resolver(st, Config{Token: testToken})
	noToken := resolver(st, Config{Loopback: true})
	sse := "text/event-stream"

	tests := []struct {
		name   string
		g      *Resolver
		req    request
		status int
	}{
		{"missing", g, request{}, 401},
		{"wrong", g, request{header: hdr("Authorization", "Bearer nope")}, 401},
		{"prefix of the token", g, request{header: hdr("Authorization", "Bearer "+testToken[:5])}, 401},
		{"token plus suffix", g, request{header: hdr("Authorization", "Bearer "+testToken+"x")}, 401},
		{"empty bearer", g, request{header: hdr("Authorization", "Bearer ")}, 401},
		{"bare token without scheme", g, request{header: hdr("Authorization", testToken)}, 401},
		{"basic scheme", g, request{header: hdr("Authorization", "Basic "+testToken)}, 401},
		{"cookie is not a credential", g, request{header: hdr("Cookie", "caduceus_token="+testToken)}, 401},
		{"right", g, request{header: hdr("Authorization", "Bearer "+testToken)}, 200},
		{"right, scheme in lower case", g, request{header: hdr("Authorization", "bearer "+testToken)}, 200},
		{"right on a POST", g, request{method: "POST", header: hdr("Authorization", "Bearer "+testToken)}, 200},
		{"required off loopback", open, request{host: "box.lan"}, 401},
		{"right off loopback", open, request{host: "box.lan", header: hdr("Authorization", "Bearer "+testToken)}, 200},
		{"not required without a token on loopback", noToken, request{}, 200},

		{"health exempt", g, request{target: "/api/health"}, 200},
		{"health exempt for HEAD", g, request{method: "HEAD", target: "/api/health"}, 200},
		{"health exemption is GET only", g, request{method: "POST", target: "/api/health"}, 401},
		{"health exemption is exact", g, request{target: "/api/healthz"}, 401},
		{"workbench page needs no token", g, request{target: "/"}, 200},
		{"workbench bundle needs no token", g, request{target: "/assets/app.js"}, 200},
		{"workbench exemption is for reads", g, request{method: "POST", target: "/"}, 401},
		{"api root is not a page", g, request{target: "/api"}, 401},
		{"api needs the token", g, request{target: "/api/sessions"}, 401},
		{"health exemption is not a prefix", g, request{target: "/api/health/../runs"}, 401},
		{"metrics need the token", g, request{target: "/metrics"}, 401},
		{"metrics with the token", g, request{target: "/metrics", header: hdr("Authorization", "Bearer "+testToken)}, 200},
		{"metrics on loopback without a token", noToken, request{target: "/metrics"}, 200},

		{"query token on event-stream GET", g, request{target: "/api/events?access_token=" + testToken,
			header: hdr("Accept", sse)}, 200},
		{"query token, event-stream among others", g, request{target: "/api/events?access_token=" + testToken,
			header: hdr("Accept", "text/html, Text/Event-Stream;q=0.9")}, 200},
		{"query token without Accept", g, request{target: "/api/events?access_token=" + testToken}, 401},
		{"query token on JSON GET", g, request{target: "/api/runs?access_token=" + testToken,
			header: hdr("Accept", "application/json")}, 401},
		{"query token on event-stream POST", g, request{method: "POST", target: "/api/events?access_token=" + testToken,
			header: hdr("Accept", sse)}, 401},
		{"query token on a session stream", g, request{target: "/api/sessions/ses_1/events?access_token=" + testToken,
			header: hdr("Accept", sse)}, 200},
		{"query token on a run stream", g, request{target: "/api/runs/run_1/events?after=3&access_token=" + testToken,
			header: hdr("Accept", sse)}, 200},
		{"query token on a JSON route asking for a stream", g, request{target: "/api/sessions?access_token=" + testToken,
			header: hdr("Accept", sse)}, 401},
		{"query token on a session, asking for a stream", g, request{target: "/api/sessions/ses_1?access_token=" + testToken,
			header: hdr("Accept", sse)}, 401},
		{"query token on a run, asking for a stream", g, request{target: "/api/runs/run_1?access_token=" + testToken,
			header: hdr("Accept", sse)}, 401},
		{"query token on requests, asking for a stream", g, request{target: "/api/requests?access_token=" + testToken,
			header: hdr("Accept", sse)}, 401},
		{"query token on meta, asking for a stream", g, request{target: "/api/meta?access_token=" + testToken,
			header: hdr("Accept", sse)}, 401},
		{"query token on session messages, asking for a stream", g, request{target: "/api/sessions/ses_1/messages?access_token=" + testToken,
			header: hdr("Accept", sse)}, 401},
		{"query token on a stream path with a suffix", g, request{target: "/api/events/x?access_token=" + testToken,
			header: hdr("Accept", sse)}, 401},
		{"query token on a stream path with a trailing slash", g, request{target: "/api/events/?access_token=" + testToken,
			header: hdr("Accept", sse)}, 401},
		{"query token on a stream path with a prefix", g, request{target: "/api/api/events?access_token=" + testToken,
			header: hdr("Accept", sse)}, 401},
		{"query token on a stream path with dot segments", g, request{target: "/api/sessions/../events?access_token=" + testToken,
			header: hdr("Accept", sse)}, 401},
		{"query token on a stream path with an empty id", g, request{target: "/api/runs//events?access_token=" + testToken,
			header: hdr("Accept", sse)}, 401},
		{"query token on a stream path of another kind", g, request{target: "/api/requests/req_1/events?access_token=" + testToken,
			header: hdr("Accept", sse)}, 401},
		{"query token on a deeper stream-like path", g, request{target: "/api/sessions/ses_1/runs/events?access_token=" + testToken,
			header: hdr("Accept", sse)}, 401},
		{"query token on a JSON POST asking for a stream", g, request{method: "POST", target: "/api/sessions?access_token=" + testToken,
			header: hdr("Accept", sse)}, 401},
		{"wrong query token", g, request{target: "/api/events?access_token=nope", header: hdr("Accept", sse)}, 401},
		{"empty query token", g, request{target: "/api/events?access_token=", header: hdr("Accept", sse)}, 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := serve(tt.g, okHandler(nil), tt.req.build())
			if tt.status != 401 {
				checkStatus(t, rec, tt.status, "")
				return
			}
			checkStatus(t, rec, 401, CodeUnauthorized)
			if got := rec.Header().Get("WWW-Authenticate"); got != "Bearer" {
				t.Errorf("WWW-Authenticate = %q, want Bearer", got)
			}
		})
	}
}

// The wrapped handler must not be able to echo or log the token, and the
// caller's request must be left as it was.
func TestCredentialsNotForwarded(t *testing.T) {
	g := resolver(testStore(t), Config{Token: testToken, Loopback: true})
	tests := []struct {
		name      string
		req       request
		wantQuery string
	}{
		{"bearer header", request{target: "/api/runs?limit=5", header: hdr("Authorization", "Bearer "+testToken)}, "limit=5"},
		{"query token", request{target: "/api/events?after=5&access_token=" + testToken + "&x=%41",
			header: hdr("Accept", "text/event-stream")}, "after=5&x=%41"},
		{"escaped query key", request{target: "/api/events?access%5Ftoken=" + testToken,
			header: hdr("Accept", "text/event-stream")}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s seen
			h := okHandler(&s)
			r := tt.req.build()
			origAuth, origQuery := r.Header.Get("Authorization"), r.URL.RawQuery
			checkStatus(t, serve(g, h, r), 200, "")
			seen := s.req
			if seen == nil {
				t.Fatal("handler not called")
			}
			if got := seen.Header.Get("Authorization"); got != "" {
				t.Errorf("handler saw Authorization %q", got)
			}
			if seen.URL.RawQuery != tt.wantQuery {
				t.Errorf("handler saw query %q, want %q", seen.URL.RawQuery, tt.wantQuery)
			}
			if strings.Contains(seen.RequestURI, testToken) || strings.Contains(seen.URL.String(), testToken) {
				t.Errorf("handler saw the token in %q / %q", seen.RequestURI, seen.URL)
			}
			if r.Header.Get("Authorization") != origAuth || r.URL.RawQuery != origQuery {
				t.Error("the caller's request was modified")
			}
		})
	}
}
