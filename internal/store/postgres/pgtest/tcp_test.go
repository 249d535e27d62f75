package pgtest_test

import (
	"context"
	"net/netip"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/store/postgres/pgtest"
	"github.com/jackc/pgx/v5"
)

// A cluster asked to listen on TCP serves the same database over TCP and
// over its socket; one that was not asked has no TCP (the package default).
func TestListenTCP(t *testing.T) {
	ctx := context.Background()
	c := pgtest.New().ListenTCP(netip.MustParseAddr("127.0.0.1"), netip.MustParsePrefix("10.231.0.0/24"))
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Error(err)
		}
	})
	tcp := c.DatabaseTCP(t)
	if !strings.HasPrefix(tcp, "postgres://postgres@127.0.0.1:") {
		t.Fatalf("TCP URL %q", tcp)
	}
	conn, err := pgx.Connect(ctx, tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var addr, listen, hba string
	if err := conn.QueryRow(ctx, `SELECT host(inet_client_addr()), current_setting('listen_addresses'),
		(SELECT string_agg(address || '/' || netmask, ',') FROM pg_hba_file_rules WHERE address LIKE '10.231.%')`).
		Scan(&addr, &listen, &hba); err != nil {
		t.Fatal(err)
	}
	if addr != "127.0.0.1" || listen != "127.0.0.1" || hba != "10.231.0.0/255.255.255.0" {
		t.Fatalf("client %s, listen_addresses %q, pg_hba rule %q", addr, listen, hba)
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE x (v int)`); err != nil {
		t.Fatal(err)
	}

	// The socket still works for the others, on the same port.
	sock := c.Database(t)
	sc, err := pgx.Connect(ctx, sock)
	if err != nil {
		t.Fatalf("socket URL %s: %v", sock, err)
	}
	sc.Close(ctx)

	// The shared cluster of this package was not asked: no TCP.
	u := pg.Database(t)
	pc, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close(ctx)
	if err := pc.QueryRow(ctx, `SELECT current_setting('listen_addresses')`).Scan(&listen); err != nil || listen != "" {
		t.Fatalf("default cluster listen_addresses %q (%v), want none", listen, err)
	}
}
