package dedup

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/zonestream/zonestream/events"
)

// contribution is what one object wants at one DNS name, its endpoints
// normalized.
type contribution struct {
	object    events.ObjectRef
	endpoints []events.Endpoint
}

// rrset identifies an RRset within one name.
type rrset struct{ recordType, setIdentifier string }

// rules are what merge decides by.
type rules struct {
	sources  ranking
	clusters ranking
	// mergeClusters unites the clusters' records at a name; otherwise the
	// best-ranked cluster keeps the name alone.
	mergeClusters bool
}

// merge decides what is wanted at one name, given who held each RRset in
// the desired state published last. In order:
//
//  1. cluster priority (unless clusters are merged): the best-ranked cluster
//     keeps the whole name;
//  2. source priority: the best-ranked source keeps the whole name;
//  3. CNAME conflict: a CNAME cannot stand beside other types, so it loses
//     to them, as in ExternalDNS;
//  4. per RRset and cluster, the objects of one source that want it with the
//     same TTL are united (uniteSameSource, ExternalDNS' MergeEndpoints);
//     then one of what is left keeps it: the one that already holds it,
//     otherwise the tie-break (compareCandidates);
//  5. per RRset, the clusters' winners are united: targets joined, the
//     shortest configured TTL kept. A CNAME holds one target, so among
//     clusters step 4's rule picks one instead.
//
// Every object that loses something is listed with the reason.
func merge(name string, contribs []contribution, held []events.RRsetHolder, rl rules) *events.DesiredState {
	d := &events.DesiredState{DNSName: name}
	if len(contribs) == 0 {
		return d
	}
	if !rl.mergeClusters {
		contribs = keepBest(d, contribs, "cluster", func(o events.ObjectRef) string { return o.Cluster },
			func(a, b events.ObjectRef) int {
				return cmp.Or(cmp.Compare(rl.clusters.of(a.Cluster), rl.clusters.of(b.Cluster)), cmp.Compare(a.Cluster, b.Cluster))
			})
	}
	contribs = keepBest(d, contribs, "source", func(o events.ObjectRef) string { return o.Source },
		func(a, b events.ObjectRef) int { return cmp.Compare(rl.sources.of(a.Source), rl.sources.of(b.Source)) })

	byKey := candidatesByRRset(contribs)
	dropCNAMEConflict(d, byKey)

	holdersOf := make(map[rrset][]events.ObjectRef, len(held))
	for _, o := range held {
		holdersOf[rrset{o.RecordType, o.SetIdentifier}] = o.Objects
	}
	keys := make([]rrset, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b rrset) int {
		return cmp.Or(cmp.Compare(a.recordType, b.recordType), cmp.Compare(a.setIdentifier, b.setIdentifier))
	})
	contributors := map[events.ObjectRef]struct{}{}
	for _, k := range keys {
		winners := winnersPerCluster(d, name, byKey[k], holdersOf[k], rl.clusters)
		if k.recordType == events.RecordTypeCNAME && len(winners) > 1 {
			win, lost := pickWinner(name, winners, holdersOf[k])
			d.Losers = append(d.Losers, lost...)
			winners = []candidate{win}
		}
		holder := events.RRsetHolder{RecordType: k.recordType, SetIdentifier: k.setIdentifier}
		for _, w := range winners {
			for _, o := range w.objects() {
				holder.Objects = append(holder.Objects, o)
				contributors[o] = struct{}{}
			}
		}
		d.Holders = append(d.Holders, holder)
		d.Endpoints = append(d.Endpoints, unite(winners))
	}
	for o := range contributors {
		d.Contributors = append(d.Contributors, o)
	}
	slices.SortFunc(d.Contributors, events.CompareRefs)
	if n := len(d.Losers); n > events.MaxLosers {
		slices.SortFunc(d.Losers, func(a, b events.Loser) int {
			return cmp.Or(events.CompareRefs(a.Object, b.Object), cmp.Compare(a.Reason, b.Reason))
		})
		d.Losers, d.LosersOmitted = d.Losers[:events.MaxLosers], n-events.MaxLosers
	}
	return d
}

