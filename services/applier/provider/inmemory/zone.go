package inmemory

import (
	"slices"

	"github.com/zonestream/zonestream/events"
)

// zone is the RRsets of one zone grouped by name, so that reading back
// the names of a plan costs those names, not the zone.
type zone map[string][]events.Endpoint

// get returns the RRset at k.
func (z zone) get(k events.RRsetKey) (events.Endpoint, bool) {
	for _, ep := range z[k.DNSName] {
		if ep.Key() == k {
			return ep, true
		}
	}
	return events.Endpoint{}, false
}

// set puts ep at k, or takes the RRset at k out when ep is nil.
func (z zone) set(k events.RRsetKey, ep *events.Endpoint) {
	sets := slices.DeleteFunc(z[k.DNSName], func(e events.Endpoint) bool { return e.Key() == k })
	if ep != nil {
		sets = append(sets, *ep)
	}
	if len(sets) == 0 {
		delete(z, k.DNSName)
		return
	}
	z[k.DNSName] = sets
}

// appendCopies appends copies of the RRsets at name to eps.
func (z zone) appendCopies(eps []events.Endpoint, name string) []events.Endpoint {
	for _, ep := range z[name] {
		ep.Targets = slices.Clone(ep.Targets)
		eps = append(eps, ep)
	}
	return eps
}
