package hook

// Signing and verifying "<timestamp>.<body>" with HMAC-SHA256.

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// The headers of a signed request.
const (
	HeaderTimestamp = "X-Caduceus-Timestamp"
	HeaderSignature = "X-Caduceus-Signature"
)

// Window is how far a signed timestamp may be from the receiver's clock.
const Window = 5 * time.Minute

// Verification failures, each with the stable code an API answers with.
var (
	ErrNoSignature  = errors.New("missing or malformed X-Caduceus-Timestamp or X-Caduceus-Signature")
	ErrBadSignature = errors.New("the signature does not match")
	ErrStale        = errors.New("the timestamp is outside the five-minute window")
)

// Sign is the X-Caduceus-Signature value of body sent at ts.
func Sign(secret string, ts time.Time, body []byte) string {
	return "sha256=" + hex.EncodeToString(mac(secret, strconv.FormatInt(ts.Unix(), 10), body))
}

func mac(secret, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// Verify checks a request's timestamp and signature headers against body
// at now. The signature is compared in constant time, and checked before
// the timestamp so an unsigned caller learns nothing about the clock.
func Verify(secret, tsHeader, sigHeader string, body []byte, now time.Time) error {
	sec, err := strconv.ParseInt(strings.TrimSpace(tsHeader), 10, 64)
	hexSig, ok := strings.CutPrefix(strings.TrimSpace(sigHeader), "sha256=")
	if err != nil || !ok {
		return ErrNoSignature
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil {
		return ErrNoSignature
	}
	if !hmac.Equal(got, mac(secret, strings.TrimSpace(tsHeader), body)) {
		return ErrBadSignature
	}
	if d := now.Sub(time.Unix(sec, 0)); d > Window || d < -Window {
		return ErrStale
	}
	return nil
}
