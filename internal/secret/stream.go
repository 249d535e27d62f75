package secret

import (
	"strings"
	"sync"
)

// Stream redacts text that arrives in pieces, such as a command's output
// streamed live: a secret cut between two pieces is still replaced whole.
// It holds back the end of a piece while that end could be the beginning
// of a secret, and lets it go with the next piece or on Flush. Text that
// cannot start a secret (a newline, say) is never held. Safe for
// concurrent use.
type Stream struct {
	r    *Redactor
	mu   sync.Mutex
	held string
}

// Stream returns a Stream redacting with r. A nil Redactor's Stream passes
// text through.
func (r *Redactor) Stream() *Stream { return &Stream{r: r} }

// Write returns what may be shown of the text so far, redacted.
func (s *Stream) Write(text string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.r.String(s.held + text)
	k := s.r.partialSuffix(out)
	s.held = out[len(out)-k:]
	return out[:len(out)-k]
}

// Flush returns what is held back, redacted: the stream has ended.
func (s *Stream) Flush() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.r.String(s.held)
	s.held = ""
	return out
}

// partialSuffix is the length of the longest end of s that is the
// beginning, but not the whole, of a secret.
func (r *Redactor) partialSuffix(s string) int {
	if r == nil {
		return 0
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	best := 0
	for _, sec := range r.secrets {
		for k := min(len(sec)-1, len(s)); k > best; k-- {
			if strings.HasSuffix(s, sec[:k]) {
				best = k
				break
			}
		}
	}
	return best
}
