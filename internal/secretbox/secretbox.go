// Package secretbox seals secrets stored in the database (provider API
// keys) under a key kept outside it: a key file in the data dir, or
// CADUCEUS_SECRET_KEY for deployments whose web nodes share a PostgreSQL
// database and so must share the key. A copy of the database alone (a
// backup, a dump, a stolen file) then reveals no secret.
//
// A sealed value is "v1.<key id>.<base64 nonce+ciphertext>": XChaCha20-
// Poly1305 with a random 24-byte nonce (random nonces are safe at that
// size), the key id being a short hash of the key so that a value sealed
// under another key is refused by name and a key can be rotated later.
package secretbox

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/crypto/chacha20poly1305"
)

// KeySize is the length of a key in bytes.
const KeySize = chacha20poly1305.KeySize

// EnvKey names the environment variable holding a base64 key.
const EnvKey = "CADUCEUS_SECRET_KEY"

// KeyFileName is the key file's name in the data dir.
const KeyFileName = "secret.key"

const version = "v1"

// Errors of Open. ErrOtherKey means the value was sealed under a key this
// box does not hold; ErrCorrupt that it was altered or is not a sealed
// value at all.
var (
	ErrOtherKey = errors.New("secretbox: sealed under another key")
	ErrCorrupt  = errors.New("secretbox: sealed value is damaged or was altered")
)

// Box seals and opens values under one key. Safe for concurrent use.
type Box struct {
	id string
	// derive keys Derive: a hash of the key, so a derived value reveals
	// nothing of the key itself.
	derive []byte
	forms  []string // the key as text, for redaction
	aead   interface {
		Seal(dst, nonce, plaintext, additionalData []byte) []byte
		Open(dst, nonce, ciphertext, additionalData []byte) ([]byte, error)
		NonceSize() int
	}
}

// New returns a box for a 32-byte key.
func New(key []byte) (*Box, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("secretbox: key must be %d bytes, got %d", KeySize, len(key))
	}
	aead, err := chacha20poly1305.NewX(key)
	if err != nil {
		return nil, fmt.Errorf("secretbox: %w", err)
	}
	sum := sha256.Sum256(append([]byte("caduceus secretbox key id\x00"), key...))
	forms := []string{base64.StdEncoding.EncodeToString(key), base64.RawStdEncoding.EncodeToString(key),
		base64.URLEncoding.EncodeToString(key), base64.RawURLEncoding.EncodeToString(key), hex.EncodeToString(key)}
	d := sha256.Sum256(append([]byte("caduceus secretbox derive\x00"), key...))
	return &Box{id: hex.EncodeToString(sum[:4]), forms: forms, aead: aead, derive: d[:]}, nil
}

// TextForms are the key written as text (base64 in each alphabet, hex),
// for the redactor: a command that prints the key file encoded must not
// hand the key to the model or a log.
func (b *Box) TextForms() []string { return append([]string(nil), b.forms...) }

// Derive is a secret for one purpose, named by label, derived from the
// key (hex HMAC-SHA256): every server holding the key derives the same
// one, and it changes with the key (issue 17: the signing key of a run's
// own webhook_url).
func (b *Box) Derive(label string) string {
	m := hmac.New(sha256.New, b.derive)
	m.Write([]byte(label))
	return hex.EncodeToString(m.Sum(nil))
}

// KeyID names the key (not secret: a hash prefix).
func (b *Box) KeyID() string { return b.id }

// Seal encrypts plaintext. context binds the value to where it is stored
// (a provider's id): a sealed value copied to another row does not open.
func (b *Box) Seal(plaintext, context string) (string, error) {
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("secretbox: nonce: %w", err)
	}
	ct := b.aead.Seal(nonce, nonce, []byte(plaintext), b.ad(context))
	return version + "." + b.id + "." + base64.RawURLEncoding.EncodeToString(ct), nil
}

// Open decrypts a value Seal made with the same key and context.
func (b *Box) Open(sealed, context string) (string, error) {
	v, id, body, ok := split(sealed)
	if !ok || v != version {
		return "", ErrCorrupt
	}
	if id != b.id {
		return "", fmt.Errorf("%w (key %s, this server holds key %s)", ErrOtherKey, id, b.id)
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	n := b.aead.NonceSize()
	if err != nil || len(raw) < n {
		return "", ErrCorrupt
	}
	pt, err := b.aead.Open(nil, raw[:n], raw[n:], b.ad(context))
	if err != nil {
		return "", ErrCorrupt
	}
	return string(pt), nil
}

// SealedKeyID is the id of the key a value was sealed under ("" when it
// is no sealed value).
func SealedKeyID(sealed string) string {
	_, id, _, ok := split(sealed)
	if !ok {
		return ""
	}
	return id
}

func split(s string) (v, id, body string, ok bool) {
	parts := strings.SplitN(s, ".", 3)
	if len(parts) != 3 {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}

func (b *Box) ad(context string) []byte { return []byte(version + "\x00" + context) }

// FromEnv decodes a base64 key (standard or URL alphabet, padded or not).
func FromEnv(v string) (*Box, error) {
	v = strings.TrimSpace(v)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(v); err == nil {
			if len(k) != KeySize {
				return nil, fmt.Errorf("%s must be %d bytes in base64 (got %d bytes); make one with: head -c 32 /dev/urandom | base64", EnvKey, KeySize, len(k))
			}
			return New(k)
		}
	}
	return nil, fmt.Errorf("%s is not base64; make one with: head -c 32 /dev/urandom | base64", EnvKey)
}

// LoadFile reads the key file at path; a missing file is fs.ErrNotExist.
func LoadFile(path string) (*Box, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("secret key file: %w", err)
	}
	if len(b) != KeySize {
		return nil, fmt.Errorf("secret key file %s: must hold %d bytes, holds %d", path, KeySize, len(b))
	}
	return New(b)
}

// LoadOrCreateFile reads the key file at path, creating it (mode 0600,
// random key) when it does not exist yet. The key is written to a
// temporary file and linked into place, so two processes starting at once
// end up with the same, whole key.
func LoadOrCreateFile(path string) (*Box, error) {
	box, err := LoadFile(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return box, err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("secret key file: %w", err)
	}
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	f, err := os.CreateTemp(dir, ".secret-key-*")
	if err != nil {
		return nil, fmt.Errorf("secret key file: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, werr := f.Write(key)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return nil, fmt.Errorf("secret key file: %w", werr)
	}
	// CreateTemp makes the file 0600 already.
	if err := os.Link(tmp, path); errors.Is(err, fs.ErrExist) {
		return LoadFile(path) // another process made it first
	} else if err != nil {
		return nil, fmt.Errorf("secret key file: %w", err)
	}
	return New(key)
}
