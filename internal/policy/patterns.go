package policy

import "strings"

// This file and the patterns_*.go files hold the command checks: the
// hard-deny list (never run, in any mode), the dangerous list (always ask,
// and remembered rules cannot answer for the person), and the local-network
// check smart mode asks about. This file dispatches on the program; the
// checks themselves live in patterns_delete.go, patterns_git.go,
// patterns_download.go, patterns_system.go and patterns_network.go. Each
// entry is matched on the program a simple command runs (basename, after
// wrappers) and its parsed flags, never on raw text.
//
// Hard deny (catastrophic and never what a coding task needs):
//   - rm recursive on the filesystem root or the home directory ("/", "/*",
//     "~", "$HOME", ...), and rm --no-preserve-root with any operands.
//   - find on the root or the home directory with -delete or -exec rm and
//     no test that narrows what it matches.
//   - a fork bomb: a function that calls itself through a pipe or in the
//     background from its own body (":(){ :|:& };:").
//   - writing onto a disk device (/dev/sd*, hd*, vd*, xvd*, nvme*, mmcblk*,
//     dm-*, md*, mapper/*, disk*, rdisk*): dd of=, mkfs*, mke2fs, wipefs,
//     shred, blkdiscard, a redirection, tee, cp or mv onto one.
//   - chmod, chown or chgrp recursive on the filesystem root.
//
// Dangerous (ask in every mode, no rule applies):
//   - recursive delete: rm -r/-R/--recursive; find -delete; find -exec rm;
//     rsync --delete (any --del* option), refused when its destination is
//     the root or the home directory.
//   - git push --force/-f/--force-with-lease/+refspec, --delete/-d/:refspec,
//     --mirror, --prune; git reset --hard; git clean -f (unless -n);
//     git checkout -f or with a whole-tree pathspec ("."); git restore of a
//     whole-tree pathspec (not --staged alone).
//   - running a download: curl/wget/fetch piped into a shell or interpreter
//     that reads its program from stdin; a shell, interpreter, eval or source
//     given a substitution that downloads (sh -c "$(curl ...)",
//     bash <(curl ...)).
//   - disk tools: dd, mkfs*, mke2fs, mkswap, fdisk, sfdisk, cfdisk, gdisk,
//     sgdisk, parted, wipefs, blkdiscard, mount, umount, losetup, diskutil.
//   - permission tools: chmod/chown/chgrp recursive or on a path outside the
//     workspace; setfacl.
//   - running as another user: sudo, su, doas, pkexec.
//   - power and services: shutdown, reboot, halt, poweroff, init or telinit
//     with a runlevel, systemctl (except read-only subcommands).
//   - kill -1 (every process), killall, killall5, pkill.
//   - crontab -r.
//   - system package managers installing, removing or upgrading: apt,
//     apt-get, aptitude, yum, dnf, pacman, brew.
//   - writing outside the workspace: a redirection, tee, cp, mv, install,
//     rsync or truncate whose target (or mv source) is an absolute path outside the
//     workspace, a home path (~, $HOME) or a relative path that climbs out
//     (also after cd to such a place). Scratch places (/tmp, /var/tmp,
//     /dev/null, /dev/stdout, ...) are not outside.
//   - prompt expansion (${x@P}), which runs the command substitutions in a
//     value.
//   - reading a process's secrets: a path to /proc/<pid>/environ, mem or
//     cmdline (any pid spelling: digits, self, $PPID, $(pgrep x), globs),
//     the pid directory, /proc itself, /proc/kcore; ps e; gdb, strace or
//     ltrace -p, gcore (patterns_proc.go).
//   - anything the reader cannot follow (risk unparsed_command): a parse
//     error, a program name that is only known at run time ($CMD,
//     $(...), globs, {a,b}), arithmetic that reaches a value only known at
//     run time (shell_arith.go), an indirect expansion (${!x}) or a
//     variable-name argument (unset, read, printf -v, [[ -v ]]) whose
//     subscript is evaluated.
//
// Command lines handed to other programs are checked as command lines too:
// sh/bash/zsh -c, eval, su -c, env -S, find -exec, xargs, watch, trap
// handlers, and a program written out for a shell on stdin (echo ... | sh,
// a here-document or here-string).

