package transcript

import (
	"bytes"
	"encoding/json"

	"github.com/caduceus-dev/caduceus/internal/event"
)

// A session's runs form a tree (issue 15). A run hangs from the run that
// was the conversation's end when it was queued, except a retry or an
// edit (run.queued's version_of), which hangs from the parent of the run
// it is another version of: the children of one run are versions of one
// another. version.selected moves the end (a person switched version,
// undid or restored turns). The conversation — on screen and in the
// model's history — is the end and its ancestors. A journal without
// either is a line: every run follows the one before, as it always did.

var versionOfKey = []byte(`"version_of"`)

// Tree is the fold of a session's runs into versions.
type Tree struct {
	parent   map[string]string
	children map[string][]string // "" holds the roots
	// Leaf is the conversation's end ("" before the first run or after
	// every turn was undone).
	Leaf string
	// ends are the conversation's ends in the order they were set:
	// switching to a version shows where that branch was last left. Kept
	// as a list and searched only by a switch (EndBelow), so reading a
	// transcript stays linear in the number of runs.
	ends []string
	// LastUndo is the newest undo still restorable: the end it left
	// (From) while the conversation still ends where it put it.
	LastUndo *event.VersionSelectedPayload
}

// Versions folds the session's run.queued and version.selected events.
func Versions(evs []event.Event) *Tree {
	t := &Tree{parent: map[string]string{}, children: map[string][]string{}}
	for _, e := range evs {
		switch e.Type {
		case event.RunQueued:
			if _, seen := t.parent[e.RunID]; seen || e.RunID == "" {
				continue
			}
			// Only a retry or an edit names another run: the payloads of
			// the rest are not decoded, a session read folds them all.
			var p struct {
				VersionOf string `json:"version_of"`
			}
			if bytes.Contains(e.Payload, versionOfKey) {
				_ = json.Unmarshal(e.Payload, &p)
			}
			parent := t.Leaf
			if p.VersionOf != "" {
				if pp, ok := t.parent[p.VersionOf]; ok {
					parent = pp
				}
			}
			t.parent[e.RunID] = parent
			t.children[parent] = append(t.children[parent], e.RunID)
			t.setLeaf(e.RunID)
			t.LastUndo = nil
		case event.VersionSelected:
			var p event.VersionSelectedPayload
			if json.Unmarshal(e.Payload, &p) != nil {
				continue
			}
			if _, ok := t.parent[p.Leaf]; !ok && p.Leaf != "" {
				continue
			}
			t.setLeaf(p.Leaf)
			t.LastUndo = nil
			if p.Cause == "undo" {
				t.LastUndo = &p
			}
		}
	}
	return t
}

func (t *Tree) setLeaf(leaf string) {
	t.Leaf = leaf
	t.ends = append(t.ends, leaf)
}

// Has reports whether run is in the tree.
func (t *Tree) Has(run string) bool { _, ok := t.parent[run]; return ok }

// Parent returns run's parent ("" for a root).
func (t *Tree) Parent(run string) string { return t.parent[run] }

// Path returns run and its ancestors, oldest first: the conversation that
// ends at run.
func (t *Tree) Path(run string) []string {
	var rev []string
	for r := run; r != ""; r = t.parent[r] {
		rev = append(rev, r)
	}
	out := make([]string, len(rev))
	for i, r := range rev {
		out[len(rev)-1-i] = r
	}
	return out
}

// Siblings returns the versions run is one of, in the order they were
// made (run itself included).
func (t *Tree) Siblings(run string) []string { return t.children[t.parent[run]] }

// EndBelow returns where the conversation ends when a person switches to
// run: the end last shown at or below it, else run itself.
func (t *Tree) EndBelow(run string) string {
	for i := len(t.ends) - 1; i >= 0; i-- {
		for r := t.ends[i]; r != ""; r = t.parent[r] {
			if r == run {
				return t.ends[i]
			}
		}
	}
	return run
}

// Version says which of its versions a message is: Index (from 1) of
// Count, and the runs of every version in order.
type Version struct {
	Index int      `json:"index"`
	Count int      `json:"count"`
	Runs  []string `json:"runs"`
}

// MarkVersions sets Versions on the person's message of every run that has
// other versions, so the page can show "2 / 3" and switch.
func (t *Tree) MarkVersions(items []Item) {
	for i := range items {
		it := &items[i]
		if it.Kind != KindUser {
			continue
		}
		sib := t.Siblings(it.RunID)
		if len(sib) < 2 {
			continue
		}
		for k, r := range sib {
			if r == it.RunID {
				it.Versions = &Version{Index: k + 1, Count: len(sib), Runs: sib}
			}
		}
	}
}
