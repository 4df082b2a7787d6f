package applier

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
)

// takeOverPending makes the plan an earlier run took and did not ack
// deliverable now rather than after its ack wait: that run is gone (a
// replica runs only while it holds the provider's lease, and the one
// before it stopped first), and waiting would hold every later plan of
// the provider back. Applying the plan again is harmless: its changes'
// preconditions are checked against what the provider holds. The
// consumer is made again from what the work queue holds, as when the
// stream went back in time.
func (a *Applier) takeOverPending(ctx context.Context, js jetstream.JetStream) {
	durable := events.ApplierDurable(a.name)
	cons, err := js.Consumer(ctx, events.StreamPlans, durable)
	if err != nil || cons.CachedInfo().NumAckPending == 0 {
		return
	}
	if err := js.DeleteConsumer(ctx, events.StreamPlans, durable); err != nil {
		a.log.Warn("could not take over the plan an earlier run left unacked; it comes back after its ack wait", "err", err)
		return
	}
	a.log.Info("an earlier run left a plan unacked; taking it over now", "pending", cons.CachedInfo().NumAckPending)
}
