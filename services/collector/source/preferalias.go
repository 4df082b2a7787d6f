package source

import (
	"slices"
	"strings"

	"github.com/zonestream/zonestream/events"
)

// PropertyAlias is the provider-specific property that asks a provider
// with ALIAS records (PowerDNS, AWS) for one instead of a CNAME.
const PropertyAlias = "alias"

// PreferAlias is --prefer-alias, as ExternalDNS v0.23's post-processor
// applies it after every other wrapper: each CNAME endpoint that does not
// say otherwise gets alias=true. An endpoint that already carries the
// property (alias=false from a DNSEndpoint entry) keeps it: the object's
// own word wins over the flag.
type PreferAlias bool

// Apply returns eps with alias=true on every CNAME without an alias
// property. The source's slice is left as it is.
func (p PreferAlias) Apply(eps []events.Endpoint) []events.Endpoint {
	if !p {
		return eps
	}
	var out []events.Endpoint
	for i, ep := range eps {
		if ep.RecordType != events.RecordTypeCNAME || hasProperty(ep, PropertyAlias) {
			continue
		}
		if out == nil {
			out = slices.Clone(eps)
		}
		// In name order, as events.Endpoint.Normalize keeps them.
		props := append(slices.Clone(ep.ProviderSpecific), events.ProviderSpecificProperty{Name: PropertyAlias, Value: "true"})
		slices.SortStableFunc(props, func(a, b events.ProviderSpecificProperty) int { return strings.Compare(a.Name, b.Name) })
		out[i].ProviderSpecific = props
	}
	if out == nil {
		return eps
	}
	return out
}

func hasProperty(ep events.Endpoint, name string) bool {
	return slices.ContainsFunc(ep.ProviderSpecific, func(p events.ProviderSpecificProperty) bool { return p.Name == name })
}
