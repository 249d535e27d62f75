package api_test

import (
	"os"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/store/postgres/pgtest"
)

// pg is the PostgreSQL server of this test binary's benchmarks on both
// stores (BenchmarkOpenAndBranch); it starts on first use only.
var pg = pgtest.New()

func TestMain(m *testing.M) { os.Exit(pg.Main(m)) }