// finding is the worst thing a check saw in a command.
type finding struct {
	risk   string
	reason string
}

// severity orders findings; a command's decision comes from its worst one.
func severity(risk string) int {
	switch risk {
	case RiskHardDeny:
		return 4
	case RiskDangerous:
		return 3
	case RiskUnparsed:
		return 2
	case RiskNetworkPrivate:
		return 1
	}
	return 0
}

// maxParseBytes bounds the text read per decision, counting text read again
// for sh -c and eval: nested quoting could otherwise multiply the work.
const maxParseBytes = 1 << 20

type analyzer struct {
	workspace string
	worst     finding
	budget    int
	// away is set once the command changes directory to a place outside
	// the workspace or not known here: relative paths then no longer name
	// workspace files.
	away bool
}

// inspect returns the worst finding of a shell command line run in the
// workspace.
func inspect(command, workspace string) finding {
	a := &analyzer{workspace: workspace, budget: maxParseBytes}
	a.text(command, 0)
	return a.worst
}

func (a *analyzer) report(risk, reason string) {
	if severity(risk) > severity(a.worst.risk) {
		a.worst = finding{risk: risk, reason: reason}
	}
}

// text reads and checks a command line nested depth deep.
func (a *analyzer) text(src string, depth int) {
	a.budget -= len(src)
	if a.budget < 0 {
		a.report(RiskUnparsed, "Command too complex to check")
		return
	}
	// The text as written, for paths in places no word shows (assignments,
	// loops, interpreter code); the words come below, with quotes removed.
	a.procText(src, false)
	s, err := parse(src, depth)
	if err != nil {
		a.report(RiskUnparsed, "Command could not be checked ("+err.Error()+")")
		return
	}
	a.script(s, depth)
}

func (a *analyzer) script(s *script, depth int) {
	if s.forkBomb {
		a.report(RiskHardDeny, "Fork bomb")
	}
	for _, f := range s.findings {
		a.report(f.risk, f.reason)
	}
	for _, pl := range s.pipelines {
		invs := make([]invocation, len(pl.cmds))
		for i, c := range pl.cmds {
			invs[i] = resolve(c.words)
		}
		a.downloadPipe(invs)
		a.shellInput(pl, invs, depth)
		for i, c := range pl.cmds {
			for _, w := range c.words {
				a.procText(w.text, a.away)
			}
			for _, r := range c.redirs {
				a.procText(r.target.text, a.away)
				a.redirect(r)
			}
			a.invoke(invs[i], c.redirs, depth)
		}
	}
	for _, n := range s.nested {
		a.script(n, depth)
	}
}

func (a *analyzer) invoke(inv invocation, redirs []redirect, depth int) {
	if inv.elevated != "" {
		a.report(RiskDangerous, "Runs as another user ("+inv.elevated+")")
	}
	for _, s := range inv.inner {
		a.text(s, depth+1)
	}
	if inv.dynamic {
		a.report(RiskUnparsed, "The program to run is only known when the command runs")
		return
	}
	if inv.name != "" {
		a.program(inv.name, inv.args, redirs, depth)
	}
}

