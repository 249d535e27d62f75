package api

// Scheduled jobs (issue 17, h17-jobs): a prompt sent on a schedule, and
// the preview of a schedule's next fire times.

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/jobs"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/schedule"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// Jobs manages scheduled jobs: jobs.Scheduler.
type Jobs interface {
	Create(ctx context.Context, in jobs.Input) (store.Job, error)
	Update(ctx context.Context, jobID string, in jobs.Input) (store.Job, error)
	Delete(ctx context.Context, jobID string) error
	RunNowByID(ctx context.Context, jobID string) (store.Run, error)
	Preview(kind, expr, tz string, n int) ([]time.Time, error)
}

// CodeJobsUnavailable answers the jobs routes of a server built without
// a scheduler.
const CodeJobsUnavailable = "jobs_unavailable"

// previewFires is how many fire times a preview lists.
const previewFires = 5

type scheduleView struct {
	Kind string `json:"kind"`
	Expr string `json:"expr"`
	TZ   string `json:"tz"`
	// Words says the schedule for people (schedule.Describe).
	Words string `json:"words"`
}

// jobDeliveryView is where a job's ended runs are told (h17-deliver).
type jobDeliveryView struct {
	Notify     bool     `json:"notify"`
	WebhookIDs []string `json:"webhook_ids"`
}

func newJobDeliveryView(d store.JobDelivery) jobDeliveryView {
	v := jobDeliveryView{Notify: d.Notify, WebhookIDs: d.WebhookIDs}
	if v.WebhookIDs == nil {
		v.WebhookIDs = []string{}
	}
	return v
}

// scheduleWords says a stored schedule; one stored before a rule changed
// and no longer parsed is said as it is.
func scheduleWords(kind, expr, tz string) string {
	w, err := schedule.Describe(kind, expr, tz)
	if err != nil {
		return expr
	}
	return w
}

type jobView struct {
	ID            string          `json:"id"`
	Name          string          `json:"name"`
	Prompt        string          `json:"prompt"`
	ProfileID     string          `json:"profile_id"`
	Workspace     string          `json:"workspace"`
	Schedule      scheduleView    `json:"schedule"`
	Enabled       bool            `json:"enabled"`
	RepeatLimit   int             `json:"repeat_limit"`
	FireCount     int             `json:"fire_count"`
	Overlap       string          `json:"overlap"`
	Missed        string          `json:"missed"`
	Session       string          `json:"session"`
	SessionID     string          `json:"session_id"`
	RunExpirySecs int64           `json:"run_expiry_seconds"`
	Delivery      jobDeliveryView `json:"delivery"`
	NextFireAt    *event.Time     `json:"next_fire_at"`
	LastRunID     string          `json:"last_run_id"`
	LastRunStatus run.Status      `json:"last_run_status"`
	CreatedAt     event.Time      `json:"created_at"`
	UpdatedAt     event.Time      `json:"updated_at"`
}

func newJobView(j store.Job) jobView {
	v := jobView{ID: j.ID, Name: j.Name, Prompt: j.Prompt, ProfileID: j.ProfileID, Workspace: j.Workspace,
		Schedule: scheduleView{Kind: j.ScheduleKind, Expr: j.ScheduleExpr, TZ: j.TZ,
			Words: scheduleWords(j.ScheduleKind, j.ScheduleExpr, j.TZ)}, Enabled: j.Enabled,
		Delivery:    newJobDeliveryView(j.Delivery),
		RepeatLimit: j.RepeatLimit, FireCount: j.FireCount, Overlap: j.Overlap, Missed: j.Missed, Session: j.SessionPolicy,
		SessionID: j.SessionID, RunExpirySecs: int64(j.RunExpiry / time.Second), LastRunID: j.LastRunID,
		LastRunStatus: j.LastRunStatus, CreatedAt: event.Time{Time: j.CreatedAt}, UpdatedAt: event.Time{Time: j.UpdatedAt}}
	if !j.NextFireAt.IsZero() {
		v.NextFireAt = &event.Time{Time: j.NextFireAt}
	}
	return v
}

type scheduleInput struct {
	Kind string `json:"kind"`
	Expr string `json:"expr"`
	TZ   string `json:"tz"`
}

type jobInput struct {
	Name          *string        `json:"name"`
	Prompt        *string        `json:"prompt"`
	ProfileID     *string        `json:"profile_id"`
	Workspace     *string        `json:"workspace"`
	Schedule      *scheduleInput `json:"schedule"`
	Enabled       *bool          `json:"enabled"`
	RepeatLimit   *int           `json:"repeat_limit"`
	Overlap       *string        `json:"overlap"`
	Missed        *string        `json:"missed"`
	Session       *string        `json:"session"`
	RunExpirySecs *int64         `json:"run_expiry_seconds"`
	// Delivery replaces the job's delivery when given.
	Delivery *jobDeliveryInput `json:"delivery"`
}

type jobDeliveryInput struct {
	Notify     bool     `json:"notify"`
	WebhookIDs []string `json:"webhook_ids"`
}

func (in jobInput) jobs() jobs.Input {
	out := jobs.Input{Name: in.Name, Prompt: in.Prompt, ProfileID: in.ProfileID, Workspace: in.Workspace, Enabled: in.Enabled,
		RepeatLimit: in.RepeatLimit, Overlap: in.Overlap, Missed: in.Missed, SessionPolicy: in.Session}
	if in.Schedule != nil {
		// A schedule is given whole: its kind and zone go with the
		// expression.
		out.ScheduleKind, out.ScheduleExpr, out.TZ = &in.Schedule.Kind, &in.Schedule.Expr, &in.Schedule.TZ
	}
	if in.RunExpirySecs != nil {
		d := time.Duration(*in.RunExpirySecs) * time.Second
		out.RunExpiry = &d
	}
	if in.Delivery != nil {
		out.Delivery = &store.JobDelivery{Notify: in.Delivery.Notify, WebhookIDs: in.Delivery.WebhookIDs}
	}
	return out
}

