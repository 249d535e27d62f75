package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/caduceus-dev/caduceus/internal/httpguard"
)

// metricsServer serves GET /metrics for a runner process, which has no
// web tier of its own (--metrics-addr). It is guarded like the web tier:
// loopback only unless CADUCEUS_TOKEN is set, and then the token is
// required.
type metricsServer struct {
	srv *http.Server
	ln  net.Listener
	log *slog.Logger
}

func listenMetrics(addr, token string, metrics http.Handler, log *slog.Logger) (*metricsServer, error) {
	guard, err := httpguard.New(httpguard.Config{Addr: addr, Token: token})
	if err != nil {
		return nil, fmt.Errorf("metrics-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics)
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
