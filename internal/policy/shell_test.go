package policy

import "testing"

// Commands the hand-written reader let through in smart mode, and their
// neighbours: each must ask (or be refused) with the given risk, or run.
func TestDecideBashConstructs(t *testing.T) {
	cases := []struct {
		cmd  string
		want Verdict
		risk string
	}{
		// coproc runs its command.
		{"coproc rm -rf /", Deny, RiskHardDeny},
		{"coproc name { rm -rf /; }", Deny, RiskHardDeny},
		{"coproc rm -rf build", Ask, RiskDangerous},
		{"coproc cat", Allow, ""},

		// Arithmetic evaluates values recursively; subscripts run
		// command substitutions.
		{"x='a[$(rm -rf /)]'; echo $((x))", Deny, RiskHardDeny},
		{"x='a[$(rm -rf build)]'; echo $((x))", Ask, RiskDangerous},
		{"x='a[$(id)]'; echo $((x))", Ask, RiskUnparsed},
		{"x='a[$(id)]'; echo $(( $x ))", Ask, RiskUnparsed},
		{"x='a[$(id)]'; (( x > 1 ))", Ask, RiskUnparsed},
		{"x='a[$(id)]'; let x+1", Ask, RiskUnparsed},
		{"x='a[$(id)]'; [[ x -eq 1 ]]", Ask, RiskUnparsed},
		{"x='a[$(id)]'; [[ $x -lt 1 ]]", Ask, RiskUnparsed},
		{"x='a[$(id)]'; echo ${arr[x]}", Ask, RiskUnparsed},
		{"x='a[$(id)]'; echo ${s:x:1}", Ask, RiskUnparsed},
		{"x='y'; y='a[$(rm -rf /)]'; echo $((x))", Deny, RiskHardDeny},
		{"declare -i n; n='a[$(rm -rf /)]'", Deny, RiskHardDeny},
		{"declare -i n; n=$1", Ask, RiskUnparsed},
		{`let "y=x"`, Ask, RiskUnparsed},
		{"let y=x+1", Ask, RiskUnparsed},
		{"arr[$(id)]=1", Ask, RiskUnparsed},
		{"arr[$(rm -rf /)]=1", Deny, RiskHardDeny},
		{"echo $((x + 1))", Ask, RiskUnparsed},
		{"echo $(( $1 * 2 ))", Ask, RiskUnparsed},
		{"read n; echo $((n))", Ask, RiskUnparsed},
		{"n=1; read n; echo $((n))", Ask, RiskUnparsed},
		{"n=$(cat f); echo $((n))", Ask, RiskUnparsed},
		{"n=1; eval \"n='a[\\$(id)]'\"; echo $((n))", Ask, RiskUnparsed},
		{"for n in 1 'a[$(id)]'; do echo $((n)); done", Ask, RiskUnparsed},
		{"for n in $list; do echo $((n)); done", Ask, RiskUnparsed},
		{"while :; do echo $((n)); n=1; done", Ask, RiskUnparsed},
		{"unset 'a[$(id)]'", Ask, RiskUnparsed},
		{"printf -v 'a[$(id)]' %s x", Ask, RiskUnparsed},
		{"[[ -v 'a[$(id)]' ]]", Ask, RiskUnparsed},
		{"declare 'a[$(id)]=1'", Ask, RiskUnparsed},
		{"x='a[$(id)]'; echo ${!x}", Ask, RiskUnparsed},
		{"echo ${!ref}", Ask, RiskUnparsed},
		{"for ((i = 0; i < n; i++)); do :; done", Ask, RiskUnparsed},
		// ... and arithmetic on values known here runs.
		{"echo $((1 + 2))", Allow, ""},
		{"x=3; echo $((x * 2)) $(( $x + 1 ))", Allow, ""},
		{"x=0x1f; y=x; echo $((y))", Allow, ""},
		{"for ((i = 0; i < 3; i++)); do echo $i; done", Allow, ""},
		{"i=0; while ((i < 3)); do ((i++)); done", Allow, ""},
		{"let i=1 j=i+1", Allow, ""},
		{"arr=(a b c); echo ${arr[1]} ${#arr[@]} $((${#arr[@]} - 1))", Allow, ""},
		{"[[ $# -eq 0 ]] && echo none", Allow, ""},
		{"n=2; [[ $n -gt 1 ]] && echo big", Allow, ""},
		{"s=hello; echo ${s:1:2}", Allow, ""},
		{"declare -i n=4; n=n+1", Allow, ""},
		{"declare -A m; m[key]=1; echo ${m[key]}", Allow, ""},
		{"declare -A m; m[$(date)]=1", Allow, ""},
		{"f() { declare -A m; }; x='a[$(id)]'; m[x]=1", Ask, RiskUnparsed},
		{"x='a[$(id)]'; m[x]=1; declare -A m", Ask, RiskUnparsed},
		{"declare -A m; unset m; x='a[$(id)]'; m[x]=1", Ask, RiskUnparsed},
		{"declare -i n; read n", Ask, RiskUnparsed},
		{"declare -i n; for n in 'a[$(rm -rf /)]'; do :; done", Deny, RiskHardDeny},
		// Prompt strings and aliases are command lines run later.
		{"PS4='$(rm -rf /)'; set -x; true", Deny, RiskHardDeny},
		{"export PS4=\"\\$(rm -rf build)\"", Ask, RiskDangerous},
		{"PS4=$x; set -x", Ask, RiskUnparsed},
		{"PS4='+ $LINENO: '; set -x; make", Allow, ""},
		{"PROMPT_COMMAND='rm -rf build' bash -i", Ask, RiskDangerous},
		{"alias ll='rm -rf /'\nll", Deny, RiskHardDeny},
		{"alias ll='ls -la'", Allow, ""},
		{"hash -p /bin/rm ls; ls -rf /", Ask, RiskUnparsed},
		{"x=a; y=${!x}", Allow, ""},
		{"echo $RANDOM $((RANDOM % 6))", Allow, ""},
		{"n=0; for f in *.go; do n=$((n + 1)); done; echo \"$((n))\"", Allow, ""},
		{"n=0; n=\"$((n + 1))\"; [[ $n -ge 1 ]]", Allow, ""},

		// Prompt expansion runs the substitutions in a value.
		{"echo ${x@P}", Ask, RiskDangerous},
		{`echo "${PS1@P}"`, Ask, RiskDangerous},
		{"echo ${x@Q} ${x@U}", Allow, ""},

		// rsync --delete is a recursive delete.
		{"rsync -a --delete empty/ /", Deny, RiskHardDeny},
		{"rsync -a --delete empty/ ~/", Deny, RiskHardDeny},
		{"rsync -a --delete-after empty/ /etc/", Ask, RiskDangerous},
		{"rsync -a --del src/ /srv/www/", Ask, RiskDangerous},
		{"rsync -a --delete src/ dst/", Ask, RiskDangerous},
		{"rsync -av --delete-excluded --exclude .git src/ dst/", Ask, RiskDangerous},
		{"rsync -a src/ /etc/", Ask, RiskDangerous},
		{"rsync -a --remove-source-files /etc/x dst/", Ask, RiskDangerous},
		{"rsync -a src/ dst/", Allow, ""},
		{"rsync -a --delay-updates src/ dst/", Allow, ""},
		{"rsync -a -e 'ssh -p 22' src/ host:backup/", Allow, ""},

		// truncate writes the files it names.
		{"truncate -s 0 /etc/passwd", Ask, RiskDangerous},
		{"truncate --size=0 ~/.bashrc", Ask, RiskDangerous},
		{"truncate -s 0 /dev/sda", Deny, RiskHardDeny},
		{"truncate -s 0 build.log", Allow, ""},
		{"truncate -s 1M " + ws + "/data.bin", Allow, ""},
		{"truncate -s 0 /tmp/x.log", Allow, ""},

		// Bodies of compound commands and functions run.
		{"f() { rm -rf /; }", Deny, RiskHardDeny},
		{"until false; do rm -rf build; done", Ask, RiskDangerous},
		{"select x in a; do rm -rf build; done", Ask, RiskDangerous},
		{"time { rm -rf build; }", Ask, RiskDangerous},
		{"{ echo x; } > /etc/hosts", Ask, RiskDangerous},
		{"while read l; do echo $l; done < in > /etc/x", Ask, RiskDangerous},
		{"echo ${x:-$(rm -rf build)}", Ask, RiskDangerous},
		{"echo ${x/a/$(rm -rf build)}", Ask, RiskDangerous},
		{"[[ $(rm -rf build) == x ]]", Ask, RiskDangerous},
		{"cat >(rm -rf build)", Ask, RiskDangerous},
		{"cat <<EOF\n${x:-$(rm -rf build)}\nEOF", Ask, RiskDangerous},
		{"true && false || rm -rf build", Ask, RiskDangerous},
		{"echo a |& rm -rf build", Ask, RiskDangerous},

		// Not bash: unreadable, asked.
		{"echo ${(U)x}", Ask, RiskUnparsed},
		{"if true; then echo", Ask, RiskUnparsed},
		{"echo $((", Ask, RiskUnparsed},
		{"case x in", Ask, RiskUnparsed},
	}
	for _, c := range cases {
		t.Run(c.cmd, func(t *testing.T) {
			d := decide(ModeSmart, execIntent(c.cmd))
			checkShape(t, d)
			if d.Verdict != c.want || d.Verdict != Allow && d.Risk != c.risk {
				t.Errorf("got %+v, want %s %s", d, c.want, c.risk)
			}
		})
	}
}

