package main

import (
	"strings"
	"testing"
	"time"
)

func TestRun(t *testing.T) {
	const pkg = `"Package":"github.com/caduceus-dev/caduceus/e2e/api"`
	tests := []struct {
		name    string
		in      string
		ok      bool
		want    []string // substrings of the report
		notWant []string
		rec     string
	}{
		{
			name: "pass, a slow test shown",
			in: `{"Action":"start",` + pkg + `}
{"Action":"run",` + pkg + `,"Test":"TestFast"}
{"Action":"output",` + pkg + `,"Test":"TestFast","Output":"=== RUN   TestFast\n"}
{"Action":"pass",` + pkg + `,"Test":"TestFast","Elapsed":0.01}
{"Action":"output",` + pkg + `,"Test":"TestSlow","Output":"noise\n"}
{"Action":"output",` + pkg + `,"Test":"TestSlow/sub","Output":"more noise\n"}
{"Action":"pass",` + pkg + `,"Test":"TestSlow/sub","Elapsed":6}
{"Action":"pass",` + pkg + `,"Test":"TestSlow","Elapsed":6.5}
{"Action":"output",` + pkg + `,"Output":"PASS\n"}
{"Action":"output",` + pkg + `,"Output":"ok  \tgithub.com/caduceus-dev/caduceus/e2e/api\t6.6s\n"}
{"Action":"pass",` + pkg + `,"Elapsed":6.6}`,
			ok:      true,
			want:    []string{"--- ok  e2e/api TestSlow (6.5s)", "ok  \tgithub.com/caduceus-dev/caduceus/e2e/api\t6.6s"},
			notWant: []string{"TestFast", "noise", "PASS\n", "TestSlow/sub"},
			rec:     "0.01\tgithub.com/caduceus-dev/caduceus/e2e/api\tTestFast\n6.50\tgithub.com/caduceus-dev/caduceus/e2e/api\tTestSlow\n",
		},
		{
			name: "a failing test prints its output",
			in: `{"Action":"output",` + pkg + `,"Test":"TestBad","Output":"=== RUN   TestBad\n"}
{"Action":"output",` + pkg + `,"Test":"TestBad","Output":"    x_test.go:9: boom\n"}
{"Action":"output",` + pkg + `,"Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}
{"Action":"fail",` + pkg + `,"Test":"TestBad","Elapsed":0}
{"Action":"output",` + pkg + `,"Output":"FAIL\n"}
{"Action":"output",` + pkg + `,"Output":"FAIL\tgithub.com/caduceus-dev/caduceus/e2e/api\t0.1s\n"}
{"Action":"fail",` + pkg + `,"Elapsed":0.1}`,
			want: []string{"x_test.go:9: boom", "--- FAIL: TestBad", "FAIL\tgithub.com/caduceus-dev/caduceus/e2e/api"},
		},
		{
			name: "build failure",
			in: `{"ImportPath":"github.com/caduceus-dev/caduceus/e2e/api [github.com/caduceus-dev/caduceus/e2e/api.test]","Action":"build-output","Output":"# github.com/caduceus-dev/caduceus/e2e/api\n./x_test.go:3:1: syntax error\n"}
{"ImportPath":"github.com/caduceus-dev/caduceus/e2e/api [github.com/caduceus-dev/caduceus/e2e/api.test]","Action":"build-fail"}
{"Action":"start",` + pkg + `}
{"Action":"output",` + pkg + `,"Output":"FAIL\tgithub.com/caduceus-dev/caduceus/e2e/api [build failed]\n"}
{"Action":"fail",` + pkg + `,"Elapsed":0,"FailedBuild":"x"}`,
			want: []string{"syntax error", "[build failed]"},
		},
		{
			name: "no package reported",
			in:   "go: unknown flag -rce\n",
			want: []string{"unknown flag", "no package reported"},
		},
		{
			name: "a test that never ended",
			in: `{"Action":"output",` + pkg + `,"Test":"TestHang","Output":"=== RUN   TestHang\n"}
{"Action":"output",` + pkg + `,"Output":"panic: test timed out after 10m0s\n"}
{"Action":"fail",` + pkg + `,"Elapsed":600}`,
			want: []string{"panic: test timed out", "TestHang did not end"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, rec strings.Builder
			ok := run(strings.NewReader(tc.in), &out, &rec, 5*time.Second)
			if ok != tc.ok {
				t.Errorf("ok = %v, want %v", ok, tc.ok)
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("report lacks %q:\n%s", w, out.String())
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(out.String(), w) {
					t.Errorf("report has %q:\n%s", w, out.String())
				}
			}
			if tc.rec != "" && rec.String() != tc.rec {
				t.Errorf("record %q, want %q", rec.String(), tc.rec)
			}
		})
	}
}
