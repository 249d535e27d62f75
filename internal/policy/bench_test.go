package policy

import "testing"

// benchScript is a longer command an agent might send: a here-document,
// a function, a loop, arithmetic and a pipeline.
const benchScript = `set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
cat > /tmp/report.md <<END
# Report for $(git describe --tags --always)
END
count=0
for f in $(git ls-files '*.go'); do
	if grep -q 'TODO' "$f"; then
		count=$((count + 1))
		log "todo in $f"
	fi
done
[[ $count -gt 0 ]] && echo "$count files with TODOs" >> /tmp/report.md
go vet ./... 2>&1 | tee -a /tmp/report.md
go test -count=1 -run 'Test(Decide|Parse)' ./internal/... | grep -v '^ok' || true
find . -name '*.orig' -type f -print | xargs -r rm -f
echo done`

func BenchmarkDecide(b *testing.B) {
	for _, c := range []struct{ name, cmd string }{
		{"short", "go test ./..."},
		{"pipeline", "find . -name '*.go' | xargs grep -n TODO | sort | head -20"},
		{"script", benchScript},
	} {
		in := Input{Mode: ModeSmart, Tool: "run_command", Intent: execIntent(c.cmd), Workspace: ws}
		if d := Decide(in); d.Verdict != Allow {
			b.Fatalf("%s: %+v", c.name, d)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Decide(in)
			}
		})
	}
}

// BenchmarkProcScan is what the /proc check (patterns_proc.go) adds to a
// decision: a scan of the command line's text and of each word, measured
// on the commands of BenchmarkDecide (compare with its numbers from the
// same run).
func BenchmarkProcScan(b *testing.B) {
	for _, c := range []struct{ name, cmd string }{
		{"short", "go test ./..."},
		{"pipeline", "find . -name '*.go' | xargs grep -n TODO | sort | head -20"},
		{"script", benchScript},
	} {
		s, err := parse(c.cmd, 0)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				a := &analyzer{workspace: ws}
				a.procText(c.cmd, false)
				procWords(a, s)
				if a.worst.risk != "" {
					b.Fatal(a.worst)
				}
			}
		})
	}
}

// procWords scans the words and redirection targets of s as script does.
func procWords(a *analyzer, s *script) {
	for _, pl := range s.pipelines {
		for _, c := range pl.cmds {
			for _, w := range c.words {
				a.procText(w.text, false)
			}
			for _, r := range c.redirs {
				a.procText(r.target.text, false)
			}
		}
	}
	for _, n := range s.nested {
		procWords(a, n)
	}
}
