package crdregistry

import (
	"slices"
	"strconv"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/domains"
	"github.com/zonestream/zonestream/events/registry"
)

// Virtual ownership records: what the planner, which plans TXT ownership,
// is shown in place of the DNSRecords. They are named as the planner names
// ownership records in crd mode (registry.CRDNames): a-www.example.org for
// A www.example.org, and at the zone's apex, where that name would fall
// outside the zone, the apex itself, with one string listing the types
// (record-type/A=managed...), which the planner keeps as it finds them.

// ownershipKey is the ownership record of the record set k in zone.
func ownershipKey(k events.RRsetKey, alias bool, zone string) events.RRsetKey {
	name := registry.CRDNames().TXTName(k.DNSName, registry.OwnedAsType(k.RecordType, alias))
	if !domains.Within(name, zone) {
		name = k.DNSName
	}
	return events.RRsetKey{DNSName: name, RecordType: events.RecordTypeTXT, SetIdentifier: k.SetIdentifier}
}

// isApex says whether the ownership record at txtName is an apex one,
// speaking for the types its string lists.
func isApex(txtName, zone string) bool { return txtName == zone }

// labelsOf is the registry string a DNSRecord stands for.
func labelsOf(r *DNSRecord) registry.Labels {
	return registry.Labels{Owner: r.Owner(), Resource: r.Spec.Endpoint.Labels[endpointResourceLabel]}
}

// virtualRecords are the ownership TXT records of recs, those of the zone
// that are Ready, by key: ours, and other owners', which the planner leaves
// alone.
func virtualRecords(recs []*DNSRecord, zone string) map[events.RRsetKey]events.Endpoint {
	type group struct {
		recs []*DNSRecord
	}
	groups := map[events.RRsetKey]*group{}
	for _, r := range recs {
		if !r.Ready() {
			continue // not applied as written: not ours yet (ExternalDNS' rule)
		}
		k := ownershipKey(r.Spec.Endpoint.Key(), isAlias(r.Spec.Endpoint), zone)
		if groups[k] == nil {
			groups[k] = &group{}
		}
		groups[k].recs = append(groups[k].recs, r)
	}
	out := make(map[events.RRsetKey]events.Endpoint, len(groups))
	for k, g := range groups {
		slices.SortFunc(g.recs, func(a, b *DNSRecord) int { return events.CompareEndpoints(a.Spec.Endpoint, b.Spec.Endpoint) })
		var strs []string
		var ttl int64
		if isApex(k.DNSName, zone) {
			// One string per owner, listing its types.
			byOwner := map[string]*registry.Labels{}
			for _, r := range g.recs {
				l := byOwner[r.Owner()]
				if l == nil {
					first := labelsOf(r)
					l = &first
					byOwner[r.Owner()] = l
				}
				l.Types = append(l.Types, r.Spec.Endpoint.RecordType)
				if l.Resource == "" {
					l.Resource = labelsOf(r).Resource
				}
			}
			for _, l := range byOwner {
				slices.Sort(l.Types)
				l.Types = slices.Compact(l.Types)
				strs = append(strs, l.Format())
			}
		} else {
			for _, r := range g.recs {
				strs = append(strs, labelsOf(r).Format())
			}
		}
		for _, r := range g.recs {
			if t := r.Spec.Endpoint.RecordTTL; t > 0 && (ttl == 0 || t < ttl) {
				ttl = t
			}
		}
		ep := events.NewEndpoint(k.DNSName, events.RecordTypeTXT, ttl, strs...)
		ep.SetIdentifier = k.SetIdentifier
		out[k] = ep
	}
	return out
}

// inZone keeps the DNSRecords whose name zone holds, and no more specific
// zone of zones does.
func inZone(recs []*DNSRecord, zone string, zones []string) []*DNSRecord {
	var out []*DNSRecord
	for _, r := range recs {
		if belongs(r.Spec.Endpoint.DNSName, zone, zones) {
			out = append(out, r)
		}
	}
	return out
}

// belongs says whether name is in zone and in no more specific zone of zones.
func belongs(name, zone string, zones []string) bool {
	if !domains.Within(name, zone) {
		return false
	}
	for _, z := range zones {
		if len(z) > len(zone) && domains.Within(name, z) {
			return false
		}
	}
	return true
}

// splitRegistry sorts a TXT RRset's strings into registry strings (ours to
// keep in DNSRecords, never in DNS) and the rest.
func splitRegistry(targets []string) (reg, other []string) {
	for _, t := range targets {
		if _, ok := registry.Parse(t); ok {
			reg = append(reg, t)
		} else {
			other = append(other, t)
		}
	}
	return reg, other
}

// isAlias says whether the record carries alias=true, as the planner reads it.
func isAlias(ep events.Endpoint) bool {
	for _, p := range ep.ProviderSpecific {
		if p.Name == "alias" {
			b, _ := strconv.ParseBool(p.Value)
			return b
		}
	}
	return false
}
