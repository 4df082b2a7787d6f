// Package inmemory is a provider that keeps zones in memory, as
// ExternalDNS' inmemory provider: for tests, demos and dry runs.
package inmemory

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"sync"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/service"
	"github.com/zonestream/zonestream/services/applier/provider"
)

// Name is the provider's --provider value and subject token.
const Name = "inmemory"

// Config holds the provider's flags.
type Config struct {
	Zones service.StringList
}

// RegisterFlags registers --inmemory-zone.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.Var(&c.Zones, "inmemory-zone", "a zone the inmemory provider manages (repeatable, or comma-separated)")
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	if len(c.Zones) == 0 {
		return errors.New("inmemory: at least one --inmemory-zone is required")
	}
	for _, z := range c.Zones {
		if events.NormalizeName(z) == "" {
			return fmt.Errorf("inmemory: empty --inmemory-zone")
		}
	}
	return nil
}

// Provider is a thread-safe in-memory DNS provider.
type Provider struct {
	defaultTTL int64
	mu         sync.Mutex
	zones      map[string]map[events.RRsetKey]events.Endpoint
}

var _ provider.Provider = (*Provider)(nil)

// New builds the provider with the configured zones, all empty.
func New(cfg Config, opts provider.Options) (*Provider, error) {
	opts = opts.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p := &Provider{defaultTTL: opts.DefaultTTL, zones: map[string]map[events.RRsetKey]events.Endpoint{}}
	for _, z := range cfg.Zones {
		p.zones[events.NormalizeName(z)] = map[events.RRsetKey]events.Endpoint{}
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

// Records returns every RRset of zone.
func (p *Provider) Records(_ context.Context, zone string) ([]events.Endpoint, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	z, ok := p.zones[zone]
	if !ok {
		return nil, provider.Permanentf("inmemory: unknown zone %q", zone)
	}
	eps := make([]events.Endpoint, 0, len(z))
	for _, ep := range z {
		ep.Targets = slices.Clone(ep.Targets)
		eps = append(eps, ep)
	}
	events.SortEndpoints(eps)
	return eps, nil
}

func key(ep events.Endpoint) events.RRsetKey {
	ep = provider.NormalizeEndpoint(ep)
	return events.RRsetKey{DNSName: ep.DNSName, RecordType: ep.RecordType, SetIdentifier: ep.SetIdentifier}
}

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
		ep, ok := z[k]
		return ep, ok
	}
	for _, c := range changes {
		var k events.RRsetKey
		if c.Old != nil {
			k = key(*c.Old)
		} else {
			k = key(*c.New)
		}
		have, exists := current(k)
		switch {
		case c.Old == nil && exists:
			return fmt.Errorf("%w: %s: %s %s exists", provider.ErrStale, c, k.DNSName, k.RecordType)
		case c.Old != nil && !exists:
			return fmt.Errorf("%w: %s: %s %s does not exist", provider.ErrStale, c, k.DNSName, k.RecordType)
		case c.Old != nil && !provider.SameTargets(*c.Old, have):
			return fmt.Errorf("%w: %s: holds %v, plan expected %v", provider.ErrStale, c, have.Targets, c.Old.Targets)
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
		if ep == nil {
			delete(z, k)
		} else {
			z[k] = *ep
		}
	}
	return nil
}