// program checks one program run with its arguments.
func (a *analyzer) program(name string, args []word, redirs []redirect, depth int) {
	switch {
	case name == "rm":
		a.rm(args)
	case name == "find":
		a.find(args, depth)
	case name == "git":
		a.git(args)
	case isShell(name), isInterpreter(name), name == "eval", name == "source", name == ".":
		a.interpreter(name, args, redirs, depth)
	case name == "dd":
		for _, w := range args {
			if of, ok := strings.CutPrefix(w.text, "of="); ok && blockDevice(of) {
				a.report(RiskHardDeny, "Overwrites a disk device ("+of+")")
			}
		}
		a.report(RiskDangerous, "Low-level disk tool (dd)")
	case name == "mkfs" || strings.HasPrefix(name, "mkfs.") || name == "mke2fs" || name == "mkswap":
		a.deviceOperands(args)
		a.report(RiskDangerous, "Formats a filesystem ("+name+")")
	case name == "wipefs" || name == "blkdiscard":
		a.deviceOperands(args)
		a.report(RiskDangerous, "Erases a disk ("+name+")")
	case name == "shred":
		a.deviceOperands(args)
	case contains(diskTools(), name):
		a.report(RiskDangerous, "Disk or mount tool ("+name+")")
	case name == "chmod" || name == "chown" || name == "chgrp":
		a.permissions(name, args)
	case name == "setfacl":
		a.report(RiskDangerous, "Changes access control lists (setfacl)")
	case contains(powerTools(), name):
		a.report(RiskDangerous, "Shuts down or restarts the machine ("+name+")")
	case name == "init" || name == "telinit":
		// Only with a runlevel: a project's own ./init script is not this.
		if ops := flags(args, "").operands; len(ops) == 1 && len(ops[0].text) == 1 {
			a.report(RiskDangerous, "Changes the machine's runlevel ("+name+" "+ops[0].text+")")
		}
	case name == "systemctl":
		a.systemctl(args)
	case name == "kill":
		if killsEverything(args) {
			a.report(RiskDangerous, "Kills every process it can (kill -1)")
		}
	case name == "killall" || name == "killall5" || name == "pkill":
		a.report(RiskDangerous, "Kills processes by name ("+name+")")
	case name == "ps":
		if psEnvironment(args) {
			a.report(RiskDangerous, "Shows the environment of processes, which may hold keys (ps e)")
		}
	case name == "gdb" || name == "strace" || name == "ltrace" || name == "gcore":
		if attachesToProcess(name, args) {
			a.report(RiskDangerous, "Attaches to a running process and can read its memory ("+name+")")
		}
	case name == "crontab":
		if flags(args, "u").has('r') {
			a.report(RiskDangerous, "Removes all cron jobs (crontab -r)")
		}
	case contains(packageManagers(), name):
		if systemPackages(name, args) {
			a.report(RiskDangerous, "Installs or removes system packages ("+name+")")
		}
	case name == "tee":
		for _, w := range flags(args, "").operands {
			a.writeTarget(w)
		}
	case name == "cp" || name == "mv" || name == "install":
		a.copyTargets(name, args)
	case name == "rsync":
		a.rsync(args)
	case name == "truncate":
		for _, w := range flags(args, "sr", "size", "reference").operands {
			a.writeTarget(w)
		}
	case name == "unset" || name == "read" || name == "mapfile" || name == "readarray" || name == "getopts" ||
		name == "wait" || name == "printf" || name == "test" || name == "[":
		a.nameArguments(name, args)
	case isDownloader(name):
		a.localNetwork(args)
	case name == "trap":
		// The handler is a command line run later.
		if ops := flags(args, "").operands; len(ops) > 1 {
			a.text(ops[0].text, depth+1)
		}
	case name == "alias":
		// An alias is a command line run where its name is used
		// (dash expands aliases in scripts; bash after
		// shopt -s expand_aliases).
		for _, w := range args {
			if _, value, ok := strings.Cut(w.text, "="); ok {
				a.text(value, depth+1)
			}
		}
	case name == "hash":
		if f := flags(args, "p"); f.has('p') {
			a.report(RiskUnparsed, "Makes a command name run another program (hash -p)")
		}
	case name == "watch":
		// watch runs its arguments through sh -c.
		a.text(joinText(skipOpts(args, "nd", "interval", "differences")), depth+1)
	case name == "cd" || name == "pushd":
		ops := flags(args, "").operands
		if len(ops) == 0 || ops[0].text == "-" || ops[0].dynamic || a.outside(ops[0]) {
			a.away = true
		}
	}
}

func diskTools() []string {
	return []string{"fdisk", "sfdisk", "cfdisk", "gdisk", "sgdisk", "parted", "mount", "umount", "losetup", "diskutil"}
}

func powerTools() []string {
	return []string{"shutdown", "reboot", "halt", "poweroff"}
}

func packageManagers() []string {
	return []string{"apt", "apt-get", "aptitude", "yum", "dnf", "pacman", "brew"}
}

func isShell(name string) bool {
	switch name {
	case "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh":
		return true
	}
	return false
}

func isInterpreter(name string) bool {
	switch name {
	case "perl", "ruby", "node", "nodejs", "php":
		return true
	}
	return strings.HasPrefix(name, "python") || strings.HasPrefix(name, "pypy")
}

func isDownloader(name string) bool { return name == "curl" || name == "wget" || name == "fetch" }
