package rest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/flowtrack/flowtrack/api"
)

// ListenConfig configures Listen.
type ListenConfig struct {
	// Addr is the TCP address to listen on (host:port; port 0 picks one).
	Addr string
	// TLSCert and TLSKey are PEM files: with them the listener speaks
	// HTTPS only.
	TLSCert, TLSKey string
	// Insecure allows a listener beyond loopback without authentication.
	Insecure bool
	// API configures the API served.
	API Config
	// Handlers are served beside the API, by net/http ServeMux pattern
	// ("/metrics"), without the API's authentication: the metrics and
	// health checks (server/monitor) that Prometheus and an
	// orchestrator's probes read, as GET /v2/status is.
	Handlers map[string]http.Handler
}

// ErrInsecure is returned by Listen for a listener beyond loopback
// without authentication, unless ListenConfig.Insecure says so.
var ErrInsecure = api.ErrInsecure

// Server is a running REST listener.
type Server struct {
	api  *API
	http *http.Server
	ln   net.Listener
	done chan error
	tls  bool
}

// Listen starts serving the API on cfg.Addr until Close.
func Listen(cfg ListenConfig) (*Server, error) {
	if (cfg.TLSCert == "") != (cfg.TLSKey == "") {
		return nil, errors.New("rest: a TLS certificate needs its key and a key its certificate")
	}
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("rest: listen address %q: %w", cfg.Addr, err)
	}
	if cfg.API.Auth == nil && !cfg.Insecure && !loopback(host) {
		return nil, fmt.Errorf("rest: %s: %w (configure users or OAuth, or listen on 127.0.0.1)", cfg.Addr, ErrInsecure)
	}
	var tlsConf *tls.Config
	if cfg.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("rest: TLS: %w", err)
		}
		tlsConf = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	api, err := New(cfg.API)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		_ = api.Close()
		return nil, fmt.Errorf("rest: %w", err)
	}
	if tlsConf != nil {
		ln = tls.NewListener(ln, tlsConf)
	}
	var h http.Handler = api
	if len(cfg.Handlers) > 0 {
		mux := http.NewServeMux()
		mux.Handle("/", api)
		for pattern, handler := range cfg.Handlers {
			mux.Handle(pattern, handler)
		}
		h = mux
	}
	s := &Server{api: api, ln: ln, done: make(chan error, 1), tls: tlsConf != nil,
		http: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}}
	go func() { s.done <- s.http.Serve(ln) }()
	return s, nil
}

// loopback reports whether host names only the loopback interface.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// URL is the listener's base URL (without /v2).
func (s *Server) URL() string {
	scheme := "http"
	if s.tls {
		scheme = "https"
	}
	return scheme + "://" + s.ln.Addr().String()
}

// Close stops listening, waits for the requests under way (until ctx
// ends) and stops the projection.
func (s *Server) Close(ctx context.Context) error {
	err := s.http.Shutdown(ctx)
	if e := <-s.done; e != nil && !errors.Is(e, http.ErrServerClosed) {
		err = errors.Join(err, e)
	}
	return errors.Join(err, s.api.Close())
}
