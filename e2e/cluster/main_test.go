// Package cluster is the multi-host acceptance test of the PostgreSQL
// store: web nodes and runners as separate `caduceus` processes sharing
// one PostgreSQL server, the runners each in a network namespace of its
// own that reaches only the database, as runners on other hosts would;
// and the benchmarks of delivery and claims across nodes.
package cluster

import (
	"flag"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/store/postgres/pgtest"
)

var (
	// binary is built with -race for the tests; benchBinary, without, only
	// when benchmarks run.
	binary, benchBinary string
	// subnet is the namespaces' /24, chosen once: pgNet listens on its .1.
	subnet = pickSubnet()
	// pgNet is the tests' server, reachable from the namespaces; it starts
	// on the first database, after the test has made the host's address.
	pgNet = pgtest.New().ListenTCP(hostAddr(subnet), subnet)
	// pgBench is the benchmarks' server, on loopback TCP: no namespaces.
	pgBench = pgtest.New().ListenTCP(netip.MustParseAddr("127.0.0.1"))
)

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "caduceus-cluster")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	if binary, err = e2etest.BuildBinary(dir, true); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	flag.Parse()
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		if benchBinary, err = e2etest.BuildBinary(dir, false); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	code := pgNet.Main(m)
	if err := pgBench.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "pgtest:", err)
		code = max(code, 1)
	}
	return code
}

// startRunner runs `caduceus runner` on the database url, inside network
// namespace ns when it is not "" (`ip netns exec` execs the binary, so the
// process we hold and signal is the runner itself), with its own data dir:
// nothing but the database is shared with the other processes.
func startRunner(t testing.TB, bin, ns, url, ws, sp string, extra ...string) *e2etest.RunnerProc {
	t.Helper()
	args := append([]string{"runner", "--database", url, "--data-dir", t.TempDir(), "--workspace", ws, "--demo-script", sp,
		"--lease", clusterLease, "--grace", "5s", "--approval-mode", "off"}, extra...)
	cmd, name := bin, "runner"
	if ns != "" {
		cmd, args, name = "ip", append([]string{"netns", "exec", ns, bin}, args...), "runner@"+ns
	}
	var id, version string
	c, _ := e2etest.Launch(t, cmd, name, args, func(l string) bool {
		// Caduceus <version> runner <runner-id> ready
		f := strings.Fields(l)
		if len(f) == 5 && f[0] == "Caduceus" && f[2] == "runner" && f[4] == "ready" {
			version, id = f[1], f[3]
			return true
		}
		return false
	})
	if !strings.HasPrefix(id, "rnr_") {
		t.Fatalf("runner ready line has no runner id: %q", id)
	}
	if ns != "" {
		here, err1 := os.Readlink("/proc/self/ns/net")
		there, err2 := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", c.PID()))
		if err1 != nil || err2 != nil || here == there {
			t.Fatalf("runner %s is in network namespace %s, the test in %s (%v %v)", id, there, here, err1, err2)
		}
	}
	return &e2etest.RunnerProc{ID: id, Version: version, Child: c}
}

// startWeb runs a web node (`serve --runner=none`) on the database url,
// on a loopback port of this host, with its own data dir. Runs it creates
// may be retried twice, so a run whose runner died recovers.
func startWeb(t testing.TB, bin, url, ws, sp string) *e2etest.WebProc {
	t.Helper()
	return e2etest.StartServe(t, bin, t.TempDir(), ws, sp, "--runner=none", "--database", url, "--approval-mode", "off",
		"--max-retries", "2", "--retry-backoff", "200ms", "--lease", clusterLease)
}

// clusterLease is the lease of the cluster's processes. Five -race
// processes, PostgreSQL and the checkpoints' git calls share two cores
// beside the rest of make test: with 2 s a busy runner's renewal came
// late and a run went recovering with no runner dead ("started 2 times
// with no runner dying"). The kill and freeze phases wait about a lease.
const clusterLease = "4s"
