package postgres

import "context"

// OpenWithoutAppendLock opens a store whose write transactions do not take
// the append lock: the design the journal must not have, for the test that
// shows what it would cost.
func OpenWithoutAppendLock(ctx context.Context, url string) (*DB, error) {
	d, err := Open(ctx, url)
	if err == nil {
		d.begin, d.lock = []string{"BEGIN"}, false
	}
	return d, err
}
