package dnsprovider

import (
	"context"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
)

// sweep withdraws the zone lists of declared providers whose object went
// while no controller watched (deleted while the applier was down): their
// scopes would otherwise claim their domains for ever. Only objects this
// controller watches are judged: a ClusterDNSProvider, or a DNSProvider
// of a watched namespace.
func (c *Controller) sweep(ctx context.Context, js jetstream.JetStream, w *watch) error {
	var (
		mu   sync.Mutex
		gone []string
	)
	err := events.ReadLast(ctx, js, events.StreamObserved, []string{events.SubjectZones + ".*"}, func(r events.Received) {
		var zl events.ZoneList
		if r.IsTombstone() || events.Unmarshal(r.Header, r.Data, &zl) != nil || zl.Scope == nil {
			return
		}
		ns, _, ok := cutKey(zl.Scope.Declared)
		if !ok || zl.Provider != zl.Scope.Declared || (ns != "" && informerOf(w.providers, ns) == nil) {
			return
		}
		if w.object(zl.Provider) == nil {
			mu.Lock()
			gone = append(gone, zl.Provider)
			mu.Unlock()
		}
	})
	if err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	for _, key := range gone {
		if err := c.withdraw(ctx, js, key); err != nil {
			return err
		}
		c.log.Info("declared provider gone while no applier watched: its zone list withdrawn; its records stay", "provider", key)
	}
	return nil
}
