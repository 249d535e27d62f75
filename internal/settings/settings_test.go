package settings_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/models"
	"github.com/caduceus-dev/caduceus/internal/provider/anthropic"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
	"github.com/caduceus-dev/caduceus/internal/provider/openai"
	"github.com/caduceus-dev/caduceus/internal/provider/openai/openaitest"
	"github.com/caduceus-dev/caduceus/internal/secret"
	"github.com/caduceus-dev/caduceus/internal/secretbox"
	"github.com/caduceus-dev/caduceus/internal/settings"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/postgres/pgtest"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

var pg = pgtest.New()

func TestMain(m *testing.M) { os.Exit(pg.Main(m)) }

const key = "sk-test-provider-key-0123456789-4f2a"

func factories() map[string]models.Factory {
	return map[string]models.Factory{
		models.TypeOpenAI: func(name string, c models.ProviderConfig, key string) (models.Client, error) {
			return openai.New(openai.Config{Name: name, BaseURL: c.BaseURL, APIKey: key, Headers: c.Headers})
		},
		models.TypeAnthropic: func(name string, c models.ProviderConfig, key string) (models.Client, error) {
			return anthropic.New(anthropic.Config{Name: name, BaseURL: c.BaseURL, APIKey: key, Headers: c.Headers})
		},
	}
}

type rig struct {
	svc *settings.Service
	reg *models.Registry
	red *secret.Redactor
	st  store.Store
	box *secretbox.Box
}

func newRig(t *testing.T, st store.Store, box *secretbox.Box, fixed map[string]settings.Fixed, env map[string]string) rig {
	t.Helper()
	reg := models.New(models.File{}, func(k string) string { return env[k] }, factories(), demo.New(demo.Default()))
	red := secret.NewRedactor()
	keys := func(bool) (*secretbox.Box, error) {
		if box == nil {
			return nil, settings.ErrNoKey
		}
		return box, nil
	}
	svc := settings.New(settings.Config{Store: st, Registry: reg, Redactor: red, Keys: keys, Factories: factories(), Fixed: fixed,
		Defaults: settings.Effective{ApprovalMode: "smart", MaxRetries: 2}, TestTimeout: 2 * time.Second})
	if err := svc.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	return rig{svc, reg, red, st, box}
}

func ptr[T any](v T) *T { return &v }

