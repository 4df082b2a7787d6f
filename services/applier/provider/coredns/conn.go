package coredns

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/connectivity"
)

var redials = promauto.NewCounter(prometheus.CounterOpts{
	Name: "zonestream_coredns_etcd_redials_total",
	Help: "etcd clients replaced by a fresh one after their connection stayed in transient failure for 30s.",
})

// reconnectWait is how long an exchange waits for a connection to etcd
// that was in transient failure when it began.
const reconnectWait = 200 * time.Millisecond

// redialAfter is how long a connection may stay in transient failure
// before the client is replaced (a variable for the tests).
var redialAfter = 30 * time.Second

// etcdConn is the provider's etcd client. An exchange asks it for the
// client through connected, which fails within reconnectWait while etcd
// cannot be reached: the etcd client would otherwise wait for a connection
// for the whole request timeout, so a dead etcd would take minutes of
// timed-out retries to show as a failing provider (readiness, metrics)
// instead of seconds.
//
// gRPC tries a failed etcd again only after a backoff that grows to two
// minutes, so an etcd that came back would go unused for that long: each
// exchange asks for an attempt now. And whatever keeps a connection in
// transient failure, a client that stayed there for redialAfter is
// replaced by a fresh one, as a restart of the applier would.
type etcdConn struct {
	cfg clientv3.Config
	log *slog.Logger

	mu        sync.Mutex
	client    *clientv3.Client
	downSince time.Time // when the connection was first seen in transient failure; zero while it is not
}

func dialEtcd(cfg clientv3.Config, log *slog.Logger) (*etcdConn, error) {
	client, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("coredns: etcd client: %w", err)
	}
	return &etcdConn{cfg: cfg, log: log, client: client}, nil
}

// connected returns the client once its connection is not in transient
// failure, waiting reconnectWait at most.
func (e *etcdConn) connected(ctx context.Context) (*clientv3.Client, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	conn := e.client.ActiveConnection()
	st := conn.GetState()
	if st != connectivity.TransientFailure {
		e.downSince = time.Time{}
		return e.client, nil
	}
	if e.downSince.IsZero() {
		e.downSince = time.Now()
	}
	if down := time.Since(e.downSince); down >= redialAfter {
		if err := e.redial(down); err != nil {
			return nil, err
		}
		conn = e.client.ActiveConnection()
	}
	conn.ResetConnectBackoff()
	wctx, cancel := context.WithTimeout(ctx, reconnectWait)
	defer cancel()
	for st = conn.GetState(); st != connectivity.Ready; st = conn.GetState() {
		if st == connectivity.Idle {
			conn.Connect()
		}
		if !conn.WaitForStateChange(wctx, st) {
			return nil, fmt.Errorf("coredns: etcd %v unreachable (connection %s for %s)",
				e.cfg.Endpoints, st, time.Since(e.downSince).Round(time.Second))
		}
	}
	e.downSince = time.Time{}
	return e.client, nil
}

// redial replaces the client by a fresh one; exchanges still under way on
// the old one fail as canceled and are retried.
func (e *etcdConn) redial(down time.Duration) error {
	client, err := clientv3.New(e.cfg)
	if err != nil {
		return fmt.Errorf("coredns: etcd client: %w", err)
	}
	e.log.Warn("coredns: etcd connection in transient failure; dialling anew", "endpoints", e.cfg.Endpoints,
		"for", down.Round(time.Second))
	redials.Inc()
	_ = e.client.Close()
	e.client, e.downSince = client, time.Now()
	return nil
}

// Close closes the client.
func (e *etcdConn) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.client.Close()
}
