// Package scale measures and checks the workbench at many sessions (issue
// 15): the sidebar's first page and a search through every message, at
// 1,000, 10,000 and 100,000 sessions of about 20 messages each, on both
// stores. The sessions are seeded through the store directly, in large
// transactions, so that seeding stays fast; the requests go through the
// API's handler.
package scale

import (
	"os"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/store/postgres/pgtest"
)

var pg = pgtest.New()

func TestMain(m *testing.M) { os.Exit(pg.Main(m)) }
