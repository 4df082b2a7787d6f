// Package inmemory is a provider that keeps zones in memory, as
// ExternalDNS' inmemory provider: for tests, demos and dry runs.
package inmemory

import (
	"context"
	"slices"
	"sync"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
)

// Provider is a thread-safe in-memory DNS provider.
type Provider struct {
	defaultTTL int64
	mu         sync.Mutex
	zones      map[string]zone
}

var _ provider.Provider = (*Provider)(nil)

// New builds the provider with the configured zones, all empty.
func New(cfg Config, opts provider.Options) (*Provider, error) {
	opts = opts.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p := &Provider{defaultTTL: opts.DefaultTTL, zones: map[string]zone{}}
	for _, z := range cfg.Zones {
		p.zones[events.NormalizeName(z)] = zone{}
	}
	return p, nil
}

// Zones returns the configured zones, sorted.
func (p *Provider) Zones(context.Context) ([]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	zones := make([]string, 0, len(p.zones))
	for z := range p.zones {
		zones = append(zones, z)
	}
	slices.Sort(zones)
	return zones, nil
}

var _ provider.NameReader = (*Provider)(nil)

// Records returns every RRset of zone.
func (p *Provider) Records(_ context.Context, zone string) ([]events.Endpoint, error) {
	return p.read(zone, nil)
}

// RecordsAt returns the RRsets of zone at names: after a plan the applier
// reads back the names it touched, not the whole zone.
func (p *Provider) RecordsAt(_ context.Context, zone string, names []string) ([]events.Endpoint, error) {
	return p.read(zone, names)
}

// read copies the RRsets of zone, only those at names when names is not nil.
func (p *Provider) read(zone string, names []string) ([]events.Endpoint, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	z, ok := p.zones[zone]
	if !ok {
		return nil, provider.Permanentf("inmemory: unknown zone %q", zone)
	}
	var eps []events.Endpoint
	if names == nil {
		eps = make([]events.Endpoint, 0, len(z))
		for name := range z {
			eps = z.appendCopies(eps, name)
		}
	} else {
		eps = make([]events.Endpoint, 0, len(names))
		for _, name := range slices.Compact(slices.Sorted(slices.Values(normalized(names)))) {
			eps = z.appendCopies(eps, name)
		}
	}
	events.SortEndpoints(eps)
	return eps, nil
}

func normalized(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = events.NormalizeName(n)
	}
	return out
}
