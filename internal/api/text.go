package api

import (
	"net/http"
	"net/url"
	"unicode/utf8"

	"github.com/caduceus-dev/caduceus/internal/control"
)

// validJSONText reports whether a JSON document holds only valid text:
// its bytes are UTF-8 (utf8.Valid also refuses overlong forms and encoded
// surrogates), and no \u escape in a string names an unpaired surrogate,
// which encoding/json would silently turn into U+FFFD and so store text
// the client never sent. Malformed JSON is left to the decoder.
func validJSONText(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !inString {
			inString = c == '"'
			continue
		}
		switch c {
		case '"':
			inString = false
		case '\\':
			if i+1 >= len(b) {
				return true // truncated; the decoder refuses it
			}
			if b[i+1] != 'u' {
				i++ // skip the escaped byte, which may be a quote
				continue
			}
			r, ok := hex4(b, i+2)
			if !ok {
				return true // malformed escape; the decoder refuses it
			}
			i += 5 // now at the escape's last hex digit
			switch {
			case r >= 0xDC00 && r <= 0xDFFF:
				return false // a low surrogate with no high one before it
			case r >= 0xD800 && r <= 0xDBFF:
				if i+2 >= len(b) || b[i+1] != '\\' || b[i+2] != 'u' {
					return false
				}
				lo, ok := hex4(b, i+3)
				if !ok || lo < 0xDC00 || lo > 0xDFFF {
					return false
				}
				i += 6
			}
		}
	}
	return true
}

// hex4 reads the four hex digits at b[at:] as a number.
func hex4(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[at : at+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// validQuery reports whether every query parameter, name and value, is
// valid UTF-8 once percent-decoded. A query that does not parse is left to
// the handler, which sees the parameters url.Query salvages.
func validQuery(u *url.URL) bool {
	if u == nil || u.RawQuery == "" {
		return true
	}
	q, _ := url.ParseQuery(u.RawQuery)
	for k, vs := range q {
		if !utf8.ValidString(k) {
			return false
		}
		for _, v := range vs {
			if !utf8.ValidString(v) {
				return false
			}
		}
	}
	return true
}

func writeInvalidUTF8(w http.ResponseWriter, what string) {
	writeError(w, http.StatusBadRequest, control.CodeInvalidUTF8, what+" must be valid UTF-8 text (no invalid or overlong bytes, no unpaired surrogate escapes)", nil)
}
