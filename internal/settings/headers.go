package settings

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/store"
)

// maxHeaders bounds a provider's extra headers.
const maxHeaders = 20

// headerContext binds sealed headers to their provider, apart from its
// key: the one cannot be swapped for the other.
func headerContext(id string) string { return id + "/headers" }

// setHeaders checks and seals a provider's extra headers (OpenRouter's
// HTTP-Referer and X-Title, a proxy's own credential): their values may be
// secrets, so they are stored like the key and only their names shown.
func (s *Service) setHeaders(p *store.Provider, h map[string]string) error {
	if len(h) == 0 {
		p.HeadersSealed, p.HeaderNames = "", nil
		return nil
	}
	if len(h) > maxHeaders {
		return errorf(CodeInvalidInput, "headers", "at most %d headers", maxHeaders)
	}
	canon := make(map[string]string, len(h))
	for name, v := range h {
		if !validHeaderName(name) {
			return errorf(CodeInvalidInput, "headers", "header name %q is not a valid HTTP header name", name)
		}
		if len(v) > 4096 || strings.ContainsAny(v, "\r\n\x00") {
			// The value may be a secret: the message does not repeat it.
			return errorf(CodeInvalidInput, "headers", "the value of header %s must be one line of at most 4096 characters", name)
		}
		canon[http.CanonicalHeaderKey(name)] = v
	}
	box, err := s.cfg.Keys(true)
	if err != nil {
		return errorf(CodeNoSecretKey, "headers", "headers cannot be stored: %v", err)
	}
	raw, err := json.Marshal(canon)
	if err != nil {
		return fmt.Errorf("headers: %w", err)
	}
	if p.HeadersSealed, err = box.Seal(string(raw), headerContext(p.ID)); err != nil {
		return fmt.Errorf("seal headers: %w", err)
	}
	names := make([]string, 0, len(canon))
	for name, v := range canon {
		names = append(names, name)
		if s.cfg.Redactor != nil {
			s.cfg.Redactor.Add(v)
		}
	}
	slices.Sort(names)
	p.HeaderNames = names
	return nil
}

// openHeaders opens a provider's sealed headers (nil when it has none).
func (s *Service) openHeaders(p store.Provider) (map[string]string, error) {
	if p.HeadersSealed == "" {
		return nil, nil
	}
	box, err := s.cfg.Keys(false)
	if err != nil {
		return nil, fmt.Errorf("the headers of provider %s cannot be opened: %w", p.Name, err)
	}
	raw, err := box.Open(p.HeadersSealed, headerContext(p.ID))
	if err != nil {
		return nil, fmt.Errorf("the headers of provider %s cannot be opened: %w", p.Name, err)
	}
	var h map[string]string
	if err := json.Unmarshal([]byte(raw), &h); err != nil {
		return nil, fmt.Errorf("the headers of provider %s: %w", p.Name, err)
	}
	return h, nil
}

// validHeaderName is RFC 9110's token.
func validHeaderName(n string) bool {
	if n == "" || len(n) > 128 {
		return false
	}
	for _, c := range n {
		if c > 127 || !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", c)) {
			return false
		}
	}
	return true
}
