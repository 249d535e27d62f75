package auth

import (
	"regexp"
	"strings"
	"testing"
)

func TestNewToken(t *testing.T) {
	seen := map[string]bool{}
	for range 50 {
		tok, err := NewToken()
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`^cad_[a-z2-7]{52}$`).MatchString(tok.Plain) {
			t.Fatalf("token %q has the wrong shape", tok.Plain)
		}
		if tok.Hash != HashToken(tok.Plain) || !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(tok.Hash) {
			t.Fatalf("hash %q of %q", tok.Hash, tok.Plain)
		}
		if !strings.HasPrefix(tok.Plain, tok.Prefix) || len(tok.Prefix) != 12 {
			t.Fatalf("prefix %q of %q", tok.Prefix, tok.Plain)
		}
		if strings.Contains(tok.Hash, tok.Plain[4:]) {
			t.Fatal("hash holds the token")
		}
		if seen[tok.Plain] || seen[tok.Prefix] {
			t.Fatalf("token repeated: %q", tok.Plain)
		}
		seen[tok.Plain], seen[tok.Prefix] = true, true
		if !LooksLikeToken(tok.Plain) {
			t.Fatalf("LooksLikeToken(%q) = false", tok.Plain)
		}
	}
}

func TestHashTokenKnownValue(t *testing.T) {
	// sha256("cad_test") computed independently (printf cad_test | sha256sum).
	if got, want := HashToken("cad_test"), "89dc972b37c8239579171191f5782c9b3ebe46a309770d3f6e9aeed9b62971eb"; got != want {
		t.Fatalf("HashToken = %s, want %s", got, want)
	}
}

func TestLooksLikeToken(t *testing.T) {
	ok, _ := NewToken()
	tests := []struct {
		in   string
		want bool
	}{
		{ok.Plain, true},
		{"", false},
		{"cad_", false},
		{ok.Plain[:len(ok.Plain)-1], false},
		{ok.Plain + "a", false},
		{strings.ToUpper(ok.Plain), false},
		{"xyz_" + ok.Plain[4:], false},
		{"cad_" + strings.Repeat("1", 52), false}, // 1 is not in the alphabet
		{"correct horse battery staple", false},
	}
	for _, tc := range tests {
		if got := LooksLikeToken(tc.in); got != tc.want {
			t.Errorf("LooksLikeToken(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
