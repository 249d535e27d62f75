// Package id makes identifiers: a short type prefix and a time-sortable
// random suffix ("run_01hx..."), so ids order by creation and say what they
// name in logs and URLs.
package id

import (
	"crypto/rand"
	"encoding/binary"
	"strings"
	"time"
)

// Crockford's base32: no I, L, O, U to avoid misreading.
const alphabet = "0123456789abcdefghjkmnpqrstvwxyz"

// New returns prefix + "_" + 26 characters: 48 bits of milliseconds then 80
// random bits.
func New(prefix string) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(time.Now().UnixMilli())<<16)
	if _, err := rand.Read(b[6:]); err != nil {
		panic("crypto/rand failed: " + err.Error()) // cannot happen on supported platforms
	}
	var sb strings.Builder
	sb.Grow(len(prefix) + 27)
	sb.WriteString(prefix)
	sb.WriteByte('_')
	// 128 bits as 26 base32 digits, most significant first.
	hi, lo := binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
	for i := 25; i >= 0; i-- {
		shift := uint(i * 5)
		var v uint64
		switch {
		case shift >= 64:
			v = hi >> (shift - 64)
		case shift > 59:
			v = lo>>shift | hi<<(64-shift)
		default:
			v = lo >> shift
		}
		sb.WriteByte(alphabet[v&31])
	}
	return sb.String()
}

// Valid reports whether s looks like an id with the given prefix, so bad
// input is rejected before it reaches the store.
func Valid(prefix, s string) bool {
	rest, ok := strings.CutPrefix(s, prefix+"_")
	if !ok || len(rest) != 26 {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if !strings.ContainsRune(alphabet, rune(rest[i])) {
			return false
		}
	}
	return true
}
