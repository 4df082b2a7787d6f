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
// js.PublishMsg does, but is sent once more at once when the connection
// loses its server first (Resend); the stream keeps one copy (the same
// Nats-Msg-Id) if the first did land.
func publishMsg(ctx context.Context, js jetstream.JetStream, msg *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	return Resend(ctx, js.Conn(), func(ctx context.Context) (*jetstream.PubAck, error) {
		return js.PublishMsg(ctx, msg, opts...)
	})
}

// Resend makes request, a request to the server on nc, and makes it once
// more at once when nc loses its server before the answer came. A request
// sent before the connection lost its server went to a server that is
// gone, or its answer goes to a connection that no longer exists, so none
// will come. nats.go fails pending asynchronous publishes at that moment
// (ErrDisconnected); a request would wait out its whole timeout (ten
// seconds for a collector's object, and an applier's plan not acked until
// the server sends it again) while every stage behind it waited too.
// nats.go holds the second request until it has reconnected. request must
// be safe to make twice.
func Resend[T any](ctx context.Context, nc *nats.Conn, request func(context.Context) (T, error)) (T, error) {
	answer, err := requestOnce(ctx, nc, request)
	if errors.Is(err, nats.ErrDisconnected) {
		requestsCutOff.Inc()
		answer, err = requestOnce(ctx, nc, request)
	}
	return answer, err
}

// requestOnce makes request, giving up with ErrDisconnected when nc loses
// its server before the answer came.
func requestOnce[T any](ctx context.Context, nc *nats.Conn, request func(context.Context) (T, error)) (T, error) {
	if nc == nil {
		return request(ctx)
	}
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(untilDisconnect(nc), func() { cancel(nats.ErrDisconnected) })
	defer stop()
	answer, err := request(rctx)
	if errors.Is(err, context.Canceled) && ctx.Err() == nil && errors.Is(context.Cause(rctx), nats.ErrDisconnected) {
		err = fmt.Errorf("sent before NATS disconnected, so no answer will come: %w", nats.ErrDisconnected)
	}
	return answer, err
}

// requestsCutOff counts the requests (publishes, acks) whose connection
// lost its server before they were answered, each sent once more.
var requestsCutOff = promauto.NewCounter(prometheus.CounterOpts{
	Name: "zonestream_requests_cut_off_total",
	Help: "requests to NATS (publishes, acks) whose connection lost its server before they were answered; each is sent once more at once",
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
