package applier

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// listOnly is the applier of a dry run (--dry-run): it lists the provider
// and publishes what it holds, as always, and takes no plan, so the plans
// stay queued for zonestream plans and the portal, and nothing is written.
func (a *Applier) listOnly(ctx context.Context, js jetstream.JetStream) error {
	a.log.Info("dry run (--dry-run): no plan is taken, nothing is written to the provider")
	ticker := time.NewTicker(a.cfg.Interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ticker.C:
			a.fullListing(ctx, js)
		}
	}
}
