package policy

import (
	"path"
	"strings"
)

func isNameStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isNameChar(c byte) bool { return isNameStart(c) || c >= '0' && c <= '9' }

// isAssignment reports whether w is a NAME=value prefix of a command.
func isAssignment(w word) bool {
	i := 0
	for i < len(w.raw) && isNameChar(w.raw[i]) {
		i++
	}
	if i == 0 || !isNameStart(w.raw[0]) || i >= len(w.raw) {
		return false
	}
	return w.raw[i] == '=' || strings.HasPrefix(w.raw[i:], "+=")
}

// invocation is the program a simple command finally runs, once variable
// assignments and wrappers (env, nohup, sudo, ...) are
// looked through.
type invocation struct {
	// name is the basename of the program; empty when nothing runs.
	name string
	args []word
	// dynamic is set when the program is only known at run time.
	dynamic bool
	// elevated names the wrapper that runs the program as another user.
	elevated string
	// inner are command lines a wrapper hands to a shell (su -c, env -S).
	inner []string
}

// resolve looks through wrappers to the program that runs. Wrappers that
// take a command as their arguments are unwrapped; unknown ones are the
// program (a limit of a lexical check).
func resolve(words []word) invocation {
	var inv invocation
	ws := words
	for len(ws) > 0 && isAssignment(ws[0]) {
		ws = ws[1:]
	}
	for len(ws) > 0 {
		w := ws[0]
		name, ok := programName(w)
		if !ok {
			inv.dynamic = true
			inv.args = ws[1:]
			return inv
		}
		rest := ws[1:]
		switch name {
		case "sudo":
			inv.elevated = "sudo"
			ws = skipAssignments(skipOpts(rest, "ugCDhprtTUR", "user", "group", "close-from", "chdir",
				"host", "prompt", "role", "type", "command-timeout", "other-user", "chroot"))
		case "doas":
			inv.elevated = "doas"
			ws = skipOpts(rest, "uC")
		case "pkexec":
			inv.elevated = "pkexec"
			ws = skipOpts(rest, "", "user")
		case "su":
			inv.elevated = "su"
			if c, ok := optionValue(rest, 'c', "command", true); ok {
				inv.inner = append(inv.inner, c)
			}
			return inv
		case "command":
			f := flags(leadingOpts(rest), "")
			if f.has('v') || f.has('V') {
				return inv // only looks the name up
			}
			ws = skipOpts(rest, "")
		case "builtin", "nohup", "busybox", "toybox":
			ws = rest
		case "exec":
			ws = skipOpts(rest, "a")
		case "setsid":
			ws = skipOpts(rest, "")
		case "time":
			ws = skipOpts(rest, "fo", "format", "output")
		case "nice":
			ws = skipOpts(rest, "n", "adjustment")
		case "ionice":
			ws = skipOpts(rest, "cnp", "class", "classdata", "pid")
		case "stdbuf":
			ws = skipOpts(rest, "ioe", "input", "output", "error")
		case "timeout":
			ws = skipOpts(rest, "sk", "signal", "kill-after")
			if len(ws) > 0 {
				ws = ws[1:] // the duration
			}
		case "chrt", "taskset":
			ws = skipOpts(rest, "")
			if len(ws) > 0 {
				ws = ws[1:] // the priority or CPU mask
			}
		case "xargs":
			// The command runs with more arguments read from stdin.
			ws = skipOpts(rest, "adEILnPs", "arg-file", "delimiter", "max-lines", "max-args",
				"max-procs", "max-chars", "process-slot-var")
		case "env":
			if s, ok := optionValue(rest, 'S', "split-string", false); ok {
				tail := skipAssignments(skipOpts(rest, "uCS", "unset", "chdir", "split-string"))
				inv.inner = append(inv.inner, s+" "+joinText(tail))
				return inv
			}
			ws = skipAssignments(skipOpts(rest, "uC", "unset", "chdir"))
		default:
			inv.name = name
			inv.args = rest
			return inv
		}
	}
	return inv
}

// programName returns the basename of the program a command word runs. A
// word with expansions still names a known program when its last path
// component is plain text after them ("$(go env GOPATH)/bin/tool"): only
// the directory is computed.
func programName(w word) (string, bool) {
	t := w.text
	if w.dynamic || w.glob {
		lit := t[w.litFrom:]
		i := strings.LastIndexByte(lit, '/')
		if i < 0 {
			return "", false
		}
		t = lit[i:]
	}
	base := path.Base(t)
	if w.dynamic || w.glob {
		for _, c := range []byte(base) {
			if !isNameChar(c) && c != '.' && c != '-' && c != '+' {
				return "", false
			}
		}
		if base == "." || base == ".." {
			return "", false
		}
	}
	return base, true
}

