// Package browser holds the browser tests: Debian's chromium, driven
// through chromedp, against a real server (harness_test.go).
package browser

import (
	"os"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

// builds holds `caduceus` built with -race on first use: only the tests
// that run runner processes beside the page need it, so the others do not
// wait for a build.
var builds e2etest.Builds

func binary(tb testing.TB) string { return builds.Get(tb, true) }

func TestMain(m *testing.M) {
	code := m.Run()
	builds.Close()
	os.Exit(code)
}
