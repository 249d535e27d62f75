//go:build !linux

package proctrack

// Without /proc a pid cannot be told from a reused one, so nothing is
// tracked (Open fails with ErrUnsupported) and nothing is ever killed.

type stat struct {
	state      byte
	pgrp       int
	startTicks uint64
}

func (s stat) gone() bool { return true }

func readStat(int) (stat, error) { return stat{}, ErrUnsupported }

func hasEnv(int, string) bool { return false }

func pids() ([]int, error) { return nil, ErrUnsupported }

func selfOwner() (Owner, error) { return Owner{}, ErrUnsupported }
