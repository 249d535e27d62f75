package policy

import (
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// deviceOperands refuses a disk device among the arguments of a tool that
// destroys what it is pointed at.
func (a *analyzer) deviceOperands(args []word) {
	for _, w := range args {
		if blockDevice(w.text) {
			a.report(RiskHardDeny, "Overwrites a disk device ("+w.text+")")
		}
	}
}

// blockDevicePrefixes are the names of whole disks and partitions under
// /dev on Linux and macOS.
func blockDevicePrefixes() []string {
	return []string{"sd", "hd", "vd", "xvd", "nvme", "mmcblk", "dm-", "md", "mapper/", "disk", "rdisk"}
}

func blockDevice(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	rest, ok := strings.CutPrefix(path.Clean(p), "/dev/")
	if !ok {
		return false
	}
	for _, pre := range blockDevicePrefixes() {
		if strings.HasPrefix(rest, pre) && len(rest) > len(pre) {
			return true
		}
	}
	return false
}

func (a *analyzer) permissions(name string, args []word) {
	f := flags(args, "", "reference", "from")
	recursive := f.has('R') || f.hasLong("recursive")
	paths := f.operands
	if !f.hasLong("reference") && len(paths) > 0 {
		paths = paths[1:] // the mode or owner
	}
	for _, w := range paths {
		if recursive && isRoot(w) {
			a.report(RiskHardDeny, "Recursive permission change on the filesystem root ("+name+")")
		}
	}
	if recursive {
		a.report(RiskDangerous, "Recursive permission change ("+name+" -R)")
		return
	}
	for _, w := range paths {
		if a.outside(w) {
			a.report(RiskDangerous, "Changes permissions outside the workspace ("+w.text+")")
		}
	}
}

func (a *analyzer) systemctl(args []word) {
	f := flags(args, "tpHMnos", "type", "property", "host", "machine", "lines", "output", "signal", "state", "root")
	if len(f.operands) == 0 {
		return // lists units
	}
	switch f.operands[0].text {
	case "status", "show", "cat", "help", "list-units", "list-unit-files", "list-sockets", "list-timers",
		"list-jobs", "list-dependencies", "list-machines", "list-paths", "is-active", "is-enabled",
		"is-failed", "is-system-running", "get-default", "show-environment":
		return
	}
	a.report(RiskDangerous, "Controls system services (systemctl "+f.operands[0].text+")")
}

// killsEverything reports whether kill targets pid -1: every process the
// user may signal, the agent's host included.
func killsEverything(args []word) bool {
	i := 0
	if i < len(args) && args[i].text != "--" && strings.HasPrefix(args[i].text, "-") {
		switch args[i].text {
		case "-s", "-n":
			i += 2
		case "-l", "-L":
			return false
		default:
			i++ // -9, -KILL, -SIGKILL
		}
	}
	for ; i < len(args); i++ {
		if args[i].text == "-1" {
			return true
		}
	}
	return false
}

// systemPackages reports whether a package manager call changes the
// system's packages (as opposed to searching or listing them).
func systemPackages(name string, args []word) bool {
	switch name {
	case "pacman":
		f := flags(args, "b", "dbpath", "root", "cachedir", "config", "arch")
		if f.has('R') || f.has('U') || f.hasLong("remove") || f.hasLong("upgrade") {
			return true
		}
		if f.has('S') || f.hasLong("sync") {
			for _, c := range []byte("silgp") {
				if f.has(c) {
					return false // search, info, list, groups, print
				}
			}
			return true
		}
		return false
	case "apt", "apt-get", "aptitude":
		ops := flags(args, "octa", "option", "config-file", "target-release", "host-architecture").operands
		return len(ops) > 0 && contains([]string{"install", "remove", "purge", "autoremove", "autopurge",
			"upgrade", "dist-upgrade", "full-upgrade", "reinstall", "build-dep", "safe-upgrade"}, ops[0].text)
	case "yum", "dnf":
		ops := flags(args, "cdex", "config", "releasever", "exclude", "setopt", "installroot").operands
		return len(ops) > 0 && contains([]string{"install", "remove", "erase", "upgrade", "update", "reinstall",
			"downgrade", "autoremove", "swap", "distro-sync", "groupinstall", "groupremove", "localinstall",
			"upgrade-minimal", "group", "module"}, ops[0].text)
	case "brew":
		ops := flags(args, "").operands
		return len(ops) > 0 && contains([]string{"install", "uninstall", "remove", "rm", "reinstall",
			"upgrade", "autoremove", "untap"}, ops[0].text)
	}
	return false
}

// redirect checks a redirection that writes.
func (a *analyzer) redirect(r redirect) {
	switch r.op {
	case ">", ">>", ">|", "&>", "&>>", "<>":
	case ">&":
		if isFD(r.target.text) {
			return
		}
	default:
		return
	}
	a.writeTarget(r.target)
}

func isFD(t string) bool {
	if t == "-" {
		return true
	}
	_, err := strconv.Atoi(t)
	return err == nil
}

// writeTarget checks a file a command writes.
func (a *analyzer) writeTarget(w word) {
	if blockDevice(w.text) {
		a.report(RiskHardDeny, "Overwrites a disk device ("+w.text+")")
		return
	}
	if a.outside(w) {
		a.report(RiskDangerous, "Writes outside the workspace ("+w.text+")")
	}
}

// copyTargets checks the destination of cp, mv and install; mv also
// removes its sources.
func (a *analyzer) copyTargets(name string, args []word) {
	f := flags(args, "tSmog", "target-directory", "suffix", "mode", "owner", "group")
	sources := f.operands
	if dir, ok := optionValue(args, 't', "target-directory", true); ok {
		a.writeTarget(word{text: dir, raw: dir})
	} else if len(sources) >= 2 {
		a.writeTarget(sources[len(sources)-1])
		sources = sources[:len(sources)-1]
	}
	if name != "mv" {
		return
	}
	for _, w := range sources {
		if a.outside(w) {
			a.report(RiskDangerous, "Moves files from outside the workspace ("+w.text+")")
		}
	}
}

// outside reports whether a path a command uses leaves the workspace. The
// command runs in the workspace; "~" and "$HOME" count as outside because
// the home directory is not known here. Other expansions are not guessed at.
func (a *analyzer) outside(w word) bool {
	if strings.HasPrefix(w.raw, "~") || w.text == "$HOME" || w.text == "${HOME}" ||
		strings.HasPrefix(w.text, "$HOME/") || strings.HasPrefix(w.text, "${HOME}/") {
		return true
	}
	if w.dynamic || w.text == "" {
		return false
	}
	if scratch(w.text) {
		return false
	}
	if a.away && !strings.HasPrefix(w.text, "/") {
		return true
	}
	return escapes(a.workspace, w.text)
}

// scratch reports whether p is a place every program may write without it
// mattering: the null device, the standard streams, temporary directories.
func scratch(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	p = path.Clean(p)
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero":
		return true
	}
	for _, dir := range []string{"/tmp", "/var/tmp", "/private/tmp", "/dev/fd"} {
		if p == dir || strings.HasPrefix(p, dir+"/") {
			return true
		}
	}
	return false
}

