package journal

import (
	"context"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// appendReq is an append queued by SubmitAppend.
type appendReq struct {
	fence string
	draft func() event.Draft
	made  *event.Draft // draft's result, once called
}

// get is the draft, made on the first call: however a commit writes the
// append (and a failed attempt may be followed by another), the draft is
// made once.
func (r *appendReq) get() event.Draft {
	if r.made == nil {
		d := r.draft()
		r.made = &d
	}
	return *r.made
}

// SubmitAppend queues the append of the draft that draft returns, under
// fence (see store.Tx.AppendEvents), as Submit would an Op that appends
// it; draft is called once, in the writer goroutine, when the batch
// commits (a streamed delta keeps growing until then). Appends queued
// next to each other with the same fence are written by one AppendEvents
// call: a commit of streamed deltas of many runs is one statement, not one
// per delta. An append that cannot be written (its run's lease lost)
// fails alone, as it would on its own.
func (w *Writer) SubmitAppend(fence string, draft func() event.Draft) <-chan error {
	req := &appendReq{fence: fence, draft: draft}
	return w.submit(pending{app: req, op: req.op, done: make(chan error, 1)})
}

// op is the append as an Op of its own.
func (r *appendReq) op(tx store.Tx) error {
	_, err := tx.AppendEvents(context.Background(), r.fence, r.get())
	return err
}

// bodies turns a batch into WriteBatch bodies, merging runs of appends
// with the same fence into one body each, and returns how to map the
// bodies' outcomes back to the batch's.
func bodies(batch []pending) ([]func(store.Tx) error, func([]error) []error) {
	fns := make([]func(store.Tx) error, 0, len(batch))
	var spans [][2]int                  // the batch indexes each body serves
	merged := make([]error, len(batch)) // per-append outcomes of merged bodies
	for i := 0; i < len(batch); {
		j := i + 1
		if a := batch[i].app; a != nil {
			for j < len(batch) && batch[j].app != nil && batch[j].app.fence == a.fence {
				j++
			}
		}
		if j-i == 1 {
			fns = append(fns, batch[i].op)
		} else {
			fns = append(fns, appendAll(batch[i:j], merged[i:j]))
		}
		spans = append(spans, [2]int{i, j})
		i = j
	}
	return fns, func(errs []error) []error {
		out := make([]error, len(batch))
		for k, sp := range spans {
			for i := sp[0]; i < sp[1]; i++ {
				switch {
				case errs[k] != nil:
					out[i] = errs[k]
				case sp[1]-sp[0] > 1:
					out[i] = merged[i]
				}
			}
		}
		return out
	}
}

// appendAll is one body appending every draft of group in one call. When
// that call fails (all or nothing), each draft is appended on its own, so
// only those that cannot be written fail; their errors go to out.
func appendAll(group []pending, out []error) func(store.Tx) error {
	return func(tx store.Tx) error {
		ctx := context.Background()
		fence := group[0].app.fence
		drafts := make([]event.Draft, len(group))
		for i, p := range group {
			drafts[i] = p.app.get()
		}
		if _, err := tx.AppendEvents(ctx, fence, drafts...); err == nil {
			return nil
		}
		for i, d := range drafts {
			_, out[i] = tx.AppendEvents(ctx, fence, d)
		}
		return nil
	}
}

// appendEacher is a store that writes a batch of appends with less work
// than WriteBatch (postgres.DB: the whole transaction in one round trip).
type appendEacher interface {
	AppendEach(ctx context.Context, appends []store.Append) ([]error, error)
}

// onlyAppends is batch's appends when the batch is nothing else.
func onlyAppends(batch []pending) ([]store.Append, bool) {
	out := make([]store.Append, len(batch))
	for i, p := range batch {
		if p.app == nil {
			return nil, false
		}
		out[i] = store.Append{Fence: p.app.fence, Draft: p.app.get()}
	}
	return out, true
}
