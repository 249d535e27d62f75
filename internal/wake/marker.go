package wake

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// marker is the content of <dir>/<id>: where the member listens and enough
// about where it runs to tell whether this process can reach it at all.
type marker struct {
	Addr  string `json:"addr"`            // "@caduceus-wake-<id>" or "<id>.sock" (relative to dir)
	PID   int    `json:"pid"`             // for people reading the dir
	Host  string `json:"host,omitempty"`  // hostname
	Boot  string `json:"boot,omitempty"`  // kernel boot id (Linux)
	NetNS string `json:"netns,omitempty"` // network namespace (Linux)
}

func localMarker(id string, abstract bool) marker {
	m := marker{Addr: id + socketSuffix, PID: os.Getpid()}
	if abstract {
		m.Addr = abstractPref + id
	}
	m.Host, _ = os.Hostname()
	if b, err := os.ReadFile("/proc/sys/kernel/random/boot_id"); err == nil {
		m.Boot = strings.TrimSpace(string(b))
	}
	m.NetNS, _ = os.Readlink("/proc/self/ns/net")
	return m
}

type reach int

const (
	reachable   reach = iota
	unreachable       // another host or network namespace: leave it alone
	leftover          // this host before its last reboot: remove it
)

// reach tells whether the member described by o can be sent to from the
// process described by m. A data dir shared by containers or hosts holds
// markers of members no datagram can reach; taking those for dead would
// delete markers their own neighbours need.
func (m marker) reach(o marker) reach {
	if m.Boot != "" && o.Boot != "" {
		if m.Boot != o.Boot {
			if m.Host != "" && m.Host == o.Host {
				return leftover
			}
			return unreachable
		}
	} else if m.Host != o.Host {
		return unreachable
	}
	// Same kernel. Abstract addresses are scoped to a network namespace;
	// socket files are reachable from all of them.
	if strings.HasPrefix(o.Addr, "@") && m.NetNS != o.NetNS {
		return unreachable
	}
	return reachable
}

// writeMarker publishes m atomically: readers never see half a marker.
func writeMarker(dir, id string, m marker) error {
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("wake: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("wake: %w", err)
	}
	tmp := filepath.Join(dir, markerTmpPref+id+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("wake: writing marker: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, id)); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("wake: writing marker: %w", err)
	}
	return nil
}

func readMarker(dir, id string) (marker, error) {
	var m marker
	b, err := os.ReadFile(filepath.Join(dir, id))
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("wake: marker %s: %w", id, err)
	}
	return m, nil
}
