// Package event defines Caduceus's one event vocabulary: the envelope every
// journaled event travels in and the set of event types the server can emit.
// The browser UI, docs/EVENTS.md and the tests are all checked against the
// list in this package, so a new event type starts here.
package event

import (
	"encoding/json"
	"time"
)

// Type names an event. Names are dotted, family first ("run.started").
type Type string

// Event is the journal envelope. ID is global and orders all events of a
// database (it is the SSE cursor); Seq is gap-free and monotonic per run.
type Event struct {
	ID        int64           `json:"id"`
	Seq       int64           `json:"seq"`
	RunID     string          `json:"run_id"`
	SessionID string          `json:"session_id"`
	Type      Type            `json:"type"`
	TS        Time            `json:"ts"`
	Terminal  bool            `json:"terminal"`
	Payload   json.RawMessage `json:"payload"`
}

// Draft is an event before the journal has given it an ID and a Seq.
type Draft struct {
	RunID     string
	SessionID string
	Type      Type
	Payload   any
}

// Time is a UTC timestamp that marshals as RFC 3339 with millisecond
// precision, the one time format of the API.
type Time struct{ time.Time }

// TimeFormat is the wire format of every timestamp in the API.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// MarshalJSON writes RFC 3339 UTC with milliseconds; the zero time is null.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return []byte(`"` + t.UTC().Format(TimeFormat) + `"`), nil
}

// UnmarshalJSON accepts RFC 3339 (any precision) or null.
func (t *Time) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		t.Time = time.Time{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return err
	}
	t.Time = v.UTC()
	return nil
}

// FromMillis converts a stored Unix-milliseconds value to a Time.
func FromMillis(ms int64) Time {
	if ms == 0 {
		return Time{}
	}
	return Time{time.UnixMilli(ms).UTC()}
}
