package secret

import "testing"

func TestHint(t *testing.T) {
	for _, tc := range []struct{ key, want string }{
		{"", ""},
		{"short-key01", ""},          // 11
		{"sk-abcdefgh", ""},          // 11
		{"sk-abcd4f2a", ""},          // 11
		{"sk-abcde4f2a", "sk-…4f2a"}, // 12
		{"sk-proj-0123456789abcdef4f2a", "sk-…4f2a"},
		{"ééé-secret-kéy1", "ééé…kéy1"}, // characters, not bytes
	} {
		if got := Hint(tc.key); got != tc.want {
			t.Errorf("Hint(%q) = %q, want %q", tc.key, got, tc.want)
		}
	}
}
