package journal

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/store"
)

type observed struct {
	mu      sync.Mutex
	commits []time.Duration
	errs    []error
	appends []time.Duration
}

func (o *observed) Committed(took time.Duration, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.commits = append(o.commits, took)
	o.errs = append(o.errs, err)
}

func (o *observed) Appended(took time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.appends = append(o.appends, took)
}

// The observer hears one Committed per transaction and one Appended per
// Op, timed from Submit: Ops queued behind a slow commit report their wait.
func TestWriterObserver(t *testing.T) {
	tests := []struct {
		name string
		fail error
	}{
		{"commits", nil},
		{"failed commits", errors.New("disk on fire")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			const hold = 50 * time.Millisecond
			cs := &countingStore{Store: nopStore{}, gate: make(chan struct{}), entered: make(chan struct{}), fail: tc.fail}
			obs := &observed{}
			w := NewWriter(cs, nil, discard, WithObserver(obs))
			w.Start()
			defer w.Close()
			op := func(store.Tx) error { return nil }
			first := w.Submit(op)
			<-cs.entered // the first commit is under way and held
			var rest []<-chan error
			for range 3 {
				rest = append(rest, w.Submit(op))
			}
			time.Sleep(hold)
			close(cs.gate)
			for _, ch := range append(rest, first) {
				if err := <-ch; (err != nil) != (tc.fail != nil) {
					t.Fatalf("outcome %v, store failure %v", err, tc.fail)
				}
			}
			w.Close() // the observer runs after the callers are told
			obs.mu.Lock()
			defer obs.mu.Unlock()
			if len(obs.commits) != 2 || len(obs.appends) != 4 {
				t.Fatalf("%d commits, %d appends observed; want 2 and 4 (batches %v)", len(obs.commits), len(obs.appends), cs.batchSizes())
			}
			if obs.commits[0] < hold {
				t.Fatalf("the held commit took %v, less than the %v it was held", obs.commits[0], hold)
			}
			for i, d := range obs.appends {
				if d < hold {
					t.Fatalf("append %d took %v, though every Op waited for the held commit", i, d)
				}
			}
			for _, err := range obs.errs {
				if (err != nil) != (tc.fail != nil) {
					t.Fatalf("committed with %v, store failure %v", err, tc.fail)
				}
			}
		})
	}
}
