package sqlite_test

import (
	"testing"

	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

// TestConformance runs the store conformance suite on SQLite files; the
// other handle on the same file is what a second process opens.
func TestConformance(t *testing.T) { storetest.Run(t, storetest.SQLite) }
