package secretbox_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/secretbox"
)

func box(t *testing.T, fill byte) *secretbox.Box {
	t.Helper()
	b, err := secretbox.New(bytes.Repeat([]byte{fill}, secretbox.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRoundTrip(t *testing.T) {
	b := box(t, 1)
	for _, pt := range []string{"", "sk-test-0123456789abcdef", strings.Repeat("é", 1000)} {
		s, err := b.Seal(pt, "prv_1")
		if err != nil {
			t.Fatal(err)
		}
		if pt != "" && strings.Contains(s, pt) {
			t.Fatalf("sealed value holds the plaintext: %q", s)
		}
		if secretbox.SealedKeyID(s) != b.KeyID() {
			t.Fatalf("key id %q, want %q", secretbox.SealedKeyID(s), b.KeyID())
		}
		got, err := b.Open(s, "prv_1")
		if err != nil || got != pt {
			t.Fatalf("Open = %q, %v; want %q", got, err, pt)
		}
	}
}

func TestOpenRefuses(t *testing.T) {
	b := box(t, 1)
	s, err := b.Seal("sk-test-0123456789abcdef", "prv_1")
	if err != nil {
		t.Fatal(err)
	}
	body := s[strings.LastIndexByte(s, '.')+1:]
	raw, _ := base64.RawURLEncoding.DecodeString(body)
	raw[len(raw)-1] ^= 1
	flipped := s[:len(s)-len(body)] + base64.RawURLEncoding.EncodeToString(raw)
	// Another key with the same id cannot be made on purpose; forge one by
	// rewriting the id so the AEAD itself must refuse.
	other := box(t, 2)
	forged := strings.Replace(s, "."+b.KeyID()+".", "."+other.KeyID()+".", 1)
	tests := []struct {
		name    string
		b       *secretbox.Box
		sealed  string
		context string
		want    error
	}{
		{"wrong key", other, s, "prv_1", secretbox.ErrOtherKey},
		{"wrong key, id forged", other, forged, "prv_1", secretbox.ErrCorrupt},
		{"tampered", b, flipped, "prv_1", secretbox.ErrCorrupt},
		{"other context", b, s, "prv_2", secretbox.ErrCorrupt},
		{"truncated", b, s[:len(s)-10], "prv_1", secretbox.ErrCorrupt},
		{"not sealed", b, "sk-plain", "prv_1", secretbox.ErrCorrupt},
		{"other version", b, "v9" + s[2:], "prv_1", secretbox.ErrCorrupt},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.b.Open(tc.sealed, tc.context)
			if !errors.Is(err, tc.want) || got != "" {
				t.Fatalf("Open = %q, %v; want error %v", got, err, tc.want)
			}
		})
	}
}

func TestNoncesDiffer(t *testing.T) {
	b := box(t, 1)
	seen := map[string]bool{}
	for range 2000 {
		s, err := b.Seal("same plaintext", "ctx")
		if err != nil {
			t.Fatal(err)
		}
		raw, err := base64.RawURLEncoding.DecodeString(s[strings.LastIndexByte(s, '.')+1:])
		if err != nil {
			t.Fatal(err)
		}
		nonce := string(raw[:24])
		if seen[nonce] {
			t.Fatal("a nonce repeated")
		}
		seen[nonce] = true
	}
}

func TestKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", secretbox.KeyFileName)
	var wg sync.WaitGroup
	boxes := make([]*secretbox.Box, 4)
	for i := range boxes {
		wg.Go(func() {
			b, err := secretbox.LoadOrCreateFile(path)
			if err != nil {
				t.Error(err)
			}
			boxes[i] = b
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for _, b := range boxes[1:] {
		if b.KeyID() != boxes[0].KeyID() {
			t.Fatal("processes starting at once made different keys")
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 || fi.Size() != secretbox.KeySize {
		t.Fatalf("key file mode %v size %d", fi.Mode().Perm(), fi.Size())
	}
	s, _ := boxes[0].Seal("k", "c")
	again, err := secretbox.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := again.Open(s, "c"); err != nil || got != "k" {
		t.Fatalf("reopened key: %q %v", got, err)
	}
	if err := os.WriteFile(path, []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := secretbox.LoadOrCreateFile(path); err == nil {
		t.Fatal("a damaged key file was accepted (or replaced)")
	}
}

func TestFromEnv(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	tests := []struct {
		name, v string
		ok      bool
	}{
		{"std", base64.StdEncoding.EncodeToString(key), true},
		{"raw url", base64.RawURLEncoding.EncodeToString(key), true},
		{"short", base64.StdEncoding.EncodeToString(key[:16]), false},
		{"not base64", "!!!", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := secretbox.FromEnv(tc.v)
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v", err)
			}
			if err != nil && strings.Contains(err.Error(), tc.v) {
				t.Fatal("the error echoes the value")
			}
			if tc.ok && b.KeyID() != box(t, 7).KeyID() {
				t.Fatal("different key")
			}
		})
	}
}

func TestTextForms(t *testing.T) {
	key := bytes.Repeat([]byte{0xfb}, secretbox.KeySize) // '+' and '/' in standard base64
	b, err := secretbox.New(key)
	if err != nil {
		t.Fatal(err)
	}
	forms := b.TextForms()
	for _, want := range []string{base64.StdEncoding.EncodeToString(key), base64.RawURLEncoding.EncodeToString(key), hex.EncodeToString(key)} {
		if !slices.Contains(forms, want) {
			t.Errorf("TextForms lacks %q", want)
		}
	}
}

func TestDerive(t *testing.T) {
	a, b := box(t, 1), box(t, 2)
	x := a.Derive("label one")
	tests := []struct {
		name string
		got  string
		same bool
	}{
		{"same key and label", a.Derive("label one"), true},
		{"same key in another box", box(t, 1).Derive("label one"), true},
		{"another label", a.Derive("label two"), false},
		{"another key", b.Derive("label one"), false},
	}
	for _, tc := range tests {
		if (tc.got == x) != tc.same {
			t.Errorf("%s: %q vs %q, same = %v", tc.name, tc.got, x, tc.same)
		}
	}
	if len(x) != 64 {
		t.Fatalf("Derive = %q, want 64 hex digits", x)
	}
	for _, f := range a.TextForms() {
		if strings.Contains(x, f) {
			t.Fatal("a derived secret holds the key")
		}
	}
}
