package dnsprovider

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier"
)

// remove stops the applier of key, the object being gone, and publishes
// its zone list's tombstone (no zones, no scope: events/routing forgets
// the provider) and deletes its durable consumer. Its records stay in DNS.
// Every replica does it once its own applier stopped: the leader's
// tombstone comes after its last zone list.
func (c *Controller) remove(ctx context.Context, js jetstream.JetStream, key string) error {
	c.mu.Lock()
	e := c.entries[key]
	delete(c.entries, key)
	c.mu.Unlock()
	if e == nil {
		return nil
	}
	e.run.stop()
	applier.ForgetProvider(key)
	restartsTotal.DeletePartialMatch(prometheus.Labels{"provider": key})
	if err := c.withdraw(ctx, js, key); err != nil {
		return err
	}
	c.log.Info("declared provider gone: its applier stopped, its zone list withdrawn; its records stay", "provider", key)
	return nil
}

// withdraw publishes the tombstone of key's zone list and deletes its
// plan consumer.
func (c *Controller) withdraw(ctx context.Context, js jetstream.JetStream, key string) error {
	if _, _, err := events.Publish(ctx, js, events.ZonesSubject(key), &events.ZoneList{Provider: key}, ""); err != nil {
		return err
	}
	if err := js.DeleteConsumer(ctx, events.StreamPlans, events.ApplierDurable(key)); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		c.log.Warn("deleting the plan consumer of a declared provider that went", "provider", key, "err", err)
	}
	return nil
}
