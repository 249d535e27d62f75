package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

// TestConformance runs the store conformance suite on SQLite files; the
// other handle on the same file is what a second process opens.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t testing.TB) (store.Store, func() store.Store) {
		path := filepath.Join(t.TempDir(), "caduceus.db")
		return openPath(t, path), func() store.Store { return openPath(t, path) }
	})
}
