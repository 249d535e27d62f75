package storetest

// Scheduled jobs (issue 17, h17-jobs).

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

func sampleJob(id, name string, next time.Time) store.Job {
	return store.Job{ID: id, Name: name, Prompt: "report on " + name, ProfileID: "prf-1", Workspace: "/ws",
		ScheduleKind: "cron", ScheduleExpr: "0 9 * * 1-5", TZ: "Europe/Berlin", Enabled: true, RepeatLimit: 3,
		Overlap: "skip", Missed: "once", SessionPolicy: "new", RunExpiry: 90 * time.Second, NextFireAt: next,
		CreatedAt: at(1), UpdatedAt: at(1)}
}

func testJobsCRUD(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	if _, err := db.GetJob(ctx, "job-x"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetJob unknown: %v, want not found", err)
	}
	if got, err := db.ListJobs(ctx); err != nil || len(got) != 0 {
		t.Fatalf("ListJobs empty = %v, %v", got, err)
	}
	b := sampleJob("job-b", "nightly", at(5000))
	a := sampleJob("job-a", "morning", time.Time{})
	a.Enabled, a.ScheduleKind, a.ScheduleExpr, a.TZ, a.SessionPolicy = false, "interval", "every 2h", "", "accumulate"
	for _, j := range []store.Job{b, a} {
		write(t, db, func(tx store.Tx) error { return tx.InsertJob(ctx, j) })
	}
	if got, err := db.GetJob(ctx, "job-b"); err != nil || !reflect.DeepEqual(got, b) {
		t.Fatalf("GetJob = %+v, %v; want %+v", got, err, b)
	}
	all, err := db.ListJobs(ctx)
	if err != nil || len(all) != 2 || !reflect.DeepEqual(all[0], a) || !reflect.DeepEqual(all[1], b) {
		t.Fatalf("ListJobs = %+v, %v; want by name", all, err)
	}
	// UpdateJob writes the settings but not the fire count, last run or
	// session, which only claims and RecordJobRun change.
	b2 := b
	b2.Name, b2.Prompt, b2.Enabled, b2.Overlap, b2.Missed, b2.RunExpiry, b2.NextFireAt, b2.UpdatedAt =
		"nightly check", "check deps", false, "replace", "skip", 0, at(9000), at(7)
	b2.FireCount, b2.LastRunID, b2.SessionID = 99, "run-ignored", "ses-ignored"
	write(t, db, func(tx store.Tx) error { return tx.UpdateJob(ctx, b2, b.NextFireAt) })
	want := b2
	want.FireCount, want.LastRunID, want.SessionID = 0, "", ""
	if got, err := db.GetJob(ctx, "job-b"); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("GetJob after update = %+v, %v; want %+v", got, err, want)
	}
	err = db.Write(ctx, func(tx store.Tx) error { return tx.UpdateJob(ctx, sampleJob("job-x", "x", time.Time{}), time.Time{}) })
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("UpdateJob unknown: %v, want not found", err)
	}
	// An update based on a next fire time a claim has since moved is
	// refused and changes nothing.
	stale := want
	stale.Name = "stale"
	err = db.Write(ctx, func(tx store.Tx) error { return tx.UpdateJob(ctx, stale, b.NextFireAt) })
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("UpdateJob with a stale next fire time: %v, want conflict", err)
	}
	if got, _ := db.GetJob(ctx, "job-b"); got.Name != want.Name {
		t.Fatalf("a refused update changed the job: %+v", got)
	}

	// A recorded run becomes the last run, with its status read from the
	// run; an accumulating job keeps its session.
	addSession(t, db, "ses-1", t0)
	addRun(t, db, store.Run{ID: "run-1", SessionID: "ses-1", Status: run.Queued})
	write(t, db, func(tx store.Tx) error {
		return tx.RecordJobRun(ctx, store.JobRun{JobID: "job-a", RunID: "run-1", SessionID: "ses-1", FireAt: at(3000)})
	})
	write(t, db, func(tx store.Tx) error {
		return tx.RecordJobRun(ctx, store.JobRun{JobID: "job-b", RunID: "run-2", SessionID: "ses-2", FireAt: at(4000), Manual: true})
	})
	ga, _ := db.GetJob(ctx, "job-a")
	gb, _ := db.GetJob(ctx, "job-b")
	if ga.LastRunID != "run-1" || ga.LastRunStatus != run.Queued || ga.SessionID != "ses-1" {
		t.Fatalf("job a after run = %+v", ga)
	}
	if gb.LastRunID != "run-2" || gb.LastRunStatus != "" || gb.SessionID != "" {
		t.Fatalf("job b (new session per run, run unknown) after run = %+v", gb)
	}
	write(t, db, func(tx store.Tx) error {
		return tx.RecordJobRun(ctx, store.JobRun{JobID: "job-a", RunID: "run-3", SessionID: "ses-1", FireAt: at(5000)})
	})
	runs, err := db.JobRuns(ctx, "job-a", 10)
	if err != nil || len(runs) != 2 || runs[0].RunID != "run-3" || runs[1] != (store.JobRun{JobID: "job-a", RunID: "run-1", SessionID: "ses-1", FireAt: at(3000)}) {
		t.Fatalf("JobRuns = %+v, %v", runs, err)
	}
	if runs, err := db.JobRuns(ctx, "job-a", 1); err != nil || len(runs) != 1 {
		t.Fatalf("JobRuns limit 1 = %+v, %v", runs, err)
	}
	err = db.Write(ctx, func(tx store.Tx) error {
		return tx.RecordJobRun(ctx, store.JobRun{JobID: "job-x", RunID: "run-9", FireAt: at(1)})
	})
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("RecordJobRun unknown job: %v, want not found", err)
	}

	// Deleting a job takes its history with it.
	write(t, db, func(tx store.Tx) error { return tx.DeleteJob(ctx, "job-a") })
	if _, err := db.GetJob(ctx, "job-a"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetJob after delete: %v", err)
	}
	if runs, err := db.JobRuns(ctx, "job-a", 10); err != nil || len(runs) != 0 {
		t.Fatalf("JobRuns after delete = %+v, %v", runs, err)
	}
	if err := db.Write(ctx, func(tx store.Tx) error { return tx.DeleteJob(ctx, "job-a") }); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("DeleteJob twice: %v, want not found", err)
	}
}

