package provider

import (
	"maps"
	"slices"

	"github.com/zonestream/zonestream/events"
)

// CloneEndpoints copies eps deep enough that a caller changing what it got
// leaves the original alone: for providers that answer a listing of an
// unchanged zone from what they listed before.
func CloneEndpoints(eps []events.Endpoint) []events.Endpoint {
	out := slices.Clone(eps)
	for i := range out {
		out[i].Targets = slices.Clone(out[i].Targets)
		out[i].Labels = maps.Clone(out[i].Labels)
		out[i].ProviderSpecific = slices.Clone(out[i].ProviderSpecific)
	}
	return out
}
