package rfc2136

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strconv"
	"sync/atomic"

	"github.com/zonestream/zonestream/services/applier/provider"
)

// server is one --rfc2136-host: its address and, with --rfc2136-use-tls,
// the TLS configuration that verifies it by its own name.
type server struct {
	addr string
	tls  *tls.Config // nil without --rfc2136-use-tls
}

// servers are the --rfc2136-host servers, as ExternalDNS' rfc2136 provider
// uses them with its default load-balancing strategy (disabled): every
// transfer and update goes to the one that answered last (the first at
// start), and to the next in turn when it does not answer (no
// connection, a timeout, SERVFAIL, a refusal), each once. An answer that
// the plan is stale is an answer: the other servers are not asked.
type servers struct {
	list    []server
	current atomic.Int32
}

func newServers(cfg Config) (*servers, error) {
	s := &servers{}
	for _, h := range cfg.hosts() {
		t, err := cfg.TLS.build(h)
		if err != nil {
			return nil, err
		}
		s.list = append(s.list, server{addr: net.JoinHostPort(h, strconv.Itoa(cfg.Port)), tls: t})
	}
	return s, nil
}

// try runs f on the servers in turn, from the current one, until one
// answers; it returns that answer, or the last server's error.
func (s *servers) try(ctx context.Context, f func(server) error) error {
	start := int(s.current.Load())
	var err error
	for i := range s.list {
		n := (start + i) % len(s.list)
		if err = f(s.list[n]); err == nil || errors.Is(err, provider.ErrStale) {
			s.current.Store(int32(n))
			return err
		}
		if ctx.Err() != nil {
			return err
		}
	}
	return err
}

// inUse is the server that answered last.
func (s *servers) inUse() server { return s.list[s.current.Load()] }
