package policy

import (
	"path"
	"strings"
)

// Reading another process's secrets. /proc/<pid>/environ holds a
// process's environment (where API keys and tokens usually are),
// /proc/<pid>/mem its memory and /proc/<pid>/cmdline its arguments; the
// agent's commands run as the user Caduceus runs as, so they can read the
// server's own, and as root everyone's. Caduceus removes its secrets from
// its environment at start (internal/secret), but other processes of the
// user need not have. So a command that names such a file — in any word,
// redirection target or the command line's text (which also covers paths
// inside interpreter code, assignments and loops), with a pid, "self",
// "$PPID", "$(pgrep x)" or a glob in the pid position — is dangerous:
// asked in every mode, once or deny. So are the pid directory itself and
// /proc as a whole (a recursive grep or copy reads every file in them),
// /proc/kcore, ps showing environments (ps e) and attaching to a process
// (gdb/strace/ltrace -p, gcore). Ordinary /proc files (cpuinfo, meminfo,
// /proc/self/status, ...) stay readable.

// procSecretFiles are the per-process files that reveal secrets.
var procSecretFiles = []string{"environ", "mem", "cmdline"}

// procSystemEntries are the entries of /proc that are not a process:
// reading them reveals nothing of any process's environment or memory.
// kcore is not among them: it is the machine's memory.
var procSystemEntries = []string{
	"acpi", "asound", "bootconfig", "buddyinfo", "bus", "cgroups", "cmdline", "config.gz", "consoles",
	"cpuinfo", "crypto", "devices", "diskstats", "dma", "driver", "dynamic_debug", "execdomains", "fb",
	"filesystems", "fs", "interrupts", "iomem", "ioports", "irq", "kallsyms", "keys", "key-users", "kmsg",
	"kpagecgroup", "kpagecount", "kpageflags", "latency_stats", "loadavg", "locks", "mdstat", "meminfo",
	"misc", "modules", "mounts", "mtrr", "net", "pagetypeinfo", "partitions", "pressure", "schedstat",
	"scsi", "slabinfo", "softirqs", "stat", "swaps", "sys", "sysrq-trigger", "sysvipc", "timer_list",
	"tty", "uptime", "version", "version_signature", "vmallocinfo", "vmstat", "zoneinfo",
}

// procText checks every path in s that leads into /proc. relative is set
// when s is a word read in a directory not known here (after cd out of the
// workspace): a relative path may then be one from the root.
func (a *analyzer) procText(s string, relative bool) {
	if reason := procSecret(s); reason != "" {
		a.report(RiskDangerous, reason)
		return
	}
	if relative && s != "" && !strings.HasPrefix(s, "/") {
		if reason := procSecret("/" + s); reason != "" {
			a.report(RiskDangerous, reason)
		}
	}
}

// procSecret returns why s names a place in /proc that reveals a process's
// secrets, or "" when it names none. Every absolute path in s counts: a
// slash that does not continue a name ("/usr/proc" is not /proc) starts
// one, and so does one right after a short option it is glued to
// ("-a/proc/1/environ").
func procSecret(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] != '/' || i > 0 && isPathNameChar(s[i-1]) && !afterOption(s, i) {
			continue
		}
		end := i + 1
		for end < len(s) && !isPathEnd(s[end]) {
			end++
		}
		if reason := procPath(s[i:end]); reason != "" {
			return reason
		}
		// A later slash in the same path may start another (../proc).
	}
	return ""
}

// afterOption reports whether the name before s[i] is an option ("-a",
// "-I"), whose value a path may follow without a space.
func afterOption(s string, i int) bool {
	j := i
	for j > 0 && isPathNameChar(s[j-1]) {
		j--
	}
	return s[j] == '-' && (j == 0 || !isPathNameChar(s[j-1]))
}

// isPathNameChar reports whether c continues a file name: a slash after
// it is inside a path, not the start of one.
func isPathNameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '~'
}

// isPathEnd reports whether c ends a path in command text: blanks, quotes
// and shell operators, and the separators of lists (PATH-like, CSV,
// option=value).
func isPathEnd(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\'', '"', '`', ';', '|', '&', '<', '>', '(', ')', ',', ':', '=':
		return true
	}
	return false
}

// procPath checks one absolute path.
func procPath(p string) string {
	comps := cleanComponents(p)
	if len(comps) == 0 || !mayBe(comps[0], false, "proc") {
		return ""
	}
	shown := p
	if len(shown) > 80 {
		shown = shown[:80] + "…"
	}
	if len(comps) == 1 {
		return "Reads /proc, where the environment and memory of processes are (" + shown + ")"
	}
	pid := comps[1]
	if contains(procSystemEntries, pid) {
		return ""
	}
	if pid == "kcore" {
		return "Reads the machine's memory (" + shown + ")"
	}
	why := "Reads another process's environment, memory or command line, which may hold keys (" + shown + ")"
	rest := comps[2:]
	// /proc/<pid>/task/<tid>/ is the same per thread.
	if len(rest) > 0 && rest[0] == "task" {
		if len(rest) < 3 {
			return why
		}
		rest = rest[2:]
	}
	switch {
	case len(rest) == 0:
		// The process's directory itself: a recursive read takes environ.
		return why
	case rest[0] == "root":
		// The process's view of the filesystem root, /proc included.
		if len(rest) == 1 {
			return why
		}
		return procPath("/" + strings.Join(rest[1:], "/"))
	case mayBe(rest[0], true, append(procSecretFiles, "task", "root")...):
		return why
	}
	return ""
}

// cleanComponents splits an absolute path into its components with "."
// and ".." resolved lexically ("/x/../proc/./1" is proc, 1).
func cleanComponents(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		switch c {
		case "", ".":
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		default:
			out = append(out, c)
		}
	}
	return out
}

// mayBe reports whether the path component c may name one of names when
// the command runs: it is one of them, or a glob or brace expansion that
// may produce one, or (when dynamic counts) an expansion only known then.
func mayBe(c string, dynamic bool, names ...string) bool {
	if contains(names, c) {
		return true
	}
	if strings.ContainsAny(c, "$`") {
		return dynamic
	}
	if strings.Contains(c, "{") {
		for _, n := range names {
			if strings.Contains(c, n) {
				return true
			}
		}
	}
	if strings.ContainsAny(c, "*?[{") {
		for _, n := range names {
			// A malformed pattern ("[") matches only itself, as in bash.
			if ok, _ := path.Match(strings.NewReplacer("{", "*", "}", "*", ",", "*").Replace(c), n); ok {
				return true
			}
		}
	}
	return false
}

// psEnvironment reports whether ps is asked for processes' environments:
// the BSD-style e option (ps e, ps auxe, ps eww), given without a dash.
func psEnvironment(args []word) bool {
	for _, w := range args {
		t := w.text
		if t == "" || strings.HasPrefix(t, "-") || w.dynamic {
			continue
		}
		if strings.Trim(t, "auxwefjlrTtvsScgnhHmMLXZ") == "" && strings.Contains(t, "e") {
			return true
		}
	}
	return false
}

// attachesToProcess reports whether a debugger or tracer is pointed at a
// running process (-p <pid>, --pid), from where it reads its memory.
func attachesToProcess(name string, args []word) bool {
	if name == "gcore" {
		return true
	}
	for _, w := range args {
		t := w.text
		switch {
		case t == "-p", t == "--pid", strings.HasPrefix(t, "--pid="), strings.HasPrefix(t, "--attach"):
			return true
		case strings.HasPrefix(t, "-p") && len(t) > 2 && (t[2] >= '0' && t[2] <= '9' || t[2] == '$'):
			return true
		}
	}
	return false
}
