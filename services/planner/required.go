package planner

import (
	"slices"

	"github.com/zonestream/zonestream/events"
)

// A complete mark names the collectors that were synced for it
// (events.DesiredComplete Collectors). The planner keeps those of the last
// complete mark it trusted, and of the mark read back at start (history
// only adds requirements: it never allows a delete), and refuses a later
// complete mark that drops one of them without listing it, or its cluster,
// as retired. Dedup keeps who must be synced across restarts and the loss
// of the sources stream; this is the defence behind it, for when its
// memory is lost too (the desired stream purged as well).

// requiredCollectors are the collectors a complete mark must still name.
type requiredCollectors []events.CollectorRef

// add requires refs too.
func (r *requiredCollectors) add(refs []events.CollectorRef) {
	for _, ref := range refs {
		if !slices.ContainsFunc(*r, sameCollector(ref)) {
			*r = append(*r, ref)
		}
	}
}

// dropped returns a required collector that c silently leaves out: not
// named, not retired, nor its cluster.
func (r requiredCollectors) dropped(c events.DesiredComplete) (events.CollectorRef, bool) {
	for _, ref := range r {
		if !slices.ContainsFunc(c.Collectors, sameCollector(ref)) &&
			!slices.ContainsFunc(c.RetiredCollectors, sameCollector(ref)) && !slices.Contains(c.RetiredClusters, ref.Cluster) {
			return ref, true
		}
	}
	return events.CollectorRef{}, false
}

func sameCollector(ref events.CollectorRef) func(events.CollectorRef) bool {
	return func(o events.CollectorRef) bool { return o.Cluster == ref.Cluster && o.Collector == ref.Collector }
}
