package policy

import (
	"net/netip"
	"net/url"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// This file holds the command checks: the hard-deny list (never run, in any
// mode), the dangerous list (always ask, and remembered rules cannot answer
// for the person), and the local-network check smart mode asks about. Each
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
//   - recursive delete: rm -r/-R/--recursive; find -delete; find -exec rm.
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
//   - writing outside the workspace: a redirection, tee, cp, mv or install
//     whose target (or mv source) is an absolute path outside the
//     workspace, a home path (~, $HOME) or a relative path that climbs out
//     (also after cd to such a place). Scratch places (/tmp, /var/tmp,
//     /dev/null, /dev/stdout, ...) are not outside.
//   - anything the reader cannot follow (risk unparsed_command): a parse
//     error, or a program name that is only known at run time ($CMD,
//     $(...), globs, {a,b}).
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
	for _, pl := range s.pipelines {
		invs := make([]invocation, len(pl.cmds))
		for i, c := range pl.cmds {
			invs[i] = resolve(c.words)
		}
		a.downloadPipe(invs)
		a.shellInput(pl, invs, depth)
		for i, c := range pl.cmds {
			for _, r := range c.redirs {
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
	case isDownloader(name):
		a.localNetwork(args)
	case name == "trap":
		// The handler is a command line run later.
		if ops := flags(args, "").operands; len(ops) > 1 {
			a.text(ops[0].text, depth+1)
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

// rm: recursive deletes ask; on the root or the home directory they are
// refused.
func (a *analyzer) rm(args []word) {
	f := flags(args, "")
	if f.hasLong("no-preserve-root") {
		a.report(RiskHardDeny, "Delete with --no-preserve-root")
	}
	if !f.has('r') && !f.has('R') && !f.hasLong("recursive") {
		if f.dynamic {
			a.report(RiskDangerous, "Delete with options only known when it runs")
		}
		return
	}
	for _, w := range f.operands {
		a.rootOrHome(w, "Recursive delete")
	}
	a.report(RiskDangerous, "Recursive delete")
}

// rootOrHome refuses an operand that names the whole filesystem or the
// home directory.
func (a *analyzer) rootOrHome(w word, what string) {
	switch {
	case isRoot(w):
		a.report(RiskHardDeny, what+" of the filesystem root")
	case isHome(w):
		a.report(RiskHardDeny, what+" of the home directory")
	}
}

func isRoot(w word) bool {
	t := w.text
	if !strings.HasPrefix(t, "/") {
		return false
	}
	t = strings.TrimRight(t, "*")
	return path.Clean(t) == "/"
}

// isHome reports whether w names the home directory itself (or everything
// in it, or what is above it): "~", "~/", "~/*", "$HOME", "${HOME}/.." ...
func isHome(w word) bool {
	rest, ok := homeRest(w)
	if !ok {
		return false
	}
	rest = strings.TrimRight(rest, "*")
	return path.Clean("/"+rest) == "/"
}

// homeRest splits a home-relative path ("~/x", "$HOME/x") into what follows
// the home directory.
func homeRest(w word) (string, bool) {
	if strings.HasPrefix(w.raw, "~") {
		rest := w.text[1:]
		if rest == "" || rest[0] == '/' {
			return rest, true
		}
		return "", false // ~user is another home, handled as outside
	}
	for _, h := range []string{"$HOME", "${HOME}"} {
		if rest, ok := strings.CutPrefix(w.text, h); ok && (rest == "" || rest[0] == '/') {
			return rest, true
		}
	}
	return "", false
}

// find: -delete and -exec rm remove whatever matched, often a whole tree.
func (a *analyzer) find(args []word, depth int) {
	var starts []word
	i := 0
	for i < len(args) && (args[i].text == "-H" || args[i].text == "-L" || args[i].text == "-P" ||
		strings.HasPrefix(args[i].text, "-O") || args[i].text == "-D") {
		if args[i].text == "-D" {
			i++
		}
		i++
	}
	for ; i < len(args); i++ {
		t := args[i].text
		if strings.HasPrefix(t, "-") || t == "(" || t == "!" {
			break
		}
		starts = append(starts, args[i])
	}
	deletes, filtered := false, false
	for ; i < len(args); i++ {
		switch t := args[i].text; t {
		case "-depth", "-xdev", "-mount", "-d":
		case "-mindepth", "-maxdepth":
			i++
		case "-delete":
			deletes = true
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j].text != ";" && args[j].text != "+" {
				j++
			}
			inv := resolve(args[i+1 : j])
			if inv.name == "rm" {
				deletes = true
			}
			a.invoke(inv, nil, depth)
			i = j
		default:
			filtered = true
		}
	}
	if !deletes {
		return
	}
	if !filtered {
		for _, w := range starts {
			a.rootOrHome(w, "Delete of everything")
		}
	}
	a.report(RiskDangerous, "Deletes the files find matches")
}

// git: history and work that cannot be recovered locally or on the remote.
func (a *analyzer) git(args []word) {
	rest := skipOpts(args, "Cc", "git-dir", "work-tree", "namespace", "config-env", "exec-path", "super-prefix")
	if len(rest) == 0 {
		return
	}
	sub, rest := rest[0].text, rest[1:]
	switch sub {
	case "push":
		f := flags(rest, "o", "push-option", "repo", "receive-pack", "exec")
		if f.has('f') || f.hasLong("force") || f.hasLong("force-with-lease") {
			a.report(RiskDangerous, "Force push (git push --force)")
		}
		if f.has('d') || f.hasLong("delete") {
			a.report(RiskDangerous, "Deletes a remote branch (git push --delete)")
		}
		if f.hasLong("mirror") {
			a.report(RiskDangerous, "Overwrites the remote with a mirror push (git push --mirror)")
		}
		if f.hasLong("prune") {
			a.report(RiskDangerous, "Deletes remote branches (git push --prune)")
		}
		for _, w := range f.operands {
			switch {
			case strings.HasPrefix(w.text, "+"):
				a.report(RiskDangerous, "Force push (git push +"+strings.TrimPrefix(w.text, "+")+")")
			case strings.HasPrefix(w.text, ":"):
				a.report(RiskDangerous, "Deletes a remote branch (git push "+w.text+")")
			}
		}
	case "reset":
		if flags(rest, "").hasLong("hard") {
			a.report(RiskDangerous, "Discards uncommitted changes (git reset --hard)")
		}
	case "clean":
		f := flags(rest, "e", "exclude")
		if (f.has('f') || f.hasLong("force")) && !f.has('n') && !f.hasLong("dry-run") {
			a.report(RiskDangerous, "Deletes untracked files (git clean)")
		}
	case "checkout":
		f := flags(rest, "bB", "orphan", "conflict", "pathspec-from-file")
		if f.has('f') || f.hasLong("force") {
			a.report(RiskDangerous, "Discards uncommitted changes (git checkout --force)")
		}
		if wholeTree(f.operands) {
			a.report(RiskDangerous, "Discards uncommitted changes in the whole tree (git checkout)")
		}
	case "restore":
		f := flags(rest, "s", "source", "pathspec-from-file")
		stagedOnly := (f.has('S') || f.hasLong("staged")) && !f.has('W') && !f.hasLong("worktree")
		if !stagedOnly && wholeTree(f.operands) {
			a.report(RiskDangerous, "Discards uncommitted changes in the whole tree (git restore)")
		}
	}
}

// wholeTree reports whether a pathspec names the whole working tree.
func wholeTree(operands []word) bool {
	for _, w := range operands {
		switch strings.TrimSuffix(w.text, "/") {
		case ".", ":/", ":/.", "*", ":(top)", ":":
			return true
		}
	}
	return false
}

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

// localNetwork flags curl and wget calls to this machine or the private
// network, where Caduceus's own API and cloud metadata services listen.
func (a *analyzer) localNetwork(args []word) {
	f := flags(args, "", "unix-socket", "abstract-unix-socket", "resolve", "connect-to")
	for _, o := range []string{"unix-socket", "abstract-unix-socket", "resolve", "connect-to"} {
		if f.hasLong(o) {
			a.report(RiskNetworkPrivate, "Contacts a service on this machine (--"+o+")")
			return
		}
	}
	for _, w := range args {
		if strings.HasPrefix(w.text, "-") {
			continue
		}
		if host, ok := hostOf(w.text); ok && privateHost(host) {
			a.report(RiskNetworkPrivate, "Contacts a service on this machine or the local network ("+host+")")
			return
		}
	}
}

// hostOf extracts the host of a URL, or of "host[:port][/path]" as curl
// accepts it.
func hostOf(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if s == "" || strings.ContainsAny(s, " \t\n") {
		return "", false
	}
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return "", false
	}
	return u.Hostname(), u.Hostname() != ""
}

// privateHost reports whether host is this machine, a private or
// link-local address, or a name reserved for such places.
func privateHost(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	switch {
	case h == "localhost", strings.HasSuffix(h, ".localhost"),
		strings.HasSuffix(h, ".local"),                     // mDNS
		h == "metadata", strings.HasSuffix(h, ".internal"), // metadata.google.internal, host.docker.internal
		strings.HasSuffix(h, ".home.arpa"):
		return true
	}
	addr, err := netip.ParseAddr(h)
	if err != nil {
		var ok bool
		if addr, ok = legacyIPv4(h); !ok {
			return false
		}
	}
	addr = addr.Unmap()
	if addr.IsLoopback() || addr.IsPrivate() || addr.IsLinkLocalUnicast() || addr.IsLinkLocalMulticast() ||
		addr.IsUnspecified() || addr.IsInterfaceLocalMulticast() {
		return true
	}
	// Carrier-grade NAT space, used by overlay networks such as Tailscale.
	return netip.MustParsePrefix("100.64.0.0/10").Contains(addr)
}

// legacyIPv4 reads the IPv4 spellings inet_aton accepts and URL parsers
// pass through: "127.1", "2130706433", "0x7f.0.0.1", "0177.0.0.1".
func legacyIPv4(h string) (netip.Addr, bool) {
	parts := strings.Split(h, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 0, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		nums[i] = n
	}
	// The last part fills the remaining bytes.
	var v uint64
	for i, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, false
		}
		v |= n << (24 - 8*uint(i))
	}
	last := nums[len(nums)-1]
	if last >= 1<<(32-8*uint(len(nums)-1)) {
		return netip.Addr{}, false
	}
	v |= last
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}
