package netguard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// Proxy is a forward HTTP proxy on loopback whose every connection goes
// through a Guard. A browser pointed at it (--proxy-server, with loopback
// not bypassed) cannot load a page, a subresource or a redirect target
// from a refused address, since the proxy, not the browser, resolves
// names.
type Proxy struct {
	guard    *Guard
	ln       net.Listener
	srv      *http.Server
	tr       *http.Transport
	onRefuse func(host string, err error)
	wg       sync.WaitGroup

	mu      sync.Mutex
	tunnels map[net.Conn]struct{} // hijacked, so Server.Close does not see them
	closed  bool
}

// NewProxy listens on a loopback port. onRefuse, if set, is told of every
// host the guard refused (the browser shows only an error page); failed
// lookups and connections are not refusals.
func NewProxy(g *Guard, onRefuse func(host string, err error), log *slog.Logger) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("proxy listen: %w", err)
	}
	p := &Proxy{guard: g, ln: ln, onRefuse: onRefuse, tunnels: map[net.Conn]struct{}{}}
	p.tr = &http.Transport{DialContext: g.DialContext, ForceAttemptHTTP2: false, MaxIdleConns: 16,
		IdleConnTimeout: 30 * time.Second, TLSHandshakeTimeout: 10 * time.Second, ResponseHeaderTimeout: 30 * time.Second}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		_ = p.srv.Serve(ln) // returns at Close
	}()
	return p, nil
}

// Addr is the proxy's "127.0.0.1:port".
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Close stops the proxy and its tunnels.
func (p *Proxy) Close() error {
	err := p.srv.Close()
	p.tr.CloseIdleConnections()
	p.mu.Lock()
	p.closed = true
	for c := range p.tunnels {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

func (p *Proxy) refused(w http.ResponseWriter, host string, err error) {
	if p.onRefuse != nil && errors.Is(err, ErrBlocked) {
		p.onRefuse(host, err)
	}
	status := http.StatusBadGateway
	if errors.Is(err, ErrBlocked) {
		status = http.StatusForbidden
	}
	w.Header().Set(RefusedHeader, "1")
	http.Error(w, "caduceus: "+err.Error(), status)
}

// hopByHop are the headers of one connection (RFC 9110, 7.6.1), not passed
// on by a proxy.
var hopByHop = map[string]bool{"Connection": true, "Keep-Alive": true, "Proxy-Authenticate": true,
	"Proxy-Authorization": true, "Proxy-Connection": true, "Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true}

// RefusedHeader marks the proxy's own error answers, so a browser's
// driver can tell a refused page from a page that says 403.
const RefusedHeader = "X-Caduceus-Refused"

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.tunnel(w, r)
		return
	}
	if !r.URL.IsAbs() || (r.URL.Scheme != "http" && r.URL.Scheme != "https") {
		http.Error(w, "caduceus: only proxy requests are served here", http.StatusBadRequest)
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.Header.Del("Proxy-Connection")
	out.Header.Del("Proxy-Authorization")
	resp, err := p.tr.RoundTrip(out)
	if err != nil {
		p.refused(w, r.URL.Hostname(), err)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		if hopByHop[http.CanonicalHeaderKey(k)] {
			continue
		}
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// tunnel serves CONNECT (https, wss): the guard dials, then bytes flow
// both ways until either side closes.
func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	up, err := p.guard.DialContext(ctx, "tcp", r.Host)
	cancel()
	if err != nil {
		host, _, _ := net.SplitHostPort(r.Host)
		p.refused(w, host, err)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "caduceus: cannot tunnel", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusOK)
	down, buf, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if !p.track(up, down) {
		up.Close()
		down.Close()
		return
	}
	if n := buf.Reader.Buffered(); n > 0 {
		b, _ := buf.Reader.Peek(n)
		_, _ = up.Write(b)
	}
	go func() {
		defer p.wg.Done()
		done := make(chan struct{}, 2)
		go func() { _, _ = io.Copy(up, down); done <- struct{}{} }()
		go func() { _, _ = io.Copy(down, up); done <- struct{}{} }()
		<-done
		up.Close()
		down.Close()
		<-done
		p.mu.Lock()
		delete(p.tunnels, up)
		delete(p.tunnels, down)
		p.mu.Unlock()
	}()
}

// track records a tunnel's connections for Close and counts its
// goroutine; false once closed.
func (p *Proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	for _, c := range cs {
		p.tunnels[c] = struct{}{}
	}
	p.wg.Add(1) // under mu, so never after Close's Wait began
	return true
}
