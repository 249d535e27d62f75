package wire

import (
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"
)

const testKey = "sk-proj-Abc123Def456Ghi789Jkl012Mno345"

// closeSpy records whether the body was closed.
type closeSpy struct {
	io.Reader
	closed bool
}

func (c *closeSpy) Close() error { c.closed = true; return nil }

func response(status int, body string) (*http.Response, *closeSpy) {
	spy := &closeSpy{Reader: strings.NewReader(body)}
	return &http.Response{StatusCode: status, Status: http.StatusText(status), Body: spy, Header: http.Header{}}, spy
}

func TestResponseError(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		body      string
		code      string
		retryable bool
		want      []string // substrings of the message
	}{
		{"openai 400", 400, `{"error":{"message":"Invalid 'messages[2].content': string too short.","type":"invalid_request_error","param":"messages[2].content","code":"string_below_min_length"}}`,
			"bad_request", false, []string{"Invalid 'messages[2].content': string too short."}},
		{"anthropic 400", 400, `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: Field required"}}`,
			"bad_request", false, []string{"max_tokens: Field required"}},
		{"ollama string error", 404, `{"error":"model \"llama9\" not found, try pulling it first"}`,
			"not_found", false, []string{`model "llama9" not found`}},
		{"vllm message", 400, `{"object":"error","message":"This model's maximum context length is 8192 tokens.","type":"BadRequestError","param":null,"code":400}`,
			"bad_request", false, []string{"maximum context length is 8192"}},
		{"fastapi detail string", 422, `{"detail":"Not Found"}`, "bad_request", false, []string{"Not Found"}},
		{"fastapi detail list", 422, `{"detail":[{"loc":["body","model"],"msg":"field required","type":"value_error.missing"},{"msg":"bad temperature"}]}`,
			"bad_request", false, []string{"field required; bad temperature"}},
		{"message of an unexpected type does not hide error", 400, `{"message":42,"error":{"message":"real one"}}`, "bad_request", false, []string{"real one"}},
		{"plain text", 502, "upstream connect error", "server_error", true, []string{"upstream connect error"}},
		{"empty body uses the status", 503, "", "server_error", true, []string{"Service Unavailable"}},
		{"rate limited", 429, `{"error":{"message":"Rate limit reached for gpt-4o","type":"requests","code":"rate_limit_exceeded"}}`,
			"rate_limited", true, []string{"Rate limit reached"}},
		{"overloaded", 529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "overloaded", true, []string{"Overloaded"}},
		{"request timeout", 408, "", "timeout", true, nil},
		{"too large", 413, `{"error":{"message":"Request too large"}}`, "too_large", false, []string{"Request too large"}},
		{"401 says to check the key and hides it", 401,
			`{"error":{"message":"Incorrect API key provided: sk-proj-********************************345. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
			"auth", false, []string{"HTTP 401", "Incorrect API key provided: [redacted]", "api-keys. Check the API key configured for testprov."}},
		{"403", 403, `{"error":{"message":"Project does not have access to model"}}`, "auth", false, []string{"HTTP 403", "Check the API key"}},
		{"server echoing the whole key", 400, `{"error":{"message":"bad key ` + testKey + ` given"}}`, "bad_request", false, []string{"bad key [redacted] given"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, spy := response(tt.status, tt.body)
			e := ResponseError("testprov", resp, testKey)
			if e.Provider != "testprov" || e.Code != tt.code || e.Retryable != tt.retryable {
				t.Fatalf("got %+v, want code %s retryable %v", e, tt.code, tt.retryable)
			}
			for _, w := range tt.want {
				if !strings.Contains(e.Message, w) {
					t.Errorf("message %q lacks %q", e.Message, w)
				}
			}
			if strings.Contains(e.Message, testKey) || strings.Contains(e.Message, "sk-proj-*") || strings.Contains(e.Message, "..") {
				t.Errorf("message %q leaks the key or reads badly", e.Message)
			}
			if !spy.closed {
				t.Error("body not closed")
			}
		})
	}
}

func TestResponseErrorClipsLongText(t *testing.T) {
	body := strings.Repeat("é", 400) // two bytes each: byte 300 is mid-rune
	resp, _ := response(502, body)
	e := ResponseError("p", resp)
	if !utf8.ValidString(e.Message) || !strings.HasSuffix(e.Message, "…") || len(e.Message) > 310 {
		t.Fatalf("clipped message %q (valid %v, %d bytes)", e.Message, utf8.ValidString(e.Message), len(e.Message))
	}
}

func TestRedact(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		secrets []string
		want    string
	}{
		{"no secrets", "nothing to see", nil, "nothing to see"},
		{"exact secret", "key is hunter2-secret!", []string{"hunter2-secret"}, "key is [redacted]!"},
		{"every occurrence", "abcd and abcd", []string{"abcd"}, "[redacted] and [redacted]"},
		{"short secrets are not trusted", "a b c", []string{"b"}, "a b c"},
		{"empty secret", "text", []string{""}, "text"},
		{"openai-shaped key", "got sk-abc123xyz789 from you", nil, "got [redacted] from you"},
		{"masked key", "Incorrect API key provided: sk-ab***yz.", nil, "Incorrect API key provided: [redacted]"},
		{"long token", "token " + strings.Repeat("A1b2", 12) + " end", nil, "token [redacted] end"},
		{"ordinary words survive", "the model sk is fine; key-value pairs", nil, "the model sk is fine; key-value pairs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Redact(tt.in, tt.secrets...); got != tt.want {
				t.Fatalf("Redact = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTransportError(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	e := TransportError("p", refused, testKey)
	if e.Code != "connection" || !e.Retryable || !strings.Contains(e.Message, "cannot reach the server") {
		t.Fatalf("got %+v", e)
	}
	e = TransportError("p", errors.New("proxy rejected Bearer "+testKey), testKey)
	if e.Retryable || strings.Contains(e.Message, testKey) || !strings.Contains(e.Message, "[redacted]") {
		t.Fatalf("got %+v", e)
	}
}

func TestStreamCut(t *testing.T) {
	e := StreamCut("p", nil)
	if e.Code != "stream_cut" || e.Retryable || e.Message != "the response stream ended before the model finished" {
		t.Fatalf("got %+v", e)
	}
	e = StreamCut("p", errors.New("read with key "+testKey+": connection reset"), testKey)
	if !strings.HasSuffix(e.Message, ": read with key [redacted]: connection reset") {
		t.Fatalf("got %q", e.Message)
	}
}
