package runner

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

// BenchmarkDescribe measures what a profile adds to a claim: describe
// runs inside the claim's write transaction, where it now reads the
// session and its profile. "no-profile" (a session without one) is the
// baseline of the same run; "profile" reads a live profile with
// instructions and fallbacks and hashes the instructions. Reads go
// through a real SQLite file, outside a transaction (as cheap as inside
// one: both are one prepared lookup by primary key).
func BenchmarkDescribe(b *testing.B) {
	st, _ := storetest.SQLite(b)
	ctx := context.Background()
	now := time.Now().UTC()
	instr := make([]byte, 2000)
	for i := range instr {
		instr[i] = 'a' + byte(i%26)
	}
	err := st.Write(ctx, func(tx store.Tx) error {
		if err := tx.InsertProfile(ctx, store.Profile{ID: "prf_1", Name: "Ada", Instructions: string(instr), Model: "bench",
			Fallbacks: []string{"x", "y"}, CreatedAt: now, UpdatedAt: now}); err != nil {
			return err
		}
		for _, s := range []store.Session{{ID: "ses_plain", CreatedAt: now, UpdatedAt: now}, {ID: "ses_prof", ProfileID: "prf_1", CreatedAt: now, UpdatedAt: now}} {
			if err := tx.InsertSession(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	r := &Runner{pick: fixedResolver{p: tokenProvider{}}, log: slog.New(slog.DiscardHandler), cfg: Config{ApprovalMode: "smart"}}
	for _, bc := range []struct{ name, session string }{{"no-profile", "ses_plain"}, {"profile", "ses_prof"}} {
		b.Run(bc.name, func(b *testing.B) {
			ru := store.Run{ID: "run_1", SessionID: bc.session}
			for b.Loop() {
				if info := r.describe(ctx, st, ru); info.Model != "bench" || (bc.session == "ses_prof") != (info.Profile != nil) {
					b.Fatalf("describe = %+v", info)
				}
			}
		})
	}
}
