package auth

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

// testParams are cheap so the tests run fast; the format and checks are
// the same as with DefaultParams.
func testParams() Params { return Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32} }

func TestHashAndVerify(t *testing.T) {
	p := testParams()
	h, err := HashPassword("correct horse", p)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^\$argon2id\$v=19\$m=64,t=1,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$`).MatchString(h) {
		t.Fatalf("hash %q is not PHC argon2id", h)
	}
	if strings.Contains(h, "correct horse") {
		t.Fatal("hash holds the password")
	}
	h2, _ := HashPassword("correct horse", p)
	if h == h2 {
		t.Fatal("two hashes of one password are equal: salt not random")
	}
	tests := []struct {
		pw   string
		want bool
	}{
		{"correct horse", true},
		{"correct hors", false},
		{"correct horse ", false},
		{"Correct horse", false},
		{"", false},
		{strings.Repeat("x", 5000), false},
	}
	for _, tc := range tests {
		ok, err := VerifyPassword(h, tc.pw)
		if err != nil || ok != tc.want {
			t.Errorf("VerifyPassword(%.20q) = %v, %v; want %v", tc.pw, ok, err, tc.want)
		}
	}
}

func TestHashPasswordRefuses(t *testing.T) {
	tests := []struct {
		pw   string
		p    Params
		want error
	}{
		{"short", testParams(), ErrPasswordTooShort},
		{"1234567", testParams(), ErrPasswordTooShort},
		{"ééééééé", testParams(), ErrPasswordTooShort}, // 7 characters, 14 bytes
		{strings.Repeat("a", MaxPasswordLen+1), testParams(), ErrPasswordTooLong},
		{"long enough", Params{Memory: 64, Time: 0, Threads: 1, SaltLen: 16, KeyLen: 32}, ErrBadValue},
		{"long enough", Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 4, KeyLen: 32}, ErrBadValue},
	}
	for _, tc := range tests {
		if _, err := HashPassword(tc.pw, tc.p); !errors.Is(err, tc.want) {
			t.Errorf("HashPassword(%.20q, %+v) = %v, want %v", tc.pw, tc.p, err, tc.want)
		}
	}
	if _, err := HashPassword("12345678", testParams()); err != nil {
		t.Errorf("8 characters refused: %v", err)
	}
}

func TestVerifyBadHashes(t *testing.T) {
	good, _ := HashPassword("password1", testParams())
	parts := strings.Split(good, "$")
	tests := []string{
		"",
		"password1",
		"$2a$10$abcdefghijklmnopqrstuv", // bcrypt
		strings.Replace(good, "argon2id", "argon2i", 1),                           // other variant
		strings.Replace(good, "v=19", "v=16", 1),                                  // other version
		strings.Replace(good, "m=64", "m=9999999999", 1),                          // overflows
		strings.Replace(good, "m=64", "m=2000000", 1),                             // 2 GiB
		strings.Replace(good, "t=1", "t=0", 1),                                    // no passes
		strings.Replace(good, "p=1", "p=300", 1),                                  // too many threads
		strings.Replace(good, "m=64,", "m=64,x=1,", 1),                            // unknown parameter
		"$argon2id$v=19$m=64,t=1,p=1$" + parts[4] + "$!!",                         // bad base64
		"$argon2id$v=19$m=64,t=1,p=1$c2FsdA$" + parts[5],                          // short salt
		"$argon2id$v=19$m=64,t=1,p=1$" + parts[4] + "$" + parts[5] + "$extra",     // extra field
		"x$argon2id$v=19$m=64,t=1,p=1$" + parts[4] + "$" + parts[5],               // junk before
		"$argon2id$v=19$m=64,t=1,p=1$" + parts[4] + "$" + strings.Repeat("A", 10), // short key
	}
	for _, h := range tests {
		ok, err := VerifyPassword(h, "password1")
		if ok || !errors.Is(err, ErrBadHash) {
			t.Errorf("VerifyPassword(%q) = %v, %v; want ErrBadHash", h, ok, err)
		}
		if !NeedsRehash(h, testParams()) {
			t.Errorf("NeedsRehash(%q) = false for an unreadable hash", h)
		}
	}
}

func TestNeedsRehash(t *testing.T) {
	p := testParams()
	h, _ := HashPassword("password1", p)
	tests := []struct {
		name string
		p    Params
		want bool
	}{
		{"same", p, false},
		{"more memory", Params{Memory: 128, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}, true},
		{"more time", Params{Memory: 64, Time: 2, Threads: 1, SaltLen: 16, KeyLen: 32}, true},
		{"more threads", Params{Memory: 64, Time: 1, Threads: 2, SaltLen: 16, KeyLen: 32}, true},
		{"longer key", Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 64}, true},
		{"defaults", DefaultParams(), true},
	}
	for _, tc := range tests {
		if got := NeedsRehash(h, tc.p); got != tc.want {
			t.Errorf("%s: NeedsRehash = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// BenchmarkHashPassword compares the candidate parameter sets on this
// machine; docs/BENCHMARKS.md records the numbers and the choice.
func BenchmarkHashPassword(b *testing.B) {
	sets := []struct {
		name string
		p    Params
	}{
		{"owasp_m19MiB_t2_p1", DefaultParams()},
		{"m64MiB_t1_p2", Params{Memory: 64 * 1024, Time: 1, Threads: 2, SaltLen: 16, KeyLen: 32}},
		{"m46MiB_t1_p1", Params{Memory: 46 * 1024, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}},
	}
	for _, s := range sets {
		b.Run(s.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := HashPassword("correct horse battery", s.p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
