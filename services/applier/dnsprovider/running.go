package dnsprovider

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/leader"
	"github.com/zonestream/zonestream/services/applier"
)

// retryPause is how long an applier that ended by itself waits to run again.
const retryPause = 5 * time.Second

// running is one declared provider at work: a campaign for its lease
// (events.ApplierLease of its bus name) and, while it holds it, its
// applier. The applier is replaced (stopped, then the new one started)
// when the object or its Secret change, without giving up the lease.
type running struct {
	name   string
	cancel context.CancelFunc
	done   chan struct{}
	el     *leader.Elector // nil: no election (a private bus)

	mu      sync.Mutex
	current *applier.Applier // nil: nothing to run (refused)
	version string           // what current was built from
	wake    chan struct{}    // closed when current changes
}

// startRunning campaigns for name's lease and runs its applier while
// holding it. elect nil: it runs at once.
func startRunning(ctx context.Context, js jetstream.JetStream, name string, elect *leader.Config, logger *slog.Logger) (*running, error) {
	r := &running{name: name, done: make(chan struct{}), wake: make(chan struct{})}
	ctx, r.cancel = context.WithCancel(ctx)
	if elect != nil {
		el, err := leader.New(ctx, js, events.ApplierLease(name), *elect, logger)
		if err != nil {
			r.cancel()
			return nil, err
		}
		r.el = el
	}
	go func() {
		defer close(r.done)
		if r.el == nil {
			_ = r.lead(ctx, js)
			return
		}
		_ = r.el.Run(ctx, func(ctx context.Context) error { return r.lead(ctx, js) })
	}()
	return r, nil
}

// leading says whether this replica holds the provider's lease.
func (r *running) leading() bool { return r.el == nil || r.el.Leading() }

// set makes a the applier to run (nil: none), built from version.
func (r *running) set(a *applier.Applier, version string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.current, r.version = a, version
	close(r.wake)
	r.wake = make(chan struct{})
}

// state is the applier to run and what tells when it changes.
func (r *running) state() (*applier.Applier, string, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.current, r.version, r.wake
}

// lead runs the current applier until it is replaced or ctx ends.
func (r *running) lead(ctx context.Context, js jetstream.JetStream) error {
	for {
		a, _, wake := r.state()
		runCtx, stop := context.WithCancel(ctx)
		ended := make(chan struct{})
		go func() {
			defer close(ended)
			if a != nil {
				_ = a.Run(runCtx, js)
			}
		}()
		select {
		case <-ctx.Done():
			stop()
			<-ended
			return ctx.Err()
		case <-wake:
			stop()
			<-ended
		case <-ended:
			// It could not go on (the bus refused its consumer, ...):
			// again after a pause, unless it is replaced first.
			stop()
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-wake:
			case <-time.After(retryPause):
			}
		}
	}
}

// stop ends the campaign and the applier, and returns once they ended
// (the lease released when held).
func (r *running) stop() {
	r.cancel()
	<-r.done
}
