package transcript

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/event"
)

// RollbackNote tells the model of run runID which files a person rolled
// back since the session's previous run ended: the model's picture of the
// workspace is otherwise stale. It is "" when nothing was rolled back in
// between. runIDs are the session's runs, oldest first; a rollback counts
// once it is journaled after the previous run's last event and before
// this run started, so a resumed run is told the same thing again.
func RollbackNote(evs []event.Event, runIDs []string, runID string) string {
	before := map[string]bool{}
	for _, id := range runIDs {
		if id == runID {
			break
		}
		before[id] = true
	}
	var prevEnd, start int64
	for _, e := range evs {
		switch {
		case before[e.RunID]:
			prevEnd = max(prevEnd, e.ID)
		case e.RunID == runID && e.Type == event.RunStarted && start == 0:
			start = e.ID
		}
	}
	seen := map[string]bool{}
	var files []string
	more := 0
	for _, e := range evs {
		if e.Type != event.CheckpointRestored || e.RunID != "" || e.ID <= prevEnd || (start != 0 && e.ID >= start) {
			continue
		}
		var p event.CheckpointRestoredPayload
		if json.Unmarshal(e.Payload, &p) != nil {
			continue
		}
		more += max(0, p.Count-len(p.Files))
		for _, f := range p.Files {
			if !seen[f] {
				seen[f] = true
				files = append(files, f)
			}
		}
	}
	if len(files) == 0 {
		return ""
	}
	list := strings.Join(files, ", ")
	if more > 0 {
		list += fmt.Sprintf(" and %d more", more)
	}
	return "[Note from Caduceus: since your last turn the user rolled back these files in the workspace to earlier versions, " +
		"so what you wrote to them earlier may be gone; read them again before relying on their content: " + list + "]"
}
