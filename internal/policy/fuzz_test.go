package policy

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

func seedCommands(f *testing.F) {
	for _, list := range [][]string{hardDenyCommands(), dangerousCommands(), unparsedCommands(), safeCommands()} {
		for _, c := range list {
			f.Add(c)
		}
	}
	for _, c := range []string{
		"coproc rm -rf /", "x='a[$(rm -rf /)]'; echo $((x))", "echo ${x@P}", "rsync -a --delete empty/ /",
		"truncate -s 0 /etc/passwd", "let \"y=x\"", "arr[$(id)]=1", "declare -i n; n=n+1",
		"for ((i=0;i<3;i++)); do echo $i; done", "f() { f | f & }; f", "echo ${!x}", "[[ x -eq 1 ]]",
	} {
		f.Add(c)
	}
}

// FuzzDecide: whatever the command, decisions keep their shape, manual
// never allows, and a command that cannot be parsed is never allowed.
func FuzzDecide(f *testing.F) {
	seedCommands(f)
	f.Fuzz(func(t *testing.T, cmd string) {
		_, perr := parse(cmd, 0)
		for _, mode := range append(Modes(), "", "bogus") {
			d := decide(mode, execIntent(cmd))
			checkShape(t, d)
			if mode == ModeManual && d.Verdict == Allow {
				t.Fatalf("manual allowed %q", cmd)
			}
			if perr != nil && d.Verdict == Allow {
				t.Fatalf("%s: parse error %v but allowed %q", mode, perr, cmd)
			}
		}
		// The remembered pattern of a command matches it.
		in := execIntent(cmd)
		if cmd != "" && !Match(PatternFor("run_command", in), "run_command", in) {
			t.Fatalf("PatternFor(%q) does not match it", cmd)
		}
	})
}

// FuzzDecideCanonical is differential: a command and the same program
// printed back in canonical form by the parser's printer must get the same
// verdict and risk, since the checks look at the syntax tree and not at the
// spelling. A command the parser rejects is never allowed.
func FuzzDecideCanonical(f *testing.F) {
	seedCommands(f)
	f.Fuzz(func(t *testing.T, cmd string) {
		if len(cmd) > 4096 {
			return // keep each input quick; FuzzDecide covers size limits
		}
		file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
		if err != nil {
			for _, mode := range Modes() {
				if d := decide(mode, execIntent(cmd)); d.Verdict == Allow {
					t.Fatalf("%s: parser rejects %q (%v) but it was allowed", mode, cmd, err)
				}
			}
			return
		}
		if strings.ContainsFunc(cmd, func(r rune) bool { return r < ' ' && r != '\t' && r != '\n' }) {
			// The printer does not keep other control characters
			// ("rm\v$0", one word, prints as "rm $0", two), so the
			// printed form would be another command.
			return
		}
		var b strings.Builder
		if err := syntax.NewPrinter().Print(&b, file); err != nil {
			t.Skip("printer:", err)
		}
		printed := b.String()
		if strings.TrimSpace(printed) == "" {
			return // only comments: the printer drops them, leaving no command
		}
		if _, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(printed), ""); err != nil {
			// The printer's own bugs (a form feed before "&" prints as
			// a newline): its output is then unreadable, and asked.
			if d := decide(ModeOff, execIntent(printed)); d.Verdict == Allow {
				t.Fatalf("unparsable printed form %q allowed", printed)
			}
			return
		}
		if lexicalDepth(cmd) > maxDepth || lexicalDepth(printed) > maxDepth {
			return // the depth bound is lexical and spelling-dependent
		}
		for _, mode := range Modes() {
			d1 := decide(mode, execIntent(cmd))
			d2 := decide(mode, execIntent(printed))
			if d1.Verdict != d2.Verdict || d1.Risk != d2.Risk {
				t.Fatalf("%s: %q -> %+v\nprinted %q -> %+v", mode, cmd, d1, printed, d2)
			}
		}
	})
}
