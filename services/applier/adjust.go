package applier

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
)

// adjustTimeout bounds one adjust request's call to the provider; the
// planner's request gives up sooner.
const adjustTimeout = 20 * time.Second

// serveAdjust answers the planner's adjust requests (events.Adjust) with
// the provider's AdjustEndpoints, when it has one; every applier of the
// provider answers in one queue group, so a standby answers too: adjusting
// writes nothing.
func (a *Applier) serveAdjust(js jetstream.JetStream) (stop func(), err error) {
	adj, ok := a.raw.(provider.Adjuster)
	if !ok || js.Conn() == nil {
		return func() {}, nil
	}
	return events.ServeAdjust(js.Conn(), a.name, adjustTimeout, func(ctx context.Context, eps []events.Endpoint) ([]events.Endpoint, error) {
		out, err := provider.Bounded(ctx, a.cfg.ProviderTimeout, func(ctx context.Context) ([]events.Endpoint, error) {
			return adj.AdjustEndpoints(ctx, eps)
		})
		if errors.Is(err, provider.ErrTimeout) {
			a.timedOut("adjust", err)
		}
		if err != nil {
			adjustFailures.WithLabelValues(a.name).Inc()
			// The answer goes to the planner over the bus, as a result would.
			err = provider.RedactError(err)
			a.log.Warn("adjusting desired records failed", "records", len(eps), "err", err)
			return nil, err
		}
		return out, nil
	})
}
