package secret

import (
	"bytes"
	"encoding/json"
	"strings"
)

// JSON returns the JSON document b with every secret in its strings (keys
// included) replaced by Mask. Strings are compared decoded, so a secret
// spelt with JSON escapes is found too. A document holding no secret is
// returned as it is, byte for byte; one that does is encoded again (object
// keys then come sorted). Invalid JSON is redacted as text.
func (r *Redactor) JSON(b []byte) []byte {
	if r == nil || r.empty() {
		return b
	}
	s := string(b)
	if r.String(s) == s && !strings.Contains(s, `\`) {
		return b
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // integers beyond 2^53 stay exact
	var v any
	if err := dec.Decode(&v); err != nil {
		return []byte(r.String(s))
	}
	v, changed := r.value(v)
	if !changed {
		return b
	}
	out, err := json.Marshal(v)
	if err != nil {
		return []byte(r.String(s))
	}
	return out
}

func (r *Redactor) value(v any) (any, bool) {
	switch x := v.(type) {
	case string:
		red := r.String(x)
		return red, red != x
	case []any:
		changed := false
		for i := range x {
			var c bool
			x[i], c = r.value(x[i])
			changed = changed || c
		}
		return x, changed
	case map[string]any:
		changed := false
		out := make(map[string]any, len(x))
		for k, e := range x {
			rk := r.String(k)
			re, c := r.value(e)
			out[rk] = re
			changed = changed || c || rk != k
		}
		return out, changed
	}
	return v, false
}