func claim(t testing.TB, db store.Store, now time.Time, step time.Duration) []store.Job {
	t.Helper()
	var got []store.Job
	write(t, db, func(tx store.Tx) error {
		var err error
		got, err = tx.ClaimDueJobs(context.Background(), now, func(j store.Job) time.Time { return j.NextFireAt.Add(step) })
		return err
	})
	return got
}

func testClaimDueJobs(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	due := sampleJob("job-due", "due", at(1000))
	later := sampleJob("job-later", "later", at(5000))
	paused := sampleJob("job-paused", "paused", at(1000))
	paused.Enabled = false
	never := sampleJob("job-never", "never", time.Time{})
	for _, j := range []store.Job{due, later, paused, never} {
		write(t, db, func(tx store.Tx) error { return tx.InsertJob(ctx, j) })
	}
	got := claim(t, db, at(1000), time.Second)
	if len(got) != 1 || got[0].ID != "job-due" || !got[0].NextFireAt.Equal(at(1000)) || got[0].FireCount != 1 {
		t.Fatalf("claim at 1000 = %+v, want job-due's fire at 1000", got)
	}
	if j, _ := db.GetJob(ctx, "job-due"); !j.NextFireAt.Equal(at(2000)) || j.FireCount != 1 {
		t.Fatalf("after the claim next = %v, count %d; want 2000, 1", j.NextFireAt, j.FireCount)
	}
	// The same instant again claims nothing: the due time is taken.
	if got := claim(t, db, at(1000), time.Second); len(got) != 0 {
		t.Fatalf("second claim at 1000 = %+v, want none", got)
	}
	// A next of zero ends the job's fires.
	var last []store.Job
	write(t, db, func(tx store.Tx) error {
		var err error
		last, err = tx.ClaimDueJobs(ctx, at(6000), func(store.Job) time.Time { return time.Time{} })
		return err
	})
	if len(last) != 2 || last[0].ID != "job-due" || last[1].ID != "job-later" {
		t.Fatalf("claim at 6000 = %+v, want job-due then job-later", last)
	}
	if got := claim(t, db, at(99000), time.Second); len(got) != 0 {
		t.Fatalf("claim after the last fire = %+v, want none", got)
	}

	// The claim's update is conditional on the time it read: a next fire
	// time moved after the read (here by the next callback itself, as
	// another claimer would) is not claimed and not overwritten.
	stale := sampleJob("job-stale", "stale", at(200000))
	write(t, db, func(tx store.Tx) error { return tx.InsertJob(ctx, stale) })
	var got2 []store.Job
	write(t, db, func(tx store.Tx) error {
		var err error
		got2, err = tx.ClaimDueJobs(ctx, at(200000), func(j store.Job) time.Time {
			moved := j
			moved.NextFireAt = at(201000)
			if err := tx.UpdateJob(ctx, moved, j.NextFireAt); err != nil {
				t.Errorf("moving the next fire time: %v", err)
			}
			return at(300000)
		})
		return err
	})
	if len(got2) != 0 {
		t.Fatalf("claimed %+v although its next fire time moved after the read", got2)
	}
	if j, _ := db.GetJob(ctx, "job-stale"); !j.NextFireAt.Equal(at(201000)) || j.FireCount != 0 {
		t.Fatalf("after a refused claim next = %v, count %d; want the moved time and 0", j.NextFireAt, j.FireCount)
	}
}

// testClaimDueJobsConcurrent has four claimers on two handles of one
// database walk the same clock: every due time is claimed exactly once.
func testClaimDueJobsConcurrent(t *testing.T, open Open) {
	ctx := context.Background()
	db, another := open(t)
	other := another()
	const fires = 30
	for _, id := range []string{"job-1", "job-2"} {
		write(t, db, func(tx store.Tx) error { return tx.InsertJob(ctx, sampleJob(id, id, at(1000))) })
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for _, h := range []store.Store{db, other, db, other} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 1; k <= fires; k++ {
				var got []store.Job
				err := h.Write(ctx, func(tx store.Tx) error {
					var err error
					got, err = tx.ClaimDueJobs(ctx, at(k*1000), func(j store.Job) time.Time { return j.NextFireAt.Add(time.Second) })
					return err
				})
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				for _, j := range got {
					seen[j.ID+"@"+j.NextFireAt.Format(time.RFC3339Nano)]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("claimer: %v", err)
	}
	for _, id := range []string{"job-1", "job-2"} {
		for k := 1; k <= fires; k++ {
			key := id + "@" + at(k*1000).Format(time.RFC3339Nano)
			if seen[key] != 1 {
				t.Errorf("%s claimed %d times, want 1", key, seen[key])
			}
		}
		if j, err := db.GetJob(ctx, id); err != nil || j.FireCount != fires {
			t.Errorf("%s fire count = %d, %v; want %d", id, j.FireCount, err, fires)
		}
	}
	if len(seen) != 2*fires {
		t.Errorf("%d due times claimed, want %d", len(seen), 2*fires)
	}
}
