package app

import (
	"github.com/caduceus-dev/caduceus/internal/api"
	"github.com/caduceus-dev/caduceus/internal/proctrack"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// consoleProcesses is the console's view of the in-process runner's
// process table: none (a nil interface, not a nil pointer in one) when
// runs execute in other processes.
func consoleProcesses(pt *tool.ProcessTable) api.ProcessTable {
	if pt == nil {
		return nil
	}
	return pt
}

// consoleRecords is the console's view of the process records: none where
// processes are not recorded (no /proc).
func consoleRecords(reg *proctrack.Registry) api.ProcessRecords {
	if reg == nil {
		return nil
	}
	return reg
}
