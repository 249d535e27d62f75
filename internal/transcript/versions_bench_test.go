package transcript_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/transcript"
)

// benchSession is a session of n runs, each a message and an answer (the
// events a transcript read folds), with a retry of every tenth run.
func benchSession(n int) ([]event.Event, []string) {
	var evs []event.Event
	var ids []string
	var next int64
	add := func(run string, typ event.Type, p any) {
		next++
		b, _ := json.Marshal(p)
		evs = append(evs, event.Event{ID: next, RunID: run, Type: typ, TS: event.Time{Time: time.Unix(next, 0)}, Payload: b})
	}
	for i := range n {
		run := fmt.Sprintf("run_%05d", i)
		of := ""
		if i%10 == 9 {
			of = fmt.Sprintf("run_%05d", i-1)
		}
		ids = append(ids, run)
		add(run, event.RunQueued, event.RunQueuedPayload{Input: "question", VersionOf: of})
		add(run, event.MessageUser, event.MessageUserPayload{MessageID: "msg_u" + run, Content: "question"})
		add(run, event.RunStarted, event.RunStartedPayload{Attempt: 1})
		add(run, event.MessageDone, event.DonePayload{ID: "msg_a" + run, TurnID: "trn_" + run, Text: "an answer of a few words"})
		add(run, event.RunDone, event.RunDonePayload{Status: "completed"})
	}
	return evs, ids
}

// BenchmarkTranscriptRead compares what GET .../messages does with
// versions (fold the tree, then the path, then mark versions) against the
// fold of every run it did before, on a 1,000-run (2,000-message) session.
func BenchmarkTranscriptRead(b *testing.B) {
	evs, ids := benchSession(1000)
	b.Run("every run (before versions)", func(b *testing.B) {
		for b.Loop() {
			_ = transcript.FoldSession(evs, ids)
		}
	})
	b.Run("the tree alone", func(b *testing.B) {
		for b.Loop() {
			_ = transcript.Versions(evs)
		}
	})
	b.Run("version on screen", func(b *testing.B) {
		for b.Loop() {
			tr := transcript.Versions(evs)
			snap := transcript.FoldSession(evs, tr.Path(tr.Leaf))
			tr.MarkVersions(snap.Items)
		}
	})
}
