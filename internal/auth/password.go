package auth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
)

// Password length bounds, in characters. The maximum bounds the work a
// sign-in attempt can ask of the server, not the strength of a password.
const (
	MinPasswordLen = 8
	MaxPasswordLen = 1024
)

// Errors of password handling.
var (
	ErrPasswordTooShort = fmt.Errorf("password shorter than %d characters", MinPasswordLen)
	ErrPasswordTooLong  = fmt.Errorf("password longer than %d characters", MaxPasswordLen)
	ErrBadHash          = errors.New("not an argon2id hash this server can read")
)

// Params are argon2id's cost parameters.
type Params struct {
	Memory  uint32 // KiB
	Time    uint32 // passes over the memory
	Threads uint8
	SaltLen uint32 // bytes
	KeyLen  uint32 // bytes
}

// DefaultParams are OWASP's first argon2id choice (m=19 MiB, t=2, p=1).
// Measured on the 2-core server (docs/BENCHMARKS.md, BenchmarkHashPassword)
// a hash takes ~17 ms against ~35 ms for m=64 MiB t=1 p=2, with under a
// third of the memory and one core instead of two: concurrent sign-ins
// neither exhaust memory nor take both cores from running agents, and
// sign-in rate limiting bounds the rest.
func DefaultParams() Params {
	return Params{Memory: 19 * 1024, Time: 2, Threads: 1, SaltLen: 16, KeyLen: 32}
}

// Limits on parameters read back from a stored hash: a hash written with
// absurd costs (by hand, or by a future version) is refused rather than
// allowed to take the server's memory at sign-in.
const (
	maxMemory  = 1 << 20 // KiB: 1 GiB
	maxTime    = 64
	maxKeyLen  = 128
	maxSaltLen = 128
)

// CheckPassword reports whether pw is an acceptable new password.
func CheckPassword(pw string) error {
	n := utf8.RuneCountInString(pw)
	switch {
	case n < MinPasswordLen:
		return ErrPasswordTooShort
	case n > MaxPasswordLen:
		return ErrPasswordTooLong
	}
	return nil
}

// HashPassword returns pw's argon2id hash in the PHC string format
// $argon2id$v=19$m=...,t=...,p=...$salt$hash (unpadded standard base64),
// with a fresh random salt.
func HashPassword(pw string, p Params) (string, error) {
	if err := CheckPassword(pw); err != nil {
		return "", err
	}
	if p.Memory == 0 || p.Time == 0 || p.Threads == 0 || p.SaltLen < 8 || p.KeyLen < 16 {
		return "", fmt.Errorf("argon2id parameters %+v: %w", p, ErrBadValue)
	}
	salt := make([]byte, p.SaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("password salt: %w", err)
	}
	key := argon2.IDKey([]byte(pw), salt, p.Time, p.Memory, p.Threads, p.KeyLen)
	return encodeHash(p, salt, key), nil
}

func encodeHash(p Params, salt, key []byte) string {
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, p.Memory, p.Time, p.Threads, b64.EncodeToString(salt), b64.EncodeToString(key))
}

// decodeHash parses a PHC argon2id string.
func decodeHash(encoded string) (Params, []byte, []byte, error) {
	var p Params
	parts := strings.Split(encoded, "$")
	// "", "argon2id", "v=19", "m=..,t=..,p=..", salt, hash
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return p, nil, nil, ErrBadHash
	}
	if parts[2] != "v="+strconv.Itoa(argon2.Version) {
		return p, nil, nil, fmt.Errorf("version %q: %w", parts[2], ErrBadHash)
	}
	for _, kv := range strings.Split(parts[3], ",") {
		k, v, ok := strings.Cut(kv, "=")
		n, err := strconv.ParseUint(v, 10, 32)
		if !ok || err != nil {
			return p, nil, nil, fmt.Errorf("parameter %q: %w", kv, ErrBadHash)
		}
		switch k {
		case "m":
			p.Memory = uint32(n)
		case "t":
			p.Time = uint32(n)
		case "p":
			if n > 255 {
				return p, nil, nil, fmt.Errorf("parameter %q: %w", kv, ErrBadHash)
			}
			p.Threads = uint8(n)
		default:
			return p, nil, nil, fmt.Errorf("parameter %q: %w", kv, ErrBadHash)
		}
	}
	if p.Memory == 0 || p.Memory > maxMemory || p.Time == 0 || p.Time > maxTime || p.Threads == 0 {
		return p, nil, nil, fmt.Errorf("parameters out of range: %w", ErrBadHash)
	}
	b64 := base64.RawStdEncoding
	salt, err := b64.DecodeString(parts[4])
	if err != nil || len(salt) < 8 || len(salt) > maxSaltLen {
		return p, nil, nil, fmt.Errorf("salt: %w", ErrBadHash)
	}
	key, err := b64.DecodeString(parts[5])
	if err != nil || len(key) < 16 || len(key) > maxKeyLen {
		return p, nil, nil, fmt.Errorf("key: %w", ErrBadHash)
	}
	p.SaltLen, p.KeyLen = uint32(len(salt)), uint32(len(key))
	return p, salt, key, nil
}

// VerifyPassword reports whether pw matches the stored hash, comparing in
// constant time. A hash it cannot read is an error, never a match.
func VerifyPassword(encoded, pw string) (bool, error) {
	p, salt, key, err := decodeHash(encoded)
	if err != nil {
		return false, err
	}
	if len(pw) > 4*MaxPasswordLen { // bytes: at most 4 per character
		return false, nil
	}
	got := argon2.IDKey([]byte(pw), salt, p.Time, p.Memory, p.Threads, p.KeyLen)
	return subtle.ConstantTimeCompare(got, key) == 1, nil
}

// NeedsRehash reports whether a stored hash was made with other parameters
// than p (or cannot be read), so that the caller rehashes the password at
// the next successful sign-in.
func NeedsRehash(encoded string, p Params) bool {
	got, _, _, err := decodeHash(encoded)
	return err != nil || got != p
}