func (a *API) jobsOrUnavailable(w http.ResponseWriter) (Jobs, bool) {
	if a.opt.Jobs == nil {
		writeError(w, http.StatusServiceUnavailable, CodeJobsUnavailable, "this server runs no scheduled jobs", nil)
		return nil, false
	}
	return a.opt.Jobs, true
}

func (a *API) listJobs(w http.ResponseWriter, r *http.Request) {
	js, err := a.st.ListJobs(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := make([]jobView, len(js))
	for i, j := range js {
		out[i] = newJobView(j)
	}
	writeJSON(w, http.StatusOK, map[string]any{"jobs": out})
}

func (a *API) createJob(w http.ResponseWriter, r *http.Request) {
	jb, ok := a.jobsOrUnavailable(w)
	if !ok {
		return
	}
	var in jobInput
	if !decode(w, r, &in) {
		return
	}
	j, err := jb.Create(r.Context(), in.jobs())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, newJobView(j))
}

func (a *API) getJob(w http.ResponseWriter, r *http.Request) {
	jid, ok := pathID(w, r, "job", "job")
	if !ok {
		return
	}
	j, err := a.st.GetJob(r.Context(), jid)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, newJobView(j))
}

func (a *API) patchJob(w http.ResponseWriter, r *http.Request) {
	var in jobInput
	if !decode(w, r, &in) {
		return
	}
	a.updateJob(w, r, in.jobs())
}

func (a *API) pauseJob(w http.ResponseWriter, r *http.Request) {
	off := false
	a.updateJob(w, r, jobs.Input{Enabled: &off})
}

func (a *API) resumeJob(w http.ResponseWriter, r *http.Request) {
	on := true
	a.updateJob(w, r, jobs.Input{Enabled: &on})
}

func (a *API) updateJob(w http.ResponseWriter, r *http.Request, in jobs.Input) {
	jb, ok := a.jobsOrUnavailable(w)
	if !ok {
		return
	}
	jid, ok := pathID(w, r, "job", "job")
	if !ok {
		return
	}
	j, err := jb.Update(r.Context(), jid, in)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, newJobView(j))
}

func (a *API) deleteJob(w http.ResponseWriter, r *http.Request) {
	jb, ok := a.jobsOrUnavailable(w)
	if !ok {
		return
	}
	jid, ok := pathID(w, r, "job", "job")
	if !ok {
		return
	}
	if err := jb.Delete(r.Context(), jid); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (a *API) runJob(w http.ResponseWriter, r *http.Request) {
	jb, ok := a.jobsOrUnavailable(w)
	if !ok {
		return
	}
	jid, ok := pathID(w, r, "job", "job")
	if !ok {
		return
	}
	run, err := jb.RunNowByID(r.Context(), jid)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"run_id": run.ID, "session_id": run.SessionID, "status": run.Status})
}

type jobRunView struct {
	RunID     string      `json:"run_id"`
	SessionID string      `json:"session_id"`
	FireAt    event.Time  `json:"fire_at"`
	Manual    bool        `json:"manual"`
	Status    run.Status  `json:"status"`
	CreatedAt *event.Time `json:"created_at"`
	EndedAt   *event.Time `json:"ended_at"`
	CostUSD   float64     `json:"cost_usd"`
}

// maxJobRuns bounds a job's history page.
const maxJobRuns = 200

func (a *API) listJobRuns(w http.ResponseWriter, r *http.Request) {
	jid, ok := pathID(w, r, "job", "job")
	if !ok {
		return
	}
	ctx := r.Context()
	if _, err := a.st.GetJob(ctx, jid); err != nil {
		a.fail(w, r, err)
		return
	}
	limit := 50
	if s := r.URL.Query().Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxJobRuns {
			writeError(w, http.StatusBadRequest, "invalid_input", "limit must be 1 to 200", nil)
			return
		}
		limit = n
	}
	jrs, err := a.st.JobRuns(ctx, jid, limit)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := make([]jobRunView, 0, len(jrs))
	for _, jr := range jrs {
		v := jobRunView{RunID: jr.RunID, SessionID: jr.SessionID, FireAt: event.Time{Time: jr.FireAt}, Manual: jr.Manual}
		// A run deleted with its session leaves the row without a status.
		if rn, err := a.st.GetRun(ctx, jr.RunID); err == nil {
			v.Status, v.CostUSD = rn.Status, rn.Usage.CostUSD
			v.CreatedAt = &event.Time{Time: rn.CreatedAt}
			if !rn.EndedAt.IsZero() {
				v.EndedAt = &event.Time{Time: rn.EndedAt}
			}
		}
		out = append(out, v)
	}
	writeJSON(w, http.StatusOK, map[string]any{"runs": out})
}

func (a *API) previewSchedule(w http.ResponseWriter, r *http.Request) {
	jb, ok := a.jobsOrUnavailable(w)
	if !ok {
		return
	}
	q := r.URL.Query()
	fires, err := jb.Preview(q.Get("kind"), q.Get("expr"), q.Get("tz"), previewFires)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := make([]event.Time, len(fires))
	for i, f := range fires {
		out[i] = event.Time{Time: f}
	}
	words := scheduleWords(q.Get("kind"), q.Get("expr"), q.Get("tz"))
	writeJSON(w, http.StatusOK, map[string]any{"fires": out, "words": words})
}