// keepBest keeps the contributions whose objects rank best by compare; the
// others lose the whole name.
func keepBest(d *events.DesiredState, contribs []contribution, what string, attr func(events.ObjectRef) string,
	compare func(a, b events.ObjectRef) int) []contribution {
	best := slices.MinFunc(contribs, func(a, b contribution) int { return compare(a.object, b.object) }).object
	kept := contribs[:0:0]
	for _, c := range contribs {
		if compare(c.object, best) == 0 {
			kept = append(kept, c)
			continue
		}
		d.Losers = append(d.Losers, events.Loser{Object: c.object,
			Reason: fmt.Sprintf("%s %q outranks %q", what, attr(best), attr(c.object))})
	}
	return kept
}

// candidatesByRRset groups the endpoints wanted by RRset. An object that
// lists one RRset twice wants the union of both.
func candidatesByRRset(contribs []contribution) map[rrset][]candidate {
	byKey := map[rrset][]candidate{}
	for _, c := range contribs {
		for _, ep := range c.endpoints {
			k := rrset{ep.RecordType, ep.SetIdentifier}
			cs := byKey[k]
			if i := slices.IndexFunc(cs, func(x candidate) bool { return x.object == c.object }); i >= 0 {
				cs[i].ep.Targets = append(slices.Clone(cs[i].ep.Targets), ep.Targets...)
				cs[i].ep.Normalize()
				continue
			}
			byKey[k] = append(cs, candidate{object: c.object, ep: ep})
		}
	}
	return byKey
}

// dropCNAMEConflict removes every CNAME candidate when other types are
// wanted at the name (RFC 1034 3.6.2: a CNAME stands alone). Preferring the
// other types is ExternalDNS' rule, and it does not depend on who came first.
func dropCNAMEConflict(d *events.DesiredState, byKey map[rrset][]candidate) {
	var others []string
	var cnames []rrset
	for k := range byKey {
		if k.recordType == events.RecordTypeCNAME {
			cnames = append(cnames, k)
		} else if !slices.Contains(others, k.recordType) {
			others = append(others, k.recordType)
		}
	}
	if len(cnames) == 0 || len(others) == 0 {
		return
	}
	slices.Sort(others)
	reason := fmt.Sprintf("CNAME conflicts with %s at %s", strings.Join(others, ", "), d.DNSName)
	for _, k := range cnames {
		for _, c := range byKey[k] {
			d.Losers = append(d.Losers, events.Loser{Object: c.object, Reason: reason})
		}
		delete(byKey, k)
	}
}

// winnersPerCluster picks one candidate per cluster, in cluster order.
func winnersPerCluster(d *events.DesiredState, name string, cs []candidate, holders []events.ObjectRef, clusters ranking) []candidate {
	byCluster := map[string][]candidate{}
	for _, c := range cs {
		byCluster[c.object.Cluster] = append(byCluster[c.object.Cluster], c)
	}
	winners := make([]candidate, 0, len(byCluster))
	for _, group := range byCluster {
		win, lost := pickWinner(name, uniteSameSource(group), holders)
		d.Losers = append(d.Losers, lost...)
		winners = append(winners, win)
	}
	slices.SortFunc(winners, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(clusters.of(a.object.Cluster), clusters.of(b.object.Cluster)),
			cmp.Compare(a.object.Cluster, b.object.Cluster))
	})
	return winners
}

// unite joins the winners' endpoints for one RRset: all targets, the
// shortest configured TTL, the rest from the best-ranked cluster's winner.
func unite(winners []candidate) events.Endpoint {
	ep := winners[0].ep
	ep.Targets = slices.Clone(ep.Targets)
	ep.ProviderSpecific = slices.Clone(ep.ProviderSpecific)
	ep.Labels = nil
	for _, w := range winners[1:] {
		ep.Targets = append(ep.Targets, w.ep.Targets...)
		if t := w.ep.RecordTTL; t != 0 && (ep.RecordTTL == 0 || t < ep.RecordTTL) {
			ep.RecordTTL = t
		}
	}
	ep.Normalize()
	return ep
}
