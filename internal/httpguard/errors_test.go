package httpguard

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

func TestWriteError(t *testing.T) {
	tests := []struct {
		name    string
		details map[string]any
		want    string
	}{
		{"nil details become an empty object", nil,
			`{"error":{"code":"forbidden_host","message":"no","details":{}}}`},
		{"details kept", map[string]any{"limit_bytes": 5},
			`{"error":{"code":"forbidden_host","message":"no","details":{"limit_bytes":5}}}`},
		{"unencodable details dropped, not panicking", map[string]any{"f": func() {}},
			`{"error":{"code":"forbidden_host","message":"no","details":{}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			rec.Header().Set("Content-Length", "999")
			WriteError(rec, http.StatusForbidden, CodeForbiddenHost, "no", tt.details)
			if rec.Code != http.StatusForbidden {
				t.Errorf("status = %d", rec.Code)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
			if cl := rec.Header().Get("Content-Length"); cl != "" {
				t.Errorf("stale Content-Length %q kept", cl)
			}
			var got, want any
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatalf("body %q: %v", rec.Body, err)
			}
			_ = json.Unmarshal([]byte(tt.want), &want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("body = %s, want %s", strings.TrimSpace(rec.Body.String()), tt.want)
			}
		})
	}
}

func TestIsBodyTooLarge(t *testing.T) {
	limited := http.MaxBytesReader(httptest.NewRecorder(), io.NopCloser(strings.NewReader("abc")), 1)
	_, readErr := io.ReadAll(limited)
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"from MaxBytesReader", readErr, true},
		{"constructed", &http.MaxBytesError{Limit: 1}, true},
		{"wrapped", fmt.Errorf("decode body: %w", &http.MaxBytesError{Limit: 1}), true},
		{"other error", io.ErrUnexpectedEOF, false},
		{"text alone is not enough", errors.New("http: request body too large"), false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		if got := IsBodyTooLarge(tt.err); got != tt.want {
			t.Errorf("%s: IsBodyTooLarge = %v, want %v", tt.name, got, tt.want)
		}
	}
}
