package events

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// publishMsg publishes msg and waits for the stream's acknowledgement, as
// js.PublishMsg does, but does not wait for an answer that cannot come.
// A request sent before the connection lost its server went to a server
// that is gone, or its answer goes to a connection that no longer exists.
// nats.go fails pending asynchronous publishes at that moment
// (ErrDisconnected); a synchronous one would wait out its whole timeout
// (ten seconds for a collector's object), and every stage behind it with
// it. So the request is sent once more at once: nats.go holds it until it
// has reconnected, and the stream keeps one copy (the same Nats-Msg-Id)
// if the first did land.
func publishMsg(ctx context.Context, js jetstream.JetStream, msg *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	ack, err := publishOnce(ctx, js, msg, opts...)
	if errors.Is(err, nats.ErrDisconnected) {
		publishesCutOff.Inc()
		ack, err = publishOnce(ctx, js, msg, opts...)
	}
	return ack, err
}

// publishOnce publishes msg, giving up with ErrDisconnected when the
// connection loses its server before the answer came.
func publishOnce(ctx context.Context, js jetstream.JetStream, msg *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	nc := js.Conn()
	if nc == nil {
		return js.PublishMsg(ctx, msg, opts...)
	}
	pctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(untilDisconnect(nc), func() { cancel(nats.ErrDisconnected) })
	defer stop()
	ack, err := js.PublishMsg(pctx, msg, opts...)
	if errors.Is(err, context.Canceled) && ctx.Err() == nil && errors.Is(context.Cause(pctx), nats.ErrDisconnected) {
		err = fmt.Errorf("sent before NATS disconnected, so no answer will come: %w", nats.ErrDisconnected)
	}
	return ack, err
}

// publishesCutOff counts the publishes whose connection lost its server
// before they were acknowledged, each sent once more.
var publishesCutOff = promauto.NewCounter(prometheus.CounterOpts{
	Name: "zonestream_publishes_cut_off_total",
	Help: "publishes whose NATS connection lost its server before they were acknowledged; each is sent once more at once",
})

// lives holds, per connection, a context that ends when the connection
// next loses its server or closes: one status listener per connection,
// not one per publish. What is published while the connection is down
// waits in nats.go's reconnect buffer and goes to the server it reconnects
// to, so the attempts to reconnect that fail (each says RECONNECTING
// again) end nothing: only a loss of the server after it was connected.
var (
	lives   sync.Map // *nats.Conn → *connLife
	livesMu sync.Mutex
)

type connLife struct {
	mu     sync.Mutex
	ctx    context.Context
	cancel context.CancelFunc
	down   bool // lost its server, not yet connected again
}

func (l *connLife) current() context.Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ctx
}

// untilDisconnect returns a context that ends when nc next loses its
// server or closes.
func untilDisconnect(nc *nats.Conn) context.Context {
	if l, ok := lives.Load(nc); ok {
		return l.(*connLife).current()
	}
	livesMu.Lock()
	defer livesMu.Unlock()
	if l, ok := lives.Load(nc); ok {
		return l.(*connLife).current()
	}
	l := &connLife{}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	status := nc.StatusChanged(nats.CONNECTED, nats.RECONNECTING, nats.CLOSED)
	if nc.IsClosed() {
		// No status will ever come: nothing to follow.
		nc.RemoveStatusListener(status)
		l.cancel()
		return l.ctx
	}
	l.down = !nc.IsConnected()
	lives.Store(nc, l)
	go l.follow(nc, status)
	return l.ctx
}

// follow ends the connection's current life when it loses its server,
// and begins the next, until the connection closes.
func (l *connLife) follow(nc *nats.Conn, status chan nats.Status) {
	for s := range status {
		l.mu.Lock()
		switch {
		case s == nats.CLOSED:
			l.cancel()
			l.mu.Unlock()
			lives.Delete(nc)
			nc.RemoveStatusListener(status)
			return
		case s == nats.CONNECTED:
			l.down = false
		case !l.down:
			l.cancel()
			l.ctx, l.cancel = context.WithCancel(context.Background())
			l.down = true
		}
		l.mu.Unlock()
	}
}