// Workspace writes by truncate behave like other workspace writes: manual
// asks, smart and off run them.
func TestDecideTruncateModes(t *testing.T) {
	for _, m := range []struct {
		mode Mode
		want Verdict
	}{{ModeManual, Ask}, {ModeSmart, Allow}, {ModeOff, Allow}} {
		if d := decide(m.mode, execIntent("truncate -s 0 out.log")); d.Verdict != m.want {
			t.Errorf("%s: %+v, want %s", m.mode, d, m.want)
		}
		if d := decide(m.mode, execIntent("truncate -s 0 /etc/passwd")); d.Verdict != Ask || d.Risk != RiskDangerous {
			t.Errorf("%s outside: %+v", m.mode, d)
		}
	}
}

func TestParseDepthBound(t *testing.T) {
	for _, src := range []string{
		repeat("(", 200) + "true" + repeat(")", 200),
		repeat("$(", 200) + "true" + repeat(")", 200),
		"echo $((" + repeat("(", 300) + "1" + repeat(")", 300) + "))",
		repeat("if true; then ", 150) + "true" + repeat("; fi", 150),
		repeat("time ", 200) + "true",
	} {
		if _, err := parse(src, 0); err != errTooDeep {
			t.Errorf("%.30q...: err %v, want %v", src, err, errTooDeep)
		}
		if d := decide(ModeOff, execIntent(src)); d.Verdict != Ask || d.Risk != RiskUnparsed {
			t.Errorf("%.30q...: %+v", src, d)
		}
	}
}

func repeat(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}
