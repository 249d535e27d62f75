package api

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"github.com/caduceus-dev/caduceus/internal/transcript"
)

// writeTranscript writes GET messages' answer: the bytes writeJSON writes
// for the map {activity, context, items, last_event_id, todos[, undone]}
// (encoding/json sorts a map's keys, so that is their order), but encoded
// one item at a time through a buffer. A 2,000-message transcript is about
// 1 MB: encoded whole, it is built in one buffer doubled up to that size
// and copied again into the response; this way the response is written as
// it is encoded. undone is nil when there is nothing to restore.
func writeTranscript(w http.ResponseWriter, snap transcript.Snapshot, last int64, undone any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 64<<10)
	e := &itemWriter{w: bw}
	e.enc = json.NewEncoder(&e.buf)
	e.raw(`{"activity":`)
	list(e, snap.Activity)
	e.raw(`,"context":`)
	e.value(snap.Context)
	e.raw(`,"items":`)
	list(e, snap.Items)
	e.raw(`,"last_event_id":` + strconv.FormatInt(last, 10) + `,"todos":`)
	e.value(snap.Todos)
	if undone != nil {
		e.raw(`,"undone":`)
		e.value(undone)
	}
	e.raw("}\n")
	_ = bw.Flush()
}

// itemWriter encodes values one by one as encoding/json would within a
// larger value. The first error stops it: the client sees a cut answer,
// as with any failed write.
type itemWriter struct {
	w   io.Writer
	buf bytes.Buffer
	enc *json.Encoder
	err error
}

func (e *itemWriter) raw(s string) {
	if e.err == nil {
		_, e.err = io.WriteString(e.w, s)
	}
}

// value writes v without the newline json.Encoder ends each value with.
func (e *itemWriter) value(v any) {
	if e.err != nil {
		return
	}
	e.buf.Reset()
	if e.err = e.enc.Encode(v); e.err != nil {
		return
	}
	_, e.err = e.w.Write(bytes.TrimSuffix(e.buf.Bytes(), []byte("\n")))
}

// list writes a slice as encoding/json does: null when nil, else its
// elements in brackets.
func list[T any](e *itemWriter, s []T) {
	if s == nil {
		e.raw("null")
		return
	}
	e.raw("[")
	for i := range s {
		if i > 0 {
			e.raw(",")
		}
		e.value(&s[i])
	}
	e.raw("]")
}
