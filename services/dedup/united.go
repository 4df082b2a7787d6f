package dedup

import (
	"slices"

	"github.com/zonestream/zonestream/events"
)

// uniteSameSource joins the candidates of one cluster that ExternalDNS'
// sources merge (source.MergeEndpoints, in every source since v0.21):
// objects of one source asking for the same RRset with the same TTL want
// the union of their targets, as the hostNetwork Pods of a DaemonSet under
// one hostname, or two Services with one hostname, do. A CNAME holds one
// target, so CNAMEs are joined only when they name the same one. What is
// not joined (another source, another TTL, another CNAME target) stays a
// candidate of its own for the tie-break.
//
// The joined candidate's first object is the lowest of them (ExternalDNS
// keeps the labels of the first object it lists); its provider-specific
// properties are that object's.
func uniteSameSource(cs []candidate) []candidate {
	slices.SortFunc(cs, func(a, b candidate) int { return events.CompareRefs(a.object, b.object) })
	var out []candidate
	for _, c := range cs {
		i := slices.IndexFunc(out, func(u candidate) bool { return joinable(u, c) })
		if i < 0 {
			out = append(out, c)
			continue
		}
		u := &out[i]
		u.united = append(u.united, c.object)
		u.ep.Targets = append(slices.Clone(u.ep.Targets), c.ep.Targets...)
		u.ep.Normalize()
	}
	return out
}

// joinable says whether c is merged into u: same source, TTL and, for a
// CNAME, target. The RRset (type, set identifier) is the caller's.
func joinable(u, c candidate) bool {
	if u.object.Source != c.object.Source || u.ep.RecordTTL != c.ep.RecordTTL {
		return false
	}
	return u.ep.RecordType != events.RecordTypeCNAME || slices.Equal(u.ep.Targets, c.ep.Targets)
}

// objects is every object a candidate's endpoint comes from, its first
// object first.
func (c candidate) objects() []events.ObjectRef {
	return append([]events.ObjectRef{c.object}, c.united...)
}

// holds says whether any object of c holds the RRset.
func (c candidate) holds(holders []events.ObjectRef) bool {
	return slices.ContainsFunc(c.objects(), func(o events.ObjectRef) bool { return slices.Contains(holders, o) })
}
