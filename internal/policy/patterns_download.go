package policy

import "strings"

// interpreter: a shell or interpreter runs what it is given, so a command
// string (sh -c, eval) is checked like a command line, and code that comes
// from a download is never run unasked.
func (a *analyzer) interpreter(name string, args []word, redirs []redirect, depth int) {
	// The program is in the options and the first operand (a command
	// string or script); later operands are only its arguments.
	code := args
	if name != "eval" {
		for i, w := range args {
			if len(w.text) < 2 || w.text[0] != '-' {
				code = args[:i+1]
				break
			}
		}
	}
	for _, w := range code {
		if downloads(w) {
			a.report(RiskDangerous, "Runs a downloaded script")
		}
	}
	if runsStdin(invocation{name: name, args: args}) {
		for _, r := range redirs {
			if downloads(r.target) {
				a.report(RiskDangerous, "Runs a downloaded script")
			}
		}
	}
	switch {
	case name == "eval":
		a.text(joinText(args), depth+1)
	case isShell(name):
		if cmd, ok := shellCommand(args); ok {
			a.text(cmd, depth+1)
		}
	}
}

// shellCommand returns the command string of "sh -c 'cmd'" (also -lc,
// -ec, --command for fish).
func shellCommand(args []word) (string, bool) {
	c := false
	for i := 0; i < len(args); i++ {
		t := args[i].text
		switch {
		case t == "--" || t == "-":
			if c && i+1 < len(args) {
				return args[i+1].text, true
			}
			return "", false
		case strings.HasPrefix(t, "--"):
			name, v, hasValue := strings.Cut(t[2:], "=")
			switch name {
			case "command":
				if hasValue {
					return v, true
				}
				if i+1 < len(args) {
					return args[i+1].text, true
				}
			case "rcfile", "init-file":
				if !hasValue {
					i++
				}
			}
		case len(t) > 1 && (t[0] == '-' || t[0] == '+'):
			for _, o := range []byte(t[1:]) {
				switch o {
				case 'c':
					c = true
				case 'o', 'O':
					i++ // -o option-name
				}
			}
		default:
			if c {
				return t, true
			}
			return "", false
		}
	}
	return "", false
}

// runsStdin reports whether a program executes the code it reads on stdin:
// a shell or interpreter with no command string and no script file.
func runsStdin(inv invocation) bool {
	switch {
	case isShell(inv.name):
		if _, ok := shellCommand(inv.args); ok {
			return false
		}
		f := flags(inv.args, "oO", "rcfile", "init-file")
		if f.has('s') {
			return true
		}
		return len(f.operands) == 0 || f.operands[0].text == "-"
	case isInterpreter(inv.name):
		code := "cme" // -c code, -m module, -e code
		if inv.name == "perl" {
			code = "eE"
		} else if inv.name == "php" {
			code = "rfBRFE"
		} else if inv.name == "node" || inv.name == "nodejs" {
			code = "ep"
		}
		f := flags(inv.args, "WXIr", "eval", "print", "require")
		for _, c := range []byte(code) {
			if f.has(c) {
				return false
			}
		}
		if f.hasLong("eval") || f.hasLong("print") {
			return false
		}
		return len(f.operands) == 0 || f.operands[0].text == "-"
	case inv.name == "source" || inv.name == ".":
		return len(inv.args) > 0 && (inv.args[0].text == "/dev/stdin" || inv.args[0].text == "-")
	}
	return false
}

// downloadPipe finds "curl ... | sh": a download piped into a program that
// runs it.
func (a *analyzer) downloadPipe(invs []invocation) {
	for i, inv := range invs {
		if !isDownloader(inv.name) {
			continue
		}
		for _, later := range invs[i+1:] {
			if runsStdin(later) {
				a.report(RiskDangerous, "Runs a downloaded script ("+inv.name+" | "+later.name+")")
				return
			}
		}
	}
}

// shellInput checks the program a shell reads on stdin when it is written
// out in the command itself: a here-document or here-string, or the
// output of echo, printf or a here-document piped in.
func (a *analyzer) shellInput(pl pipeline, invs []invocation, depth int) {
	for j, inv := range invs {
		if !isShell(inv.name) || !runsStdin(inv) {
			continue
		}
		a.literalInput(pl.cmds[j].redirs, depth)
		if j == 0 {
			continue
		}
		prev := invs[j-1]
		if prev.name == "echo" || prev.name == "printf" {
			a.text(joinText(prev.args), depth+1)
		}
		a.literalInput(pl.cmds[j-1].redirs, depth)
	}
}

func (a *analyzer) literalInput(redirs []redirect, depth int) {
	for _, r := range redirs {
		switch {
		case r.body != nil:
			a.text(*r.body, depth+1)
		case r.op == "<<<":
			a.text(r.target.text, depth+1)
		}
	}
}

// downloads reports whether a word holds a substitution that downloads.
func downloads(w word) bool {
	for _, s := range w.subs {
		if scriptDownloads(s) {
			return true
		}
	}
	return false
}

func scriptDownloads(s *script) bool {
	for _, pl := range s.pipelines {
		for _, c := range pl.cmds {
			if isDownloader(resolve(c.words).name) {
				return true
			}
		}
	}
	for _, n := range s.nested {
		if scriptDownloads(n) {
			return true
		}
	}
	return false
}
