package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"fmt"
	"strings"
)

// TokenPrefix starts every personal API token, so that secret scanners and
// people recognise one, and the server can tell a token from a password.
const TokenPrefix = "cad_"

// tokenBytes of randomness: 256 bits.
const tokenBytes = 32

// displayLen is how many characters of a token are kept in the clear for
// display ("cad_" and 8 characters of the random part: 40 bits, which
// identify a token to its owner and leave 216 unknown).
const displayLen = len(TokenPrefix) + 8

// tokenEncoding is lower-case unpadded base32: no characters that need
// escaping in a header, URL or shell, and no case to get wrong.
var tokenEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// Token is a new personal API token. Plain is shown to its owner once and
// never stored; the store keeps Hash and Prefix.
type Token struct {
	Plain  string // "cad_" + 52 base32 characters
	Hash   string // HashToken(Plain)
	Prefix string // the first characters of Plain, for display
}

// NewToken makes a token from 32 random bytes.
func NewToken() (Token, error) {
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		return Token{}, fmt.Errorf("token: %w", err)
	}
	plain := TokenPrefix + tokenEncoding.EncodeToString(b)
	return Token{Plain: plain, Hash: HashToken(plain), Prefix: plain[:displayLen]}, nil
}

// HashToken is the stored form of a token: hex SHA-256. A slow password
// hash is not needed here: a token carries 256 random bits, so guessing
// it from its hash is out of reach however fast the hash, and a fast hash
// lets the server find a token with one indexed lookup on every request.
func HashToken(plain string) string {
	sum := sha256.Sum256([]byte(plain))
	return hex.EncodeToString(sum[:])
}

// LooksLikeToken reports whether s has a token's shape (prefix, length,
// alphabet). It says nothing about whether the token exists.
func LooksLikeToken(s string) bool {
	rest, ok := strings.CutPrefix(s, TokenPrefix)
	if !ok || len(rest) != tokenEncoding.EncodedLen(tokenBytes) {
		return false
	}
	_, err := tokenEncoding.DecodeString(rest)
	return err == nil
}