func code(err error) string {
	var e *settings.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestProviders(t *testing.T) {
	storetest.Each(t, pg, func(t *testing.T, open storetest.Open) {
		ctx := context.Background()
		st, another := open(t)
		box, _ := secretbox.New(bytes.Repeat([]byte{3}, 32))
		r := newRig(t, st, box, nil, map[string]string{"ANTHROPIC_API_KEY": "sk-ant-env-key-000000001234"})
		fake := openaitest.NewServer()
		t.Cleanup(fake.Close)
		fake.RequireKey(key)
		fake.SetModels("llama3", "qwen3")

		const proxyToken = "proxy-token-0123456789-abcdef"
		v, err := r.svc.CreateProvider(ctx, settings.ProviderInput{Name: ptr("local"), Kind: ptr("openai"), BaseURL: ptr(fake.BaseURL()), APIKey: ptr(key),
			Headers: &map[string]string{"x-proxy-token": proxyToken, "X-Title": "Caduceus"}})
		if err != nil {
			t.Fatal(err)
		}
		if v.APIKey != "sk-…4f2a" || !v.HasKey || v.Source != "database" || v.ReadOnly || strings.Join(v.Headers, ",") != "X-Proxy-Token,X-Title" {
			t.Fatalf("created view = %+v", v)
		}
		// The store holds the key sealed only, and the seal opens only
		// with this key and this provider's id.
		p, err := st.GetProvider(ctx, v.ID)
		if err != nil || strings.Contains(p.APIKeySealed, key) || p.APIKeySealed == "" {
			t.Fatalf("stored = %+v, %v", p, err)
		}
		if got, err := box.Open(p.APIKeySealed, v.ID); err != nil || got != key {
			t.Fatalf("open = %q, %v", got, err)
		}
		other, _ := secretbox.New(bytes.Repeat([]byte{4}, 32))
		if _, err := other.Open(p.APIKeySealed, v.ID); err == nil {
			t.Fatal("another key opened the sealed value")
		}
		// It is redacted from now on and resolves at once.
		if got := r.red.String("key " + key); strings.Contains(got, key) {
			t.Fatal("the redactor did not learn the key")
		}
		if res, err := r.reg.Resolve(ctx, "local/llama3"); err != nil || res.ProviderName != "local" {
			t.Fatalf("Resolve = %+v, %v", res, err)
		}
		ms, err := r.svc.TestProvider(ctx, v.ID)
		if err != nil || strings.Join(ms, ",") != "llama3,qwen3" {
			t.Fatalf("test = %v, %v", ms, err)
		}
		// The headers went with the request, sealed apart from the key; their
		// values are redacted too.
		reqs := fake.Requests()
		if got := reqs[len(reqs)-1].Header.Get("X-Proxy-Token"); got != proxyToken {
			t.Fatalf("the test request's X-Proxy-Token = %q", got)
		}
		if strings.Contains(p.HeadersSealed, proxyToken) || strings.Contains(r.red.String(proxyToken), proxyToken) {
			t.Fatal("a header value is stored in clear or not redacted")
		}
		if _, err := box.Open(p.HeadersSealed, v.ID); err == nil {
			t.Fatal("the sealed headers open as the key's")
		}

		// Every view: masked.
		list, err := r.svc.Providers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(list)
		if strings.Contains(string(b), key) || strings.Contains(string(b), "sk-ant-env-key") || strings.Contains(string(b), proxyToken) {
			t.Fatalf("a key in the list: %s", b)
		}
		if len(list) != 2 || list[0].Name != "anthropic" || list[0].Source != "env" || !list[0].ReadOnly || list[0].APIKey != "sk-…1234" {
			t.Fatalf("list = %s", b)
		}

		// Bad input changes nothing.
		for _, tc := range []struct {
			name string
			in   settings.ProviderInput
			code string
		}{
			{"no kind", settings.ProviderInput{Name: ptr("x")}, settings.CodeInvalidInput},
			{"slash", settings.ProviderInput{Name: ptr("a/b"), Kind: ptr("openai")}, settings.CodeInvalidInput},
			{"demo", settings.ProviderInput{Name: ptr("demo"), Kind: ptr("openai")}, settings.CodeInvalidInput},
			{"env name", settings.ProviderInput{Name: ptr("anthropic"), Kind: ptr("anthropic")}, settings.CodeNameTaken},
			{"taken", settings.ProviderInput{Name: ptr("LOCAL"), Kind: ptr("openai")}, settings.CodeNameTaken},
			{"kind", settings.ProviderInput{Name: ptr("g"), Kind: ptr("gemini")}, settings.CodeInvalidInput},
			{"url", settings.ProviderInput{Name: ptr("g"), Kind: ptr("openai"), BaseURL: ptr("ftp://x")}, settings.CodeInvalidInput},
			{"url creds", settings.ProviderInput{Name: ptr("g"), Kind: ptr("openai"), BaseURL: ptr("http://u:" + key + "@h/v1")}, settings.CodeInvalidInput},
			{"key spaces", settings.ProviderInput{Name: ptr("g"), Kind: ptr("openai"), APIKey: ptr("sk with spaces " + key)}, settings.CodeInvalidInput},
			{"header name", settings.ProviderInput{Name: ptr("g"), Kind: ptr("openai"), Headers: &map[string]string{"Bad Name": "v"}}, settings.CodeInvalidInput},
			{"header value", settings.ProviderInput{Name: ptr("g"), Kind: ptr("openai"), Headers: &map[string]string{"X-Ok": key + "\r\nX-Evil: 1"}}, settings.CodeInvalidInput},
		} {
			_, err := r.svc.CreateProvider(ctx, tc.in)
			if code(err) != tc.code {
				t.Errorf("%s: err = %v, want code %s", tc.name, err, tc.code)
			}
			if err != nil && strings.Contains(err.Error(), key) {
				t.Errorf("%s: the error repeats the key", tc.name)
			}
		}
		if ps, _ := st.ListProviders(ctx); len(ps) != 1 {
			t.Fatalf("bad input stored something: %+v", ps)
		}

		// Another process sees the provider on its next poll; a change made
		// here reaches it on the one after.
		r2 := newRig(t, another(), box, nil, nil)
		if _, err := r2.reg.Resolve(ctx, "local/llama3"); err != nil {
			t.Fatalf("another process: %v", err)
		}
		if _, err := r.svc.UpdateProvider(ctx, v.ID, settings.ProviderInput{Enabled: ptr(false)}); err != nil {
			t.Fatal(err)
		}
		if err := r2.svc.Reload(ctx); err != nil {
			t.Fatal(err)
		}
		if r2.reg.Source("local") != "" {
			t.Fatal("a disabled provider is still in another process's registry")
		}
		// A wrong key: the provider is shown with the reason, and left out.
		wrong, _ := secretbox.New(bytes.Repeat([]byte{9}, 32))
		if _, err := r.svc.UpdateProvider(ctx, v.ID, settings.ProviderInput{Enabled: ptr(true)}); err != nil {
			t.Fatal(err)
		}
		r3 := newRig(t, another(), wrong, nil, nil)
		if got, _ := r3.svc.Provider(ctx, v.ID); !strings.Contains(got.Error, "another key") {
			t.Fatalf("wrong key view = %+v", got)
		}
		if _, err := r3.svc.TestProvider(ctx, v.ID); code(err) != settings.CodeKeyDoesNotOpen {
			t.Fatalf("test with the wrong key: %v", err)
		}
		if err := settings.CheckKey(ctx, st, func(bool) (*secretbox.Box, error) { return nil, settings.ErrNoKey }); err == nil ||
			!strings.Contains(err.Error(), secretbox.EnvKey) {
			t.Fatalf("CheckKey without a key = %v", err)
		}

		// A wrong key at the server: the test says so with a stable code.
		if _, err := r.svc.UpdateProvider(ctx, v.ID, settings.ProviderInput{APIKey: ptr("sk-wrong-key-0000000000000")}); err != nil {
			t.Fatal(err)
		}
		if _, err := r.svc.TestProvider(ctx, v.ID); code(err) != settings.CodeTestAuth {
			t.Fatalf("test with a refused key: %v", err)
		}

		if err := r.svc.DeleteProvider(ctx, v.ID); err != nil {
			t.Fatal(err)
		}
		if res, err := r.reg.Resolve(ctx, "local/llama3"); err == nil && res.ProviderName == "local" {
			t.Fatal("a deleted provider still resolves")
		}
		if err := r.svc.DeleteProvider(ctx, v.ID); code(err) != settings.CodeNotFound {
			t.Fatalf("second delete: %v", err)
		}
	})
}

func TestNoSecretKey(t *testing.T) {
	st, _ := storetest.SQLite(t)
	r := newRig(t, st, nil, nil, nil)
	_, err := r.svc.CreateProvider(context.Background(), settings.ProviderInput{Name: ptr("x"), Kind: ptr("openai"), APIKey: ptr(key)})
	if code(err) != settings.CodeNoSecretKey {
		t.Fatalf("err = %v", err)
	}
	// Without a key, a keyless provider (a local server) is fine.
	if _, err := r.svc.CreateProvider(context.Background(), settings.ProviderInput{Name: ptr("x"), Kind: ptr("openai"), BaseURL: ptr("http://127.0.0.1:1/v1")}); err != nil {
		t.Fatal(err)
	}
}

func TestTestTimeout(t *testing.T) {
	st, _ := storetest.SQLite(t)
	r := newRig(t, st, nil, nil, nil)
	// A server that accepts and never answers.
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { <-req.Context().Done() }))
	t.Cleanup(hang.Close)
	v, err := r.svc.CreateProvider(context.Background(), settings.ProviderInput{Name: ptr("slow"), Kind: ptr("openai"), BaseURL: ptr(hang.URL + "/v1")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.svc.TestProvider(context.Background(), v.ID); code(err) != settings.CodeTestTimeout {
		t.Fatalf("err = %v (%s), want %s", err, code(err), settings.CodeTestTimeout)
	}
}

func TestSettings(t *testing.T) {
	storetest.Each(t, pg, func(t *testing.T, open storetest.Open) {
		ctx := context.Background()
		st, _ := open(t)
		fixed := map[string]settings.Fixed{settings.KeyApprovalTimeout: {Value: "10m", Source: "env"}}
		r := newRig(t, st, nil, fixed, nil)
		v := r.svc.Settings()
		if v.Effective.ApprovalMode != "smart" || v.Effective.MaxRetries != 2 || time.Duration(v.Effective.ApprovalTimeout) != 10*time.Minute {
			t.Fatalf("effective = %+v", v.Effective)
		}
		for _, tc := range []struct {
			name string
			in   string
			code string
		}{
			{"empty", `{}`, settings.CodeInvalidInput},
			{"unknown", `{"colour":"red"}`, settings.CodeUnknownSetting},
			{"fixed", `{"approval_timeout":"1m"}`, settings.CodeReadOnly},
			{"mode", `{"approval_mode":"yolo"}`, settings.CodeInvalidSetting},
			{"retries", `{"max_retries":101}`, settings.CodeInvalidSetting},
			{"retries type", `{"max_retries":"3"}`, settings.CodeInvalidSetting},
			{"backoff", `{"retry_backoff":"soon"}`, settings.CodeInvalidSetting},
			{"model provider", `{"default_model":"nobody/m"}`, settings.CodeInvalidSetting},
			{"notifications field", `{"notifications":{"sms":true}}`, settings.CodeInvalidSetting},
			// One bad key refuses all.
			{"one bad of two", `{"max_retries":3,"approval_mode":"yolo"}`, settings.CodeInvalidSetting},
		} {
			var in map[string]json.RawMessage
			if err := json.Unmarshal([]byte(tc.in), &in); err != nil {
				t.Fatal(err)
			}
			if _, err := r.svc.PatchSettings(ctx, in); code(err) != tc.code {
				t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
			}
		}
		if got, _ := st.ListSettings(ctx); len(got) != 0 {
			t.Fatalf("refused patches stored %+v", got)
		}
		in := map[string]json.RawMessage{"max_retries": json.RawMessage(`5`), "approval_mode": json.RawMessage(`"manual"`),
			"default_model": json.RawMessage(`"demo"`), "notifications": json.RawMessage(`{"approvals":true,"run_failed":true}`)}
		v, err := r.svc.PatchSettings(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if v.Effective.MaxRetries != 5 || v.Effective.ApprovalMode != "manual" || !v.Effective.Notifications.RunFailed || r.reg.Default() != "demo" {
			t.Fatalf("after patch = %+v, default %s", v.Effective, r.reg.Default())
		}
		// null puts the default back.
		v, err = r.svc.PatchSettings(ctx, map[string]json.RawMessage{"max_retries": json.RawMessage(`null`)})
		if err != nil || v.Effective.MaxRetries != 2 {
			t.Fatalf("after reset = %+v, %v", v.Effective, err)
		}
		if _, ok := v.Values["max_retries"]; ok {
			t.Fatal("a reset setting is still stored")
		}
	})
}

// A row another package keeps in the settings table (web_search, with a
// sealed key) is not shown by the settings view.
func TestSettingsViewShowsOnlyItsKeys(t *testing.T) {
	storetest.Each(t, pg, func(t *testing.T, open storetest.Open) {
		ctx := context.Background()
		st, _ := open(t)
		box, _ := secretbox.New(bytes.Repeat([]byte{3}, 32))
		r := newRig(t, st, box, nil, nil)
		err := st.Write(ctx, func(tx store.Tx) error {
			if err := tx.PutSetting(ctx, store.Setting{Key: "web_search", Value: `{"kind":"brave","api_key_sealed":"v1.x.y"}`, UpdatedAt: time.Now()}); err != nil {
				return err
			}
			return tx.PutSetting(ctx, store.Setting{Key: settings.KeyMaxRetries, Value: `3`, UpdatedAt: time.Now()})
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.svc.Reload(ctx); err != nil {
			t.Fatal(err)
		}
		v := r.svc.Settings()
		if _, ok := v.Values["web_search"]; ok || string(v.Values[settings.KeyMaxRetries]) != "3" {
			t.Fatalf("values = %v", v.Values)
		}
	})
}
