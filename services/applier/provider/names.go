package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/zonestream/zonestream/events"
)

// NameReader is implemented by providers that can read a few names of a
// zone for less than listing all of it: after a plan, the applier reads
// back only the names the plan touched.
type NameReader interface {
	// RecordsAt returns every RRset the provider holds at names in zone,
	// exactly as Records would list them (all types but the SOA), and
	// nothing at other names.
	RecordsAt(ctx context.Context, zone string, names []string) ([]events.Endpoint, error)
}

// RecordsAt reads names of zone from p when p is a NameReader; otherwise
// the error wraps errors.ErrUnsupported and the caller lists the zone.
func RecordsAt(ctx context.Context, p Provider, zone string, names []string) ([]events.Endpoint, error) {
	if r, ok := p.(NameReader); ok {
		return r.RecordsAt(ctx, zone, names)
	}
	return nil, fmt.Errorf("%T reads whole zones only: %w", p, errors.ErrUnsupported)
}

// AtNames keeps the endpoints of eps whose name is one of names.
func AtNames(eps []events.Endpoint, names []string) []events.Endpoint {
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[events.NormalizeName(n)] = true
	}
	var out []events.Endpoint
	for _, ep := range eps {
		if want[events.NormalizeName(ep.DNSName)] {
			out = append(out, ep)
		}
	}
	return out
}
