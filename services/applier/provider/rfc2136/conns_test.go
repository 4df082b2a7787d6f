package rfc2136_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider/rfc2136"
	"github.com/zonestream/zonestream/testenv/bind"
)

// countingProxy forwards TCP connections on loopback to BIND, counts them,
// and can cut every one open, as a server does to an idle connection.
type countingProxy struct {
	ln       net.Listener
	mu       sync.Mutex
	accepted int
	open     []net.Conn
}

func startProxy(t *testing.T, to string) *countingProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &countingProxy{ln: ln}
	t.Cleanup(func() { ln.Close(); p.cut() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", to)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.accepted++
			p.open = append(p.open, c, up)
			p.mu.Unlock()
			go func() { io.Copy(up, c); up.Close() }()
			go func() { io.Copy(c, up); c.Close() }()
		}
	}()
	return p
}

func (p *countingProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.open {
		c.Close()
	}
	p.open = nil
}

func (p *countingProxy) connections() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

// TestUpdatesShareOneConnection: the UPDATE messages of several plans go
// over one TCP connection; one the server has dropped is replaced, and the
// update still lands.
func TestUpdatesShareOneConnection(t *testing.T) {
	s := bind.StartT(t, "example.org")
	proxy := startProxy(t, net.JoinHostPort(s.Host, strconv.Itoa(s.Port)))
	port := proxy.ln.Addr().(*net.TCPAddr).Port
	p := newProvider(t, s, func(c *rfc2136.Config) { c.Host, c.Port, c.BatchChangeSize = "127.0.0.1", port, 2 })
	ctx := context.Background()
	apply := func(first, n int) {
		t.Helper()
		var changes []events.Change
		for i := first; i < first+n; i++ {
			changes = append(changes, events.Change{New: ep(fmt.Sprintf("c%d.example.org", i), "A", 0, "192.0.2.1")})
		}
		if err := p.Apply(ctx, "example.org", changes); err != nil {
			t.Fatalf("%v\n%s", err, s.Log())
		}
	}
	for plan := range 3 {
		apply(plan*5, 5) // three messages each
	}
	if got := proxy.connections(); got != 1 {
		t.Errorf("9 UPDATE messages took %d connections, want 1", got)
	}
	proxy.cut()
	apply(15, 2)
	if got := proxy.connections(); got != 2 {
		t.Errorf("after the connection was dropped: %d connections, want 2", got)
	}
	for i := range 17 {
		if rrs, err := s.Query(fmt.Sprintf("c%d.example.org", i), dns.TypeA); err != nil || len(rrs) != 1 {
			t.Fatalf("c%d: BIND holds %v (%v)", i, rrs, err)
		}
	}
}
