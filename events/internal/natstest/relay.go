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

	mu      sync.Mutex
	cut     bool
	drop    bool  // what clients send is swallowed
	dropped int64 // bytes swallowed
	conns   []net.Conn
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

// Open lets connections through again, both ways.
func (r *Relay) Open() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cut, r.drop = false, false
}

// Drop swallows what clients send until Open, while the connections stay
// up: a request sent now never reaches the server, as one sent to a server
// killed before it could answer.
func (r *Relay) Drop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.drop = true
}

// Dropped is how many bytes the relay has swallowed.
func (r *Relay) Dropped() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.dropped
}

// dropping says whether n bytes just read are to be swallowed, and counts
// them if so.
func (r *Relay) dropping(n int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.drop {
		r.dropped += int64(n)
	}
	return r.drop
}

// forward copies what the client c sends to the server u, unless the
// relay drops it.
func (r *Relay) forward(u, c net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 && !r.dropping(n) {
			if _, err := u.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
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
		go func() { r.forward(u, c); u.Close(); c.Close() }()
		go func() { _, _ = io.Copy(c, u); u.Close(); c.Close() }()
	}
}
