package provider

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/zonestream/zonestream/events"
)

// CacheZones returns p with its zone list kept for ttl
// (--zones-cache-duration): zones are rarely created or deleted, while
// the applier lists them on every full listing. A ttl of 0 or less
// returns p itself. Errors are never cached.
func CacheZones(p Provider, ttl time.Duration) Provider {
	if ttl <= 0 {
		return p
	}
	return &zoneCache{Provider: p, ttl: ttl}
}

type zoneCache struct {
	Provider
	ttl time.Duration

	mu      sync.Mutex
	zones   []string // nil: nothing cached
	expires time.Time
}

// Zones returns the cached list while it is fresh, else asks the provider.
func (c *zoneCache) Zones(ctx context.Context) ([]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.zones != nil && time.Now().Before(c.expires) {
		return slices.Clone(c.zones), nil
	}
	zones, err := c.Provider.Zones(ctx)
	if err != nil {
		return nil, err
	}
	c.zones = append([]string{}, zones...)
	c.expires = time.Now().Add(c.ttl)
	return zones, nil
}

// RecordsAt passes through: an embedded interface does not promote it.
func (c *zoneCache) RecordsAt(ctx context.Context, zone string, names []string) ([]events.Endpoint, error) {
	return RecordsAt(ctx, c.Provider, zone, names)
}
