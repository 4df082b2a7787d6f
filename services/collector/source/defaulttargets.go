package source

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/zonestream/zonestream/events"
)

// DefaultTargets is --default-targets and --force-default-targets, as
// ExternalDNS' multi-source (v0.21, v0.22): an endpoint without targets (a
// DNSEndpoint entry with none) takes the default targets; forced,
// every endpoint of every source does, its own targets dropped. The
// targets are grouped by the type each asks for (IPv4 A, IPv6 AAAA, a name
// CNAME), whatever the endpoint's type was: one endpoint may become up to
// three, each keeping the endpoint's TTL, set identifier, labels and
// provider-specific properties.
type DefaultTargets struct {
	targets []string
	force   bool
}

// ParseDefaultTargets reads the flags; a target neither an address nor a
// host name is an error (ExternalDNS would publish it as a CNAME).
func ParseDefaultTargets(targets []string, force bool) (DefaultTargets, error) {
	d := DefaultTargets{force: force}
	for _, t := range targets {
		t = strings.TrimSuffix(strings.TrimSpace(t), ".")
		if t == "" {
			continue
		}
		if err := ValidateTarget(t); err != nil {
			return DefaultTargets{}, fmt.Errorf("--default-targets: %w", err)
		}
		d.targets = append(d.targets, t)
	}
	return d, nil
}

// Given reports whether there are default targets: only then may a
// DNSEndpoint entry have no targets.
func (d DefaultTargets) Given() bool { return len(d.targets) > 0 }

// Apply gives the endpoints that need them the default targets. Endpoints
// made the same by it (an A and an AAAA at one name, both forced) are kept
// once, as ExternalDNS' dedup does; the source's slice is left as it is.
func (d DefaultTargets) Apply(eps []events.Endpoint) []events.Endpoint {
	if !d.Given() {
		return eps
	}
	out := make([]events.Endpoint, 0, len(eps))
	seen := map[string]bool{}
	keep := func(ep events.Endpoint) {
		id := fmt.Sprint(ep.Key(), ep.Targets)
		if !seen[id] {
			seen[id] = true
			out = append(out, ep)
		}
	}
	for _, ep := range eps {
		if len(ep.Targets) > 0 && !d.force {
			keep(ep)
			continue
		}
		for _, typ := range []string{events.RecordTypeA, events.RecordTypeAAAA, events.RecordTypeCNAME} {
			var targets []string
			for _, t := range d.targets {
				if RecordTypeFor(t) == typ {
					targets = append(targets, t)
				}
			}
			if len(targets) == 0 {
				continue
			}
			defaulted := events.Endpoint{
				DNSName: ep.DNSName, RecordType: typ, Targets: targets,
				SetIdentifier: ep.SetIdentifier, RecordTTL: ep.RecordTTL,
				Labels: maps.Clone(ep.Labels), ProviderSpecific: slices.Clone(ep.ProviderSpecific),
			}
			defaulted.Normalize()
			keep(defaulted)
		}
	}
	slices.SortStableFunc(out, events.CompareEndpoints) // one order, one hash
	return out
}
