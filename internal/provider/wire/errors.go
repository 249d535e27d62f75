package wire

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/caduceus-dev/caduceus/internal/provider"
)

// keyLike matches API-key-shaped words: servers echo a masked or partial
// key in authentication errors ("Incorrect API key provided: sk-ab***yz").
var keyLike = regexp.MustCompile(`\b(sk|pk|rk|key|sess|org)-[A-Za-z0-9_\-*.]{6,}|\b[A-Za-z0-9_\-]{40,}\b`)

// Redact removes every secret and anything that looks like an API key from
// s. Every text that came from a provider passes through it before it can
// reach an event, a log line or a response.
func Redact(s string, secrets ...string) string {
	for _, sec := range secrets {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	return keyLike.ReplaceAllString(s, "[redacted]")
}

// ResponseError turns a failed HTTP response into a provider error with a
// stable code and the server's own message (redacted). It reads and closes
// the body.
func ResponseError(name string, resp *http.Response, secrets ...string) *provider.Error {
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	msg := serverMessage(body)
	if msg == "" {
		msg = resp.Status
	}
	msg = Redact(msg, secrets...)
	e := &provider.Error{Provider: name, Message: msg, Retryable: Retryable(resp.StatusCode)}
	switch s := resp.StatusCode; {
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
		e.Code = "auth"
		e.Message = fmt.Sprintf("the server refused the credentials (HTTP %d): %s. Check the API key configured for %s.", s, strings.TrimRight(msg, ". "), name)
	case s == http.StatusRequestTimeout:
		e.Code = "timeout"
	case s == http.StatusNotFound:
		e.Code = "not_found"
	case s == http.StatusTooManyRequests:
		e.Code = "rate_limited"
	case s == 529:
		e.Code = "overloaded"
	case s == http.StatusRequestEntityTooLarge:
		e.Code = "too_large"
	case s >= 500:
		e.Code = "server_error"
	default:
		e.Code = "bad_request"
	}
	return e
}

// serverMessage digs the human message out of the error bodies OpenAI,
// Anthropic and the compatible servers send: {"error": {"message": ...}},
// {"error": "..."}, {"message": ...} (vLLM), {"detail": "..."} or FastAPI's
// {"detail": [{"msg": ...}]}; otherwise the start of the text. Fields are
// decoded one by one so an unexpected type in one does not hide the others.
func serverMessage(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &v) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(v.Error, &inner) == nil && inner.Message != "" {
			return inner.Message
		}
		for _, raw := range []json.RawMessage{v.Error, v.Message, v.Detail} {
			var s string
			if json.Unmarshal(raw, &s) == nil && s != "" {
				return s
			}
		}
		var details []struct {
			Msg string `json:"msg"`
		}
		if json.Unmarshal(v.Detail, &details) == nil {
			var msgs []string
			for _, d := range details {
				if d.Msg != "" {
					msgs = append(msgs, d.Msg)
				}
			}
			if len(msgs) > 0 {
				return strings.Join(msgs, "; ")
			}
		}
	}
	t := strings.TrimSpace(string(body))
	if len(t) > 300 {
		// Cut on a rune boundary: the message ends up in JSON events.
		n := 300
		for n > 0 && !utf8.RuneStart(t[n]) {
			n--
		}
		t = t[:n] + "…"
	}
	return t
}

// TransportError describes a request that never got a response.
func TransportError(name string, err error, secrets ...string) *provider.Error {
	return &provider.Error{Provider: name, Code: "connection", Retryable: transient(err),
		Message: Redact("cannot reach the server: "+err.Error(), secrets...)}
}

// StreamCut is the error for a response that stopped before its end.
func StreamCut(name string, cause error, secrets ...string) *provider.Error {
	msg := "the response stream ended before the model finished"
	if cause != nil {
		msg += ": " + cause.Error()
	}
	return &provider.Error{Provider: name, Code: "stream_cut", Message: Redact(msg, secrets...)}
}
