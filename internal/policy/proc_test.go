package policy

import "testing"

// Reading a process's environment, memory or command line asks in every
// mode (once or deny), however the path is spelt; ordinary /proc files do
// not.
func TestDecideProcSecrets(t *testing.T) {
	dangerous := []string{
		"cat /proc/$PPID/environ",
		"cat /proc/${PPID}/environ",
		`cat "/proc/$PPID/environ"`,
		`cat /proc/"$PPID"/environ`,
		"cat '/proc/self/environ'",
		"tr '\\0' '\\n' < /proc/1234/environ",
		"tr '\\0' '\\n' </proc/self/environ",
		"sort < /proc/$PPID/environ 2>/dev/null",
		"xargs -0 -n1 < /proc/$PPID/environ",
		"xargs -0 -a /proc/self/environ echo",
		"xargs -0 -a/proc/1/environ echo",
		"xargs -0 --arg-file=/proc/1/environ echo",
		"strings /proc/1/environ",
		"head -c 4096 /proc/self/mem",
		"dd if=/proc/1/environ of=env.txt",
		"cp /proc/1/environ env.txt",
		"cat /proc/1/cmdline",
		"cat /proc/*/environ",
		"cat /proc/[0-9]*/environ",
		"cat /proc/$(pgrep caduceus)/environ",
		"cat /proc/`pgrep caduceus`/environ",
		"cat /proc/thread-self/environ",
		"cat /proc/self/task/*/environ",
		"cat /proc/1/task/1/environ",
		"cat /proc/1/task/",
		"cat /proc//1//environ",
		"cat /proc/./1/environ",
		"cat /usr/../proc/1/environ",
		"cat ../../../../../proc/1/environ",
		"cat /proc/1/env*",
		"cat /proc/1/e?viron",
		"cat /pr?c/1/environ",
		"cat /proc/1/{environ,status}",
		"cat /proc/1/$f",
		`cat /pr\oc/1/environ`,
		`cat /p"ro"c/1/environ`,
		"cat /proc/1/root/proc/1/environ",
		"cat /proc/self/root/etc/../proc/1/environ",
		"grep -r KEY /proc/1",
		"grep -ra sk- /proc",
		"tar cf x.tar /proc/self",
		"less /proc/kcore",
		"p=/proc/$PPID/environ; cat $p",
		"for f in /proc/*/environ; do cat $f; done",
		"cd / && cat proc/1/environ",
		"cd /proc/1 && cat environ",
		"bash -c 'cat /proc/$PPID/environ'",
		"sh -c \"tr '\\\\0' '\\\\n' < /proc/$PPID/environ\"",
		"env | grep KEY; cat /proc/$PPID/environ",
		`python3 -c 'import os; print(open("/proc/%d/environ" % os.getppid()).read())'`,
		`python3 -c "import os; print(open('/proc/' + str(os.getppid()) + '/environ').read())"`,
		"ps e",
		"ps auxe",
		"ps eww -p 1",
		"gdb -p 1234",
		"gdb --pid=1234 -batch -ex 'info proc'",
		"strace -p1234",
		"ltrace -p $PPID",
		"gcore 1234",
	}
	safe := []string{
		"cat /proc/cpuinfo",
		"grep MemTotal /proc/meminfo",
		"cat /proc/loadavg /proc/uptime /proc/version",
		"cat /proc/self/status",
		"cat /proc/$$/status",
		"cat /proc/sys/kernel/hostname",
		"cat /proc/net/tcp",
		"cat /proc/cmdline",
		"nproc",
		"ps aux",
		"ps -ef",
		"ps -o pid,etime -p 1",
		"echo proc/environ",
		"cat src/proc/1/environ",
		"cat /usr/proc/1/environ",
		"go test ./internal/proc/...",
		"strace ./prog",
		"gdb ./prog",
		"env",
		"printenv",
	}
	for _, mode := range Modes() {
		t.Run(string(mode), func(t *testing.T) {
			for _, cmd := range dangerous {
				d := decide(mode, execIntent(cmd))
				checkShape(t, d)
				if d.Verdict != Ask || d.Risk != RiskDangerous || d.RuleEligible {
					t.Errorf("dangerous %q: got %+v", cmd, d)
				}
			}
			for _, cmd := range safe {
				d := decide(mode, execIntent(cmd))
				checkShape(t, d)
				want := Allow
				if mode == ModeManual {
					want = Ask
				}
				if d.Verdict != want || (want == Ask && d.Risk != RiskSideEffect) {
					t.Errorf("safe %q: got %+v, want %s", cmd, d, want)
				}
			}
		})
	}
	if d := decide(ModeSmart, execIntent("cat /proc/$PPID/environ")); d.Reason !=
		"Reads another process's environment, memory or command line, which may hold keys (/proc/$PPID/environ)" {
		t.Errorf("reason %q", d.Reason)
	}
}
