package policy

import "testing"

// Every place in the syntax tree a command can hide is walked: rm -rf /
// anywhere is refused, and writes outside the workspace through any
// redirection ask, even in off mode.
func TestDecideNestedEverywhere(t *testing.T) {
	for _, cmd := range []string{
		"[[ -n $(rm -rf /) ]]", "cat <<< $(rm -rf /)", "echo ${x:-${y:-$(rm -rf /)}}", "f() (rm -rf /)",
		"! coproc rm -rf /", "x=$(rm -rf /) true", "declare x=$(rm -rf /)", "local -a arr=($(rm -rf /))",
		"for x in $(rm -rf /); do :; done", "time -p rm -rf /", "((x[$(rm -rf /)]))", "echo $[ $(rm -rf /) ]",
		"echo ${#a[$(rm -rf /)]}", "echo ${a[@]:$(rm -rf /)}", `echo "${x/$(rm -rf /)/y}"`, "[[ x =~ $(rm -rf /) ]]",
		"echo {a,$(rm -rf /)}", ": <(rm -rf /)", "rm -rf / & disown", "function f() { rm -rf /; }",
		"if rm -rf /; then :; fi", "while rm -rf /; do :; done", "case x in $(rm -rf /)) ;; esac",
		"export PROMPT_COMMAND='rm -rf /'", "a=([0]=$(rm -rf /))", "a=([$(rm -rf /)]=1)", "echo $(( $(rm -rf /) ))",
		"cat <<EOF\n$((a[$(rm -rf /)]))\nEOF", "x=1; echo ${x:$(rm -rf /)}", "trap 'rm -rf /' EXIT", "echo `rm -rf /`",
		"exec rm -rf /", "{ rm -rf /; } 2>/dev/null", "(rm -rf /) | cat", "rm -rf / |& cat", "coproc { rm -rf /; }",
	} {
		if d := decide(ModeOff, execIntent(cmd)); d.Verdict != Deny {
			t.Errorf("%q: %+v", cmd, d)
		}
	}
	for _, cmd := range []string{"exec {fd}>/etc/passwd", "exec 3>/etc/passwd", "echo x >| /etc/x", "echo x &>> /etc/x"} {
		if d := decide(ModeOff, execIntent(cmd)); d.Verdict != Ask {
			t.Errorf("%q: %+v", cmd, d)
		}
	}
}
