package rfc2136

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// idleLimit is how long a connection may wait unused before it is closed
// rather than used again: well under the servers' own idle timeouts (BIND:
// tcp-idle-timeout, 30 s), so a connection taken from the pool is seldom
// one the server has already dropped.
const idleLimit = 10 * time.Second

// conns keeps one idle connection per server, so that the UPDATEs of a
// plan, and of the plans after it, share one TCP (or TLS) connection: a
// dial per message cost more CPU than building and signing the message.
type conns struct {
	mu   sync.Mutex
	idle map[string]idleConn
}

// idleConn is the network connection alone: each exchange wraps it in a
// new dns.Conn, since a dns.Conn signs a request with the MAC of the one
// before (for zone transfers), which a server rejects on a second UPDATE.
type idleConn struct {
	conn  net.Conn
	since time.Time
}

// get returns addr's idle connection, if one was left recently enough, and
// whether it is one.
func (cs *conns) get(addr string) (net.Conn, bool) {
	cs.mu.Lock()
	ic, ok := cs.idle[addr]
	delete(cs.idle, addr)
	cs.mu.Unlock()
	if !ok {
		return nil, false
	}
	if time.Since(ic.since) > idleLimit {
		ic.conn.Close()
		return nil, false
	}
	return ic.conn, true
}

// put leaves c for the next exchange with addr; a second idle connection
// is closed.
func (cs *conns) put(addr string, c net.Conn) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if _, ok := cs.idle[addr]; ok {
		c.Close()
		return
	}
	if cs.idle == nil {
		cs.idle = map[string]idleConn{}
	}
	cs.idle[addr] = idleConn{conn: c, since: time.Now()}
}

// exchange sends m to addr over an idle connection, or a new one, and
// leaves the connection for the next exchange once it has answered. A
// connection that fails is closed. When a reused one fails, the server
// may have dropped it while it was idle: m is sent once more on a new
// connection. That is safe even if the first copy was applied, since an
// UPDATE carries its changes' preconditions: the second one then fails
// them and reads as stale.
func (cs *conns) exchange(ctx context.Context, c *dns.Client, m *dns.Msg, addr string) (*dns.Msg, error) {
	// miekg/dns takes only a deadline from ctx: over an open connection a
	// cancelled call (the lease lost, the call abandoned) would still send.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if conn, ok := cs.get(addr); ok {
		// A copy: signing takes the TSIG record out of the message sent.
		r, _, err := c.ExchangeWithConnContext(ctx, m.Copy(), &dns.Conn{Conn: conn})
		if err == nil {
			cs.put(addr, conn)
			return r, nil
		}
		conn.Close()
		var ne net.Error
		if ctx.Err() != nil || errors.As(err, &ne) && ne.Timeout() {
			return nil, err // not a dropped connection: a slow or gone server
		}
	}
	conn, err := c.DialContext(ctx, addr)
	if err != nil {
		return nil, err
	}
	r, _, err := c.ExchangeWithConnContext(ctx, m, conn)
	if err != nil {
		conn.Close()
		return nil, err
	}
	cs.put(addr, conn.Conn)
	return r, nil
}
