package api_test

// Run expiry (h17-expiry): POST /api/sessions/{id}/messages takes
// expires_in and the run carries expires_at.

import (
	"net/http"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

func TestSendMessageExpiresIn(t *testing.T) {
	t.Parallel()
	storetest.Each(t, pg, func(t *testing.T, open storetest.Open) {
		e := newEnv(t, withStore(open))
		s := e.session(t)
		for _, body := range []string{
			`{"content":"x","expires_in":"soon"}`,
			`{"content":"x","expires_in":"10"}`,
			`{"content":"x","expires_in":"500ms"}`,
			`{"content":"x","expires_in":"-1m"}`,
			`{"content":"x","expires_in":"200h"}`,
			`{"content":"x","expires_in":600}`,
		} {
			r := e.req("POST", "/api/sessions/"+s.ID+"/messages", body)
			want := control.CodeInvalidExpiresIn
			if body == `{"content":"x","expires_in":600}` {
				want = control.CodeInvalidInput // not a string: the JSON is refused whole
			}
			r.want(t, http.StatusBadRequest, want)
		}
		var list struct {
			Runs []struct{ ID string } `json:"runs"`
		}
		e.req("GET", "/api/sessions/"+s.ID+"/runs", "").decode(t, &list)
		if len(list.Runs) != 0 {
			t.Fatalf("refused messages queued runs: %+v", list.Runs)
		}

		r := e.req("POST", "/api/sessions/"+s.ID+"/messages", `{"content":"x","expires_in":"10m"}`)
		r.want(t, http.StatusAccepted, "")
		var got struct {
			ID        string    `json:"id"`
			CreatedAt time.Time `json:"created_at"`
			ExpiresAt time.Time `json:"expires_at"`
		}
		r.decode(t, &got)
		if d := got.ExpiresAt.Sub(got.CreatedAt); d != 10*time.Minute {
			t.Fatalf("expires_at - created_at = %v, want 10m (%+v)", d, got)
		}
		var again struct {
			ExpiresAt time.Time `json:"expires_at"`
		}
		e.req("GET", "/api/runs/"+got.ID, "").decode(t, &again)
		if !again.ExpiresAt.Equal(got.ExpiresAt) {
			t.Fatalf("GET run expires_at = %v, want %v", again.ExpiresAt, got.ExpiresAt)
		}
	})
}
