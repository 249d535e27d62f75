package terminal

// ring keeps the newest bytes written to it, at most len(buf).
type ring struct {
	buf     []byte
	start   int // index of the oldest byte
	n       int // bytes held
	wrapped bool
}

func newRing(size int) *ring { return &ring{buf: make([]byte, size)} }

func (r *ring) Write(p []byte) {
	size := len(r.buf)
	if len(p) >= size {
		copy(r.buf, p[len(p)-size:])
		r.start, r.n = 0, size
		r.wrapped = true
		return
	}
	end := (r.start + r.n) % size
	k := copy(r.buf[end:], p)
	copy(r.buf, p[k:])
	r.n += len(p)
	if r.n > size {
		r.start = (r.start + r.n - size) % size
		r.n = size
		r.wrapped = true
	}
}

// Bytes returns a copy of what is held, oldest first. Once older output
// has been dropped the copy starts after the first line break, so a
// reattached screen does not begin in the middle of a line or an escape
// sequence.
func (r *ring) Bytes() []byte {
	out := make([]byte, 0, r.n)
	if r.start+r.n <= len(r.buf) {
		out = append(out, r.buf[r.start:r.start+r.n]...)
	} else {
		out = append(out, r.buf[r.start:]...)
		out = append(out, r.buf[:r.n-(len(r.buf)-r.start)]...)
	}
	if r.wrapped {
		for i, c := range out {
			if c == '\n' {
				return out[i+1:]
			}
		}
	}
	return out
}
