package cluster

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// The runners' "hosts": one network namespace each, joined to this host by
// a veth pair whose ends are point-to-point /32 addresses in one private
// /24 (host side .1 on every pair, namespace i .11+i). A namespace has no
// route but the one to the host side's .1, where PostgreSQL listens: the
// database is all a runner can reach. Names carry our pid, so a later run
// can tell the leftovers of a killed one (whose pid is gone) from those of
// a run still going.
const (
	nsPrefix   = "cdcct-" // namespace cdcct-<pid>-<i>
	linkPrefix = "cdc"    // veth cdc<pid>h<i> (host side), cdc<pid>n<i> (in the namespace)
)

// hostNet is the test network of this process.
type hostNet struct {
	subnet netip.Prefix
	host   netip.Addr // the host side of every pair: where PostgreSQL listens
	ns     []string
}

// pickSubnet chooses 10.231.x.0/24 with x from our pid, skipping any x this
// machine already has an address in.
func pickSubnet() netip.Prefix {
	used := map[byte]bool{}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if p, err := netip.ParsePrefix(a.String()); err == nil && p.Addr().Is4() {
				b := p.Addr().As4()
				if b[0] == 10 && b[1] == 231 {
					used[b[2]] = true
				}
			}
		}
	}
	x := byte(16 + os.Getpid()%224)
	for used[x] {
		x = 16 + (x-16+1)%224
	}
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 231, x, 0}), 24)
}

func hostAddr(subnet netip.Prefix) netip.Addr {
	b := subnet.Addr().As4()
	b[3] = 1
	return netip.AddrFrom4(b)
}

func nsAddr(subnet netip.Prefix, i int) netip.Addr {
	b := subnet.Addr().As4()
	b[3] = byte(11 + i)
	return netip.AddrFrom4(b)
}

func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// canMakeNamespaces says why this machine cannot run the test, or nil.
func canMakeNamespaces() error {
	if os.Geteuid() != 0 {
		return errors.New("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return fmt.Errorf("no ip command (Debian: iproute2): %w", err)
	}
	return nil
}

// needNamespaces skips t when namespaces cannot be made, or fails it under
// CI=true, where the acceptance test must run.
func needNamespaces(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("the cluster test needs network namespaces: %v", err)
	}
	t.Skipf("the cluster test needs network namespaces: %v", err)
}

// makeNet makes n namespaces in subnet and removes them when t ends, even
// when it fails; first it removes what a killed earlier run left.
func makeNet(t *testing.T, subnet netip.Prefix, n int) *hostNet {
	t.Helper()
	needNamespaces(t, canMakeNamespaces())
	removeLeftovers(t)
	hn := &hostNet{subnet: subnet, host: hostAddr(subnet)}
	pid := os.Getpid()
	for i := range n {
		ns := fmt.Sprintf("%s%d-%d", nsPrefix, pid, i)
		hostSide, nsSide := fmt.Sprintf("%s%dh%d", linkPrefix, pid, i), fmt.Sprintf("%s%dn%d", linkPrefix, pid, i)
		if err := ip("netns", "add", ns); err != nil {
			needNamespaces(t, err)
		}
		t.Cleanup(func() {
			// Deleting the namespace deletes its end of the pair, and with
			// it the host's end; the second delete is for a half-made pair.
			if err := ip("netns", "del", ns); err != nil {
				t.Error(err)
			}
			_ = ip("link", "del", hostSide)
		})
		hn.ns = append(hn.ns, ns)
		cidr := func(a netip.Addr) string { return a.String() + "/32" }
		for _, args := range [][]string{
			{"link", "add", hostSide, "type", "veth", "peer", "name", nsSide, "netns", ns},
			{"addr", "add", cidr(hn.host), "peer", cidr(nsAddr(subnet, i)), "dev", hostSide},
			{"link", "set", hostSide, "up"},
			{"-n", ns, "addr", "add", cidr(nsAddr(subnet, i)), "peer", cidr(hn.host), "dev", nsSide},
			{"-n", ns, "link", "set", nsSide, "up"},
			{"-n", ns, "link", "set", "lo", "up"},
		} {
			if err := ip(args...); err != nil {
				t.Fatal(err)
			}
		}
		// What isolates the "host": its only route leads to the database.
		out, err := exec.Command("ip", "-n", ns, "-4", "route").CombinedOutput()
		if want := hn.host.String() + " dev " + nsSide; err != nil || !strings.HasPrefix(strings.TrimSpace(string(out)), want) ||
			strings.Count(strings.TrimSpace(string(out)), "\n") != 0 {
			t.Fatalf("routes of %s: %q (%v), want only %q", ns, out, err, want)
		}
	}
	return hn
}

// removeLeftovers deletes the namespaces and host-side veths of earlier
// runs whose process is gone (a run killed before its cleanup).
func removeLeftovers(t *testing.T) {
	t.Helper()
	gone := func(pid string) bool {
		if _, err := strconv.Atoi(pid); err != nil {
			return false // not one of ours
		}
		_, err := os.Stat("/proc/" + pid)
		return errors.Is(err, os.ErrNotExist)
	}
	if out, err := exec.Command("ip", "netns", "list").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			if len(f) == 0 || !strings.HasPrefix(f[0], nsPrefix) {
				continue
			}
			if pid, _, ok := strings.Cut(strings.TrimPrefix(f[0], nsPrefix), "-"); ok && gone(pid) {
				t.Logf("removing namespace %s left by an earlier run", f[0])
				if err := ip("netns", "del", f[0]); err != nil {
					t.Log(err)
				}
			}
		}
	}
	ifs, err := net.Interfaces()
	if err != nil {
		return
	}
	for _, ifc := range ifs {
		rest, ok := strings.CutPrefix(ifc.Name, linkPrefix)
		if !ok {
			continue
		}
		if pid, _, ok := strings.Cut(rest, "h"); ok && gone(pid) {
			t.Logf("removing veth %s left by an earlier run", ifc.Name)
			if err := ip("link", "del", ifc.Name); err != nil {
				t.Log(err)
			}
		}
	}
}
