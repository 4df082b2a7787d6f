package natstest

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"
)

// Relay is a loopback TCP relay to a server: a client that connects
// through it can be cut off from a server that goes on running.
type Relay struct {
	ln       net.Listener
	upstream string

	mu    sync.Mutex
	cut   bool
	conns []net.Conn
}

// StartRelay relays to the server at url (nats://host:port) until the
// test ends, and returns the relay; its URL is what clients dial.
func StartRelay(t testing.TB, url string) *Relay {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &Relay{ln: ln, upstream: strings.TrimPrefix(url, "nats://")}
	go r.accept()
	t.Cleanup(func() { ln.Close(); r.Cut() })
	return r
}

// URL is the relay's address, for clients.
func (r *Relay) URL() string { return "nats://" + r.ln.Addr().String() }

// Cut drops every relayed connection and turns new ones away until Open.
func (r *Relay) Cut() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cut = true
	for _, c := range r.conns {
		c.Close()
	}
	r.conns = nil
}

// Open lets connections through again.
func (r *Relay) Open() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cut = false
}

func (r *Relay) accept() {
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		u, err := net.Dial("tcp", r.upstream)
		r.mu.Lock()
		if err != nil || r.cut {
			r.mu.Unlock()
			c.Close()
			if u != nil {
				u.Close()
			}
			continue
		}
		r.conns = append(r.conns, c, u)
		r.mu.Unlock()
		go func() { _, _ = io.Copy(u, c); u.Close(); c.Close() }()
		go func() { _, _ = io.Copy(c, u); u.Close(); c.Close() }()
	}
}