// skipOpts drops the options in front of a wrapped command. withValue holds
// the short options that take a value; long names those of the long options
// that do.
func skipOpts(args []word, withValue string, long ...string) []word {
	for len(args) > 0 {
		t := args[0].text
		if t == "--" {
			return args[1:]
		}
		if len(t) < 2 || t[0] != '-' {
			return args
		}
		args = args[1:]
		if strings.HasPrefix(t, "--") {
			name, _, hasValue := strings.Cut(t[2:], "=")
			if !hasValue && contains(long, name) && len(args) > 0 {
				args = args[1:]
			}
			continue
		}
		for i := 1; i < len(t); i++ {
			if strings.IndexByte(withValue, t[i]) >= 0 {
				if i == len(t)-1 && len(args) > 0 {
					args = args[1:]
				}
				break
			}
		}
	}
	return args
}

// leadingOpts returns the options before the first operand.
func leadingOpts(args []word) []word {
	for i, w := range args {
		if w.text == "--" || len(w.text) < 2 || w.text[0] != '-' {
			return args[:i]
		}
	}
	return args
}

func skipAssignments(args []word) []word {
	for len(args) > 0 && isAssignment(args[0]) {
		args = args[1:]
	}
	return args
}

// optionValue finds the value of short option c or long option long ("-c
// cmd", "-lc cmd", "--command=cmd"). With permute, options may follow
// operands (GNU getopt); otherwise the first operand ends them.
func optionValue(args []word, c byte, long string, permute bool) (string, bool) {
	for i := 0; i < len(args); i++ {
		t := args[i].text
		if t == "--" || !permute && (len(t) < 2 || t[0] != '-') {
			return "", false
		}
		if strings.HasPrefix(t, "--") {
			name, v, hasValue := strings.Cut(t[2:], "=")
			if name == long {
				if hasValue {
					return v, true
				}
				if i+1 < len(args) {
					return args[i+1].text, true
				}
			}
			continue
		}
		if len(t) < 2 || t[0] != '-' {
			continue
		}
		if j := strings.IndexByte(t[1:], c); j >= 0 {
			if v := t[j+2:]; v != "" {
				return v, true
			}
			if i+1 < len(args) {
				return args[i+1].text, true
			}
		}
	}
	return "", false
}

func joinText(ws []word) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.text
	}
	return strings.Join(parts, " ")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// flagSet is a command's arguments split GNU-style: options may follow
// operands, and "--" ends the options.
type flagSet struct {
	short    []byte
	long     []string
	operands []word
	// dynamic is set when an option was built from an expansion ("-$F"):
	// which options it holds is only known at run time.
	dynamic bool
}

func flags(args []word, withValue string, long ...string) flagSet {
	var f flagSet
	for i := 0; i < len(args); i++ {
		w := args[i]
		t := w.text
		if t == "--" {
			f.operands = append(f.operands, args[i+1:]...)
			break
		}
		if len(t) < 2 || t[0] != '-' {
			f.operands = append(f.operands, w)
			continue
		}
		if w.dynamic {
			f.dynamic = true
		}
		if strings.HasPrefix(t, "--") {
			name, _, hasValue := strings.Cut(t[2:], "=")
			f.long = append(f.long, name)
			if !hasValue && contains(long, name) {
				i++
			}
			continue
		}
		for j := 1; j < len(t); j++ {
			f.short = append(f.short, t[j])
			if strings.IndexByte(withValue, t[j]) >= 0 {
				if j == len(t)-1 {
					i++
				}
				break
			}
		}
	}
	return f
}

func (f flagSet) has(c byte) bool {
	for _, x := range f.short {
		if x == c {
			return true
		}
	}
	return false
}

// hasLong reports whether the long option name was given, also as an
// abbreviation: GNU tools and git accept any unambiguous prefix
// ("--recur" for "--recursive").
func (f flagSet) hasLong(name string) bool {
	for _, g := range f.long {
		if g == name || len(g) >= 3 && strings.HasPrefix(name, g) {
			return true
		}
	}
	return false
}
