package hook_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/hook"
)

func TestVerify(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"ref":"main"}`)
	ts := strconv.FormatInt(now.Unix(), 10)
	good := hook.Sign("s3cret", now, body)
	// A known vector: printf '1800000000.{"ref":"main"}' | openssl dgst -sha256 -hmac s3cret
	if want := "sha256=279707faceb021a847c32ffe7e1cef63a3adc45811f609b2bd9ae941a3b95f99"; good != want {
		t.Fatalf("Sign = %q, want %q", good, want)
	}
	tests := []struct {
		name    string
		secret  string
		ts, sig string
		body    []byte
		now     time.Time
		want    error
	}{
		{"valid", "s3cret", ts, good, body, now, nil},
		{"valid at the window's edge", "s3cret", ts, good, body, now.Add(hook.Window), nil},
		{"wrong secret", "other", ts, good, body, now, hook.ErrBadSignature},
		{"body changed", "s3cret", ts, good, []byte(`{"ref":"evil"}`), now, hook.ErrBadSignature},
		{"timestamp changed", "s3cret", strconv.FormatInt(now.Unix()+1, 10), good, body, now, hook.ErrBadSignature},
		{"old", "s3cret", ts, good, body, now.Add(hook.Window + time.Second), hook.ErrStale},
		{"from the future", "s3cret", ts, good, body, now.Add(-hook.Window - time.Second), hook.ErrStale},
		{"no signature", "s3cret", ts, "", body, now, hook.ErrNoSignature},
		{"no prefix", "s3cret", ts, strings.TrimPrefix(good, "sha256="), body, now, hook.ErrNoSignature},
		{"not hex", "s3cret", ts, "sha256=zz", body, now, hook.ErrNoSignature},
		{"no timestamp", "s3cret", "", good, body, now, hook.ErrNoSignature},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := hook.Verify(tc.secret, tc.ts, tc.sig, tc.body, tc.now); !errors.Is(err, tc.want) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestFill(t *testing.T) {
	tests := []struct {
		name, tmpl, body, want, err string
	}{
		{"fields", "Deploy {{.ref}} by {{.pusher.name}}", `{"ref":"main","pusher":{"name":"ada"}}`, "Deploy main by ada", ""},
		{"missing key", "Deploy {{.ref}}", `{"branch":"main"}`, "", "map has no entry for key"},
		{"not JSON", "Deploy {{.ref}}", `ref=main`, "", "not JSON"},
		{"bad template", "Deploy {{.ref", `{}`, "", "prompt template"},
		{"empty template", "  ", `{}`, "", "empty"},
		{"no fields", "Check the nightly build", ``, "Check the nightly build", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := hook.Fill(tc.tmpl, []byte(tc.body))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Fill = %q, %v; want error with %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Fill = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
