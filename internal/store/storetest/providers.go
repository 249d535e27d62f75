package storetest

// Providers added in the console and the console's settings (issue 16).

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/store"
)

func testProvidersCRUD(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	if got, err := db.ListProviders(ctx); err != nil || len(got) != 0 {
		t.Fatalf("ListProviders on an empty store = %v, %v", got, err)
	}
	if _, err := db.GetProvider(ctx, "prv-none"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetProvider unknown: %v, want not found", err)
	}
	local := store.Provider{ID: "prv-1", Name: "local", Kind: "openai", BaseURL: "http://127.0.0.1:11434/v1",
		Enabled: true, CreatedAt: at(1), UpdatedAt: at(1)}
	hosted := store.Provider{ID: "prv-2", Name: "Hosted", Kind: "anthropic", APIKeySealed: "v1.abcd.sealed", APIKeyHint: "sk-…4f2a",
		DefaultModel: "claude-sonnet-4-5", Models: []string{"claude-sonnet-4-5", "claude-haiku-4-5"}, Enabled: false,
		HeadersSealed: "v1.abcd.headers", HeaderNames: []string{"HTTP-Referer", "X-Title"},
		CreatedAt: at(2), UpdatedAt: at(2)}
	write(t, db, func(tx store.Tx) error { return tx.InsertProvider(ctx, local) })
	write(t, db, func(tx store.Tx) error { return tx.InsertProvider(ctx, hosted) })
	if got, err := db.GetProvider(ctx, "prv-2"); err != nil || !reflect.DeepEqual(got, hosted) {
		t.Fatalf("GetProvider = %+v, %v; want %+v", got, err, hosted)
	}
	// By name regardless of case: Hosted before local.
	got, err := db.ListProviders(ctx)
	if err != nil || len(got) != 2 || got[0].ID != "prv-2" || got[1].ID != "prv-1" {
		t.Fatalf("ListProviders = %+v, %v", got, err)
	}
	if got[1].Models != nil || got[1].HeaderNames != nil {
		t.Fatalf("no models or headers read back as %#v, %#v, want nil", got[1].Models, got[1].HeaderNames)
	}

	// A name taken regardless of case is a conflict, on insert and update,
	// and changes nothing.
	dup := local
	dup.ID, dup.Name = "prv-3", "LOCAL"
	err = db.Write(ctx, func(tx store.Tx) error { return tx.InsertProvider(ctx, dup) })
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("InsertProvider with a taken name: %v, want conflict", err)
	}
	ren := hosted
	ren.Name = "Local"
	err = db.Write(ctx, func(tx store.Tx) error { return tx.UpdateProvider(ctx, ren) })
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("UpdateProvider to a taken name: %v, want conflict", err)
	}

	// An update writes every field but the id and creation time.
	upd := hosted
	upd.Name, upd.Kind, upd.BaseURL, upd.APIKeySealed, upd.APIKeyHint = "hosted", "openai", "https://openrouter.ai/api/v1", "v1.abcd.other", ""
	upd.DefaultModel, upd.Models, upd.Enabled, upd.UpdatedAt = "", nil, true, at(9)
	upd.HeadersSealed, upd.HeaderNames = "", nil
	write(t, db, func(tx store.Tx) error { return tx.UpdateProvider(ctx, upd) })
	if got, err := db.GetProvider(ctx, "prv-2"); err != nil || !reflect.DeepEqual(got, upd) {
		t.Fatalf("after update = %+v, %v; want %+v", got, err, upd)
	}
	missing := upd
	missing.ID, missing.Name = "prv-none", "nobody"
	if err := db.Write(ctx, func(tx store.Tx) error { return tx.UpdateProvider(ctx, missing) }); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("UpdateProvider unknown: %v, want not found", err)
	}

	write(t, db, func(tx store.Tx) error { return tx.DeleteProvider(ctx, "prv-1") })
	if err := db.Write(ctx, func(tx store.Tx) error { return tx.DeleteProvider(ctx, "prv-1") }); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second delete: %v, want not found", err)
	}
	if got, err := db.ListProviders(ctx); err != nil || len(got) != 1 || got[0].ID != "prv-2" {
		t.Fatalf("after delete = %+v, %v", got, err)
	}
	// The freed name can be taken again.
	write(t, db, func(tx store.Tx) error { return tx.InsertProvider(ctx, dup) })
}

func testSettings(t *testing.T, open Open) {
	ctx := context.Background()
	db, another := open(t)
	if got, err := db.ListSettings(ctx); err != nil || len(got) != 0 {
		t.Fatalf("ListSettings on an empty store = %v, %v", got, err)
	}
	write(t, db, func(tx store.Tx) error {
		return errors.Join(tx.PutSetting(ctx, store.Setting{Key: "max_retries", Value: `3`, UpdatedAt: at(1)}),
			tx.PutSetting(ctx, store.Setting{Key: "default_model", Value: `"local/llama3"`, UpdatedAt: at(1)}))
	})
	write(t, db, func(tx store.Tx) error {
		return tx.PutSetting(ctx, store.Setting{Key: "max_retries", Value: `5`, UpdatedAt: at(2)})
	})
	want := []store.Setting{{Key: "default_model", Value: `"local/llama3"`, UpdatedAt: at(1)}, {Key: "max_retries", Value: `5`, UpdatedAt: at(2)}}
	// Another process sees them.
	if got, err := another().ListSettings(ctx); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("ListSettings = %+v, %v; want %+v", got, err, want)
	}
	write(t, db, func(tx store.Tx) error {
		return errors.Join(tx.DeleteSetting(ctx, "max_retries"), tx.DeleteSetting(ctx, "never_set"))
	})
	if got, err := db.ListSettings(ctx); err != nil || !reflect.DeepEqual(got, want[:1]) {
		t.Fatalf("after delete = %+v, %v", got, err)
	}
}
