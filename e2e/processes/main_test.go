// Package processes holds the acceptance tests that start Caduceus as
// separate processes: restarts, runners killed and resumed, signals, and
// the benchmarks that compare deployments.
package processes

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/store/postgres/pgtest"
)

// binary is built once for the process tests; benchBinary, without -race,
// only when benchmarks run.
var binary, benchBinary string

// pg is the PostgreSQL server of the tests that run on both stores
// (e2etest.EachStore), started on first use.
var pg = pgtest.New()

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "caduceus-e2e")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	if binary, err = e2etest.BuildBinary(dir, true); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// Benchmarks measure the product, not the race detector: they get a
	// binary built without -race.
	flag.Parse()
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		if benchBinary, err = e2etest.BuildBinary(dir, false); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return pg.Main(m)
}
