package projection

import (
	"slices"
	"strings"

	"github.com/zonestream/zonestream/events"
)

// recordSets is what a name wants or holds, as a view keeps it for the
// status rules: one "TYPE target" entry per target, sorted, without
// duplicates, so that two are the same when their entries are. A view
// keeps these instead of the endpoints, which stay on the bus: decoded in
// every view, they took an eighth of the portal's memory per name.
type recordSets []string

// setsOf are the record sets of eps.
func setsOf(eps []events.Endpoint) recordSets {
	var out recordSets
	for _, ep := range eps {
		for _, t := range ep.Targets {
			out = append(out, ep.RecordType+" "+t)
		}
	}
	slices.Sort(out)
	return slices.Clip(slices.Compact(out))
}

// byType maps each record type to its sorted targets.
func (s recordSets) byType() map[string][]string {
	out := map[string][]string{}
	for _, e := range s {
		t, target, _ := strings.Cut(e, " ")
		out[t] = append(out[t], target)
	}
	return out
}

// types are the record types in s.
func (s recordSets) types() []string {
	var out []string
	for _, e := range s {
		t, _, _ := strings.Cut(e, " ")
		if len(out) == 0 || out[len(out)-1] != t {
			out = append(out, t)
		}
	}
	return out
}
