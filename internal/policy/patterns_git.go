package policy

import "strings"

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