// escapes reports whether p (absolute, or relative to the workspace) names
// a place outside the workspace, lexically.
func escapes(workspace, p string) bool {
	ws := filepath.Clean(workspace)
	rooted := workspace != "" && filepath.IsAbs(ws)
	if filepath.IsAbs(p) {
		return !rooted || !within(ws, filepath.Clean(p))
	}
	if !rooted {
		c := filepath.Clean(p)
		return c == ".." || strings.HasPrefix(c, ".."+string(filepath.Separator))
	}
	return !within(ws, filepath.Join(ws, p))
}

func within(root, p string) bool {
	if root == string(filepath.Separator) {
		return true
	}
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator))
}

// nameArguments checks the variable names a builtin is given: a subscript
// in one ("unset 'a[$(cmd)]'") is evaluated as arithmetic, which runs the
// substitutions in it. printf and test only take a name after -v.
func (a *analyzer) nameArguments(name string, args []word) {
	afterV := name == "printf" || name == "test" || name == "["
	for i, w := range args {
		if afterV {
			v, ok := strings.CutPrefix(w.text, "-v")
			switch {
			case !ok:
				continue
			case v == "" && i+1 < len(args):
				w = args[i+1]
			default:
				w = word{text: v}
			}
		}
		if evaluatedSubscript(w.text) {
			a.report(RiskUnparsed, "Array subscript evaluated when the command runs ("+w.text+")")
		}
	}
}
