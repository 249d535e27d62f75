package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/caduceus-dev/caduceus/internal/auth"
	"github.com/caduceus-dev/caduceus/internal/httpguard"
	"github.com/caduceus-dev/caduceus/internal/identity"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// newGuard builds the guard of a listener on addr: off loopback it needs a
// way to sign in, the token or an enabled account in st. bodyLimit names
// the requests allowed a larger body (nil: none).
func newGuard(ctx context.Context, addr, token string, st store.Reader, bodyLimit func(*http.Request) int64) (*httpguard.Guard, error) {
	accounts, err := identity.EnabledAccounts(ctx, st)
	if err != nil {
		return nil, err
	}
	return httpguard.New(httpguard.Config{Addr: addr, Token: token, Accounts: accounts, BodyLimit: bodyLimit})
}

// metricsServer serves GET /metrics for a runner process, which has no
// web tier of its own (--metrics-addr). It is guarded like the web tier:
// loopback only unless there is a way to sign in (CADUCEUS_TOKEN or an
// account), and then a credential is required.
type metricsServer struct {
	srv *http.Server
	ln  net.Listener
	log *slog.Logger
}

func listenMetrics(ctx context.Context, addr, token string, st store.Store, metrics http.Handler, log *slog.Logger) (*metricsServer, error) {
	guard, err := newGuard(ctx, addr, token, st, nil)
	if err != nil {
		return nil, fmt.Errorf("metrics-addr: %w", err)
	}
	ident := identity.New(st, identity.Config{Token: token, Loopback: httpguard.IsLoopbackAddr(addr), Log: log})
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", ident.Wrap(identity.Require(auth.ActRead, metrics)))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: listen on %s: %w", addr, err)
	}
	return &metricsServer{ln: ln, log: log, srv: &http.Server{Handler: guard.Wrap(mux), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}}, nil
}

func (m *metricsServer) serve() {
	if err := m.srv.Serve(m.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		m.log.Error("metrics server stopped", "err", err)
	}
}

func (m *metricsServer) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := m.srv.Shutdown(ctx)
	// Shutdown closes the listener only once Serve has taken it.
	if cerr := m.ln.Close(); cerr != nil && !errors.Is(cerr, net.ErrClosed) {
		err = errors.Join(err, cerr)
	}
	if err != nil {
		return fmt.Errorf("metrics server: %w", err)
	}
	return nil
}

// url is where the metrics are served.
func (m *metricsServer) url() string { return "http://" + m.ln.Addr().String() + "/metrics" }
