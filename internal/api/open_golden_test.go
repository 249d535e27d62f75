package api_test

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/api"
	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/journal/journaltest"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files of TestOpenLongSessionGolden")

// journalTime is a timestamp of the journal: the store stamps events with
// its clock, the one part of the answer that differs between two runs.
var journalTime = regexp.MustCompile(`"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"`)

// TestOpenLongSessionGolden pins the bytes GET messages serves for the
// benchmark's 2,000-message session and for a branch of it at the middle
// message, on both stores: the work that makes opening fast must not
// change a byte of the answer. The golden files were written by the
// handler before that work (-update rewrites them); the journal's
// timestamps are the only thing masked.
func TestOpenLongSessionGolden(t *testing.T) {
	for _, k := range storetest.Kinds(pg) {
		t.Run(k.Name, func(t *testing.T) {
			j := journaltest.Start(t, k.Open)
			svc := control.NewService(j.Store, j.Writer, t.TempDir(), control.RetryPolicy{})
			h := api.New(j.Store, svc, j.Hub, api.Info{Version: "golden"}, api.Options{}, slog.New(slog.DiscardHandler)).Handler()
			t.Cleanup(j.StopHub)
			sid := benchConversation(t, j.Writer, 1_000, func(i int) string { return fmt.Sprintf("run_golden%05d", i) })
			branch := benchServe(t, h, "POST", "/api/sessions/"+sid+"/branch", `{"item_id":"`+benchItemAt(t, h, sid, 1_000)+`"}`, http.StatusCreated)
			for _, c := range []struct{ name, sid string }{{"open", sid}, {"open-branch", branch}} {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/sessions/"+c.sid+"/messages", nil))
				if rec.Code != http.StatusOK {
					t.Fatalf("%s: %d %s", c.name, rec.Code, rec.Body.String())
				}
				got := journalTime.ReplaceAll(rec.Body.Bytes(), []byte(`"TIME"`))
				compareGolden(t, filepath.Join("testdata", "golden-"+c.name+".json.gz"), got)
			}
		})
	}
}

// compareGolden compares got with the gzipped golden file (or writes it
// under -update); on a difference it leaves got beside the test's files.
func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *updateGolden {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		if _, err := zw.Write(got); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	want, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		out := filepath.Join(t.TempDir(), filepath.Base(path)+".got")
		_ = os.WriteFile(out, got, 0o644)
		i := 0
		for i < min(len(got), len(want)) && got[i] == want[i] {
			i++
		}
		t.Fatalf("%s: the answer differs from the golden file at byte %d of %d (want %d bytes): got …%s…, want …%s…",
			path, i, len(got), len(want), got[max(0, i-80):min(len(got), i+80)], want[max(0, i-80):min(len(want), i+80)])
	}
}
