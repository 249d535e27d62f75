// Command progress condenses `go test -json` for `make test`: the
// per-package lines go test prints, a line for each top-level test slower
// than -slow as it ends (so a long package shows progress), the whole
// output of every failing test, and build errors. With -record, it appends
// "seconds<TAB>package<TAB>test" for every top-level test to a file, from
// which make prints the slowest. It exits 1 when anything failed, or when
// no package reported at all (go test itself failed; its stderr says why).
//
//	go test -json ./... | go run ./e2e/progress -slow 5s -record times.txt
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// testEvent is one line of `go test -json` (cmd/test2json).
type testEvent struct {
	Action     string
	Package    string
	ImportPath string // build-output, build-fail
	Test       string
	Elapsed    float64
	Output     string
}

type key struct{ pkg, test string }

func main() {
	slow := flag.Duration("slow", 5*time.Second, "print top-level tests that take at least this long as they end")
	record := flag.String("record", "", "append the duration of every top-level test to this file")
	flag.Parse()
	var rec io.Writer = io.Discard
	if *record != "" {
		f, err := os.OpenFile(*record, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		defer f.Close()
		rec = f
	}
	ok := run(os.Stdin, os.Stdout, rec, *slow)
	if !ok {
		os.Exit(1)
	}
}

// run reads events from in and writes the condensed report to out; it
// reports whether everything passed.
func run(in io.Reader, out, rec io.Writer, slow time.Duration) bool {
	buf := map[key][]string{}
	failed, packages := false, 0
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e testEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			fmt.Fprintln(out, sc.Text()) // not an event: pass it on
			continue
		}
		k := key{e.Package, e.Test}
		switch e.Action {
		case "build-output":
			fmt.Fprint(out, e.Output)
		case "build-fail":
			failed = true
		case "output":
			if e.Test == "" {
				// Package lines: "ok pkg 1.2s", "FAIL pkg", "? pkg [no test
				// files]", panics outside a test. "PASS" adds nothing.
				if o := strings.TrimSpace(e.Output); o != "PASS" && o != "FAIL" && !strings.HasPrefix(o, "=== ") {
					fmt.Fprint(out, e.Output)
				}
				continue
			}
			buf[k] = append(buf[k], e.Output)
		case "pass", "skip", "fail":
			if e.Test == "" {
				packages++
				failed = failed || e.Action == "fail"
				continue
			}
			if e.Action == "fail" {
				failed = true
				fmt.Fprint(out, strings.Join(buf[k], ""))
			}
			delete(buf, k)
			if strings.Contains(e.Test, "/") {
				continue
			}
			fmt.Fprintf(rec, "%.2f\t%s\t%s\n", e.Elapsed, e.Package, e.Test)
			if e.Action == "pass" && time.Duration(e.Elapsed*float64(time.Second)) >= slow {
				fmt.Fprintf(out, "    %-7s %s %s (%.1fs)\n", "--- ok", shortPkg(e.Package), e.Test, e.Elapsed)
			}
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(out, "progress:", err)
		return false
	}
	// Output of tests that never ended (the binary was killed, say).
	for k, lines := range buf {
		fmt.Fprintf(out, "--- %s %s did not end:\n%s", k.pkg, k.test, strings.Join(lines, ""))
	}
	if packages == 0 {
		fmt.Fprintln(out, "progress: no package reported; see go test's errors above")
		return false
	}
	return !failed && len(buf) == 0
}

// shortPkg drops the module path.
func shortPkg(p string) string {
	return strings.TrimPrefix(p, "github.com/caduceus-dev/caduceus/")
}
