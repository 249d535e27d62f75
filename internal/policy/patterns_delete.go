package policy

import (
	"path"
	"strings"
)

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

// rsync: any --delete option removes whatever in the destination the
// source lacks, so syncing an empty directory onto a tree deletes the tree
// ("rsync -a --delete empty/ /").
func (a *analyzer) rsync(args []word) {
	f := flags(args, "efBTM", "rsh", "rsync-path", "filter", "exclude", "include", "exclude-from",
		"include-from", "files-from", "partial-dir", "log-file", "log-file-format", "password-file",
		"backup-dir", "suffix", "chmod", "chown", "usermap", "groupmap", "timeout", "contimeout", "bwlimit",
		"max-size", "min-size", "max-delete", "compare-dest", "copy-dest", "link-dest", "temp-dir",
		"out-format", "port", "sockopts", "info", "debug", "iconv", "checksum-choice", "compress-choice",
		"compress-level", "modify-window", "block-size", "outbuf", "stop-after", "stop-at", "skip-compress",
		"early-input", "address", "protocol", "checksum-seed", "write-batch", "only-write-batch", "read-batch",
		"remote-option", "mkpath-mode")
	deletes := false
	for _, g := range f.long {
		if strings.HasPrefix(g, "del") && !strings.HasPrefix(g, "dela") {
			deletes = true // --delete, --del, --delete-after, --delete-excluded, ...
		}
	}
	if f.dynamic {
		a.report(RiskDangerous, "Sync with options only known when it runs (rsync)")
	}
	if len(f.operands) < 2 {
		return // lists files
	}
	dest := f.operands[len(f.operands)-1]
	sources := f.operands[:len(f.operands)-1]
	if deletes {
		a.rootOrHome(dest, "Recursive delete")
		if a.outside(dest) {
			a.report(RiskDangerous, "Deletes files outside the workspace (rsync --delete to "+dest.text+")")
		}
		a.report(RiskDangerous, "Recursive delete (rsync --delete)")
	} else {
		a.writeTarget(dest)
	}
	if f.hasLong("remove-source-files") {
		for _, w := range sources {
			if a.outside(w) {
				a.report(RiskDangerous, "Moves files from outside the workspace ("+w.text+")")
			}
		}
	}
}
