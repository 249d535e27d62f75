package websearch_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/secret"
	"github.com/caduceus-dev/caduceus/internal/secretbox"
	"github.com/caduceus-dev/caduceus/internal/store/sqlite"
	"github.com/caduceus-dev/caduceus/internal/websearch"
)

func ptr[T any](v T) *T { return &v }

func code(err error) string {
	var we *websearch.Error
	if errors.As(err, &we) {
		return we.Code
	}
	return ""
}

func TestServiceKeepsTheBackendSealed(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	box, _ := secretbox.New(bytes.Repeat([]byte{7}, 32))
	red := secret.NewRedactor()
	svc := websearch.New(websearch.Config{Store: st, Redactor: red, Timeout: time.Second,
		Keys: func(bool) (*secretbox.Box, error) { return box, nil }})

	// Nothing configured: not offered, and searching says so.
	if v, err := svc.Get(ctx); err != nil || v.Configured || len(v.Kinds) != 3 {
		t.Fatalf("Get = %+v, %v", v, err)
	}
	if svc.Configured(ctx) {
		t.Fatal("configured with nothing stored")
	}
	if _, err := svc.Search(ctx, "q", 1); code(err) != websearch.CodeNotConfigured {
		t.Fatalf("Search = %v", err)
	}

	// Bad input changes nothing.
	for _, tc := range []struct {
		in    websearch.Input
		field string
	}{
		{websearch.Input{Kind: ptr("bing")}, "kind"},
		{websearch.Input{Kind: ptr("searxng")}, "url"},
		{websearch.Input{Kind: ptr("searxng"), URL: ptr("file:///etc")}, "url"},
		{websearch.Input{Kind: ptr("searxng"), URL: ptr("https://u:p@s.example")}, "url"},
		{websearch.Input{Kind: ptr("brave")}, "api_key"},
		{websearch.Input{Kind: ptr("tavily"), APIKey: ptr("a\nb")}, "api_key"},
	} {
		_, err := svc.Put(ctx, tc.in)
		var we *websearch.Error
		if !errors.As(err, &we) || we.Code != websearch.CodeInvalidInput || we.Field != tc.field {
			t.Errorf("Put(%+v) = %v, want invalid %s", tc.in, err, tc.field)
		}
	}
	if svc.Configured(ctx) {
		t.Fatal("a refused Put configured a back-end")
	}

	brave := fake(t, websearch.KindBrave)
	v, err := svc.Put(ctx, websearch.Input{Kind: ptr("brave"), URL: ptr(brave.URL + "/res/v1/web/search"), APIKey: ptr(testKey)})
	if err != nil {
		t.Fatal(err)
	}
	if !v.Configured || !v.HasKey || v.APIKey != "bsk…cdef" || v.Kind != "brave" {
		t.Fatalf("view = %+v", v)
	}
	// The row holds the key sealed, bound to this row.
	sets, _ := st.ListSettings(ctx)
	for _, s := range sets {
		if strings.Contains(s.Value, testKey) {
			t.Fatalf("the key is stored in clear: %s", s.Value)
		}
	}
	if got := red.String("x " + testKey); strings.Contains(got, testKey) {
		t.Fatal("the redactor did not learn the key")
	}
	rs, err := svc.Search(ctx, "golang", 2)
	if err != nil || len(rs) != 2 {
		t.Fatalf("Search = %v, %v", rs, err)
	}
	if svc.Endpoint(ctx) != brave.URL+"/res/v1/web/search" {
		t.Errorf("endpoint %q", svc.Endpoint(ctx))
	}

	// Changing the URL keeps the key; another box cannot open it.
	if _, err := svc.Put(ctx, websearch.Input{URL: ptr(brave.URL + "/res/v1/web/search")}); err != nil {
		t.Fatal(err)
	}
	other, _ := secretbox.New(bytes.Repeat([]byte{8}, 32))
	lost := websearch.New(websearch.Config{Store: st, Keys: func(bool) (*secretbox.Box, error) { return other, nil }})
	if lost.Configured(ctx) {
		t.Fatal("a key that does not open counts as configured")
	}
	if v, _ := lost.Get(ctx); v.Error == "" || !v.Configured {
		t.Fatalf("Get with the wrong box = %+v", v)
	}

	// SearXNG needs no key; removing the key of a Brave back-end is refused.
	if _, err := svc.Put(ctx, websearch.Input{APIKey: ptr("")}); code(err) != websearch.CodeInvalidInput {
		t.Fatalf("removing Brave's key: %v", err)
	}
	sx := fake(t, websearch.KindSearXNG)
	if v, err := svc.Put(ctx, websearch.Input{Kind: ptr("searxng"), URL: ptr(sx.URL), APIKey: ptr("")}); err != nil || v.HasKey {
		t.Fatalf("searxng = %+v, %v", v, err)
	}
	if rs, err := svc.Search(ctx, "golang", 0); err != nil || len(rs) != 2 {
		t.Fatalf("Search = %v, %v", rs, err)
	}
	if err := svc.Delete(ctx); err != nil || svc.Configured(ctx) {
		t.Fatalf("Delete = %v, configured %v", err, svc.Configured(ctx))
	}
}
