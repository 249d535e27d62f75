// Package browser holds the browser tests: Debian's chromium, driven
// through chromedp, against a real server (harness_test.go).
package browser

import (
	"fmt"
	"os"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

// binary is `caduceus` built with -race, for the tests that run runner
// processes beside an in-process web tier.
var binary string

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
	return m.Run()
}
