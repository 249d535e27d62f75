package budget

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// DefaultRepeats is how many identical tool calls in a row look stuck.
const DefaultRepeats = 3

// Repeats counts identical consecutive tool calls (same tool, same
// arguments once their JSON is normalised): a model calling the same thing
// again and again with nothing changing is stuck, and spends tokens until
// a limit stops it.
type Repeats struct {
	// N is how many identical calls in a row are too many; 0 means
	// DefaultRepeats, a negative value turns detection off.
	N     int
	last  string
	count int
}

// Observe records a tool call and reports, once it has been made N times
// in a row, why the run looks stuck.
func (r *Repeats) Observe(name string, args []byte) (string, bool) {
	n := r.N
	if n == 0 {
		n = DefaultRepeats
	}
	key := name + "\x00" + normalise(args)
	if key == r.last {
		r.count++
	} else {
		r.last, r.count = key, 1
	}
	if n < 0 || r.count < n {
		return "", false
	}
	shown := normalise(args)
	if len(shown) > 200 {
		shown = shown[:200] + "…"
	}
	return fmt.Sprintf("looks stuck: called %s with the same arguments %d times in a row (%s)", name, r.count, shown), true
}

// Count is how many times in a row the last call was made.
func (r *Repeats) Count() int { return r.count }

// Reset forgets the calls seen: a person resumed the run.
func (r *Repeats) Reset() { r.last, r.count = "", 0 }

// normalise makes JSON that differs only in spacing or key order equal.
func normalise(args []byte) string {
	var v any
	if json.Unmarshal(args, &v) != nil {
		return string(bytes.TrimSpace(args))
	}
	b, err := json.Marshal(v) // maps marshal with sorted keys
	if err != nil {
		return string(args)
	}
	return string(b)
}
