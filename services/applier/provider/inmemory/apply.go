package inmemory

import (
	"context"
	"fmt"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
)

// Apply applies the batch atomically: all preconditions are checked
// first, and nothing is changed when one fails.
func (p *Provider) Apply(_ context.Context, zone string, changes []events.Change) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	z, ok := p.zones[zone]
	if !ok {
		return provider.Permanentf("inmemory: unknown zone %q", zone)
	}
	// Preconditions are checked against the state as the batch proceeds,
	// so that a batch touching one RRset twice behaves as applied in order.
	next := make(map[events.RRsetKey]*events.Endpoint)
	current := func(k events.RRsetKey) (events.Endpoint, bool) {
		if ep, ok := next[k]; ok {
			if ep == nil {
				return events.Endpoint{}, false
			}
			return *ep, true
		}
		return z.get(k)
	}
	for _, c := range changes {
		k := provider.ChangeKey(c)
		have, exists := current(k)
		if err := provider.CheckOld(c, have, exists); err != nil {
			return fmt.Errorf("inmemory: %w", err)
		}
		if c.New == nil {
			next[k] = nil
			continue
		}
		ep := provider.NormalizeEndpoint(*c.New)
		if ep.RecordTTL <= 0 {
			ep.RecordTTL = p.defaultTTL
		}
		next[k] = &ep
	}
	for k, ep := range next {
		z.set(k, ep)
	}
	return nil
}
