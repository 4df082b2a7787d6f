package dedup

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/zonestream/zonestream/events"
)

// contribution is what one object wants at one DNS name.
type contribution struct {
	object    events.ObjectRef
	endpoints []events.Endpoint
}

// ranking orders sources: a lower rank wins. Sources not listed rank last,
// all equal, so with no priority configured every source contributes.
type ranking map[string]int

func newRanking(priority []string) ranking {
	r := make(ranking, len(priority))
	for i, s := range priority {
		if _, dup := r[s]; !dup {
			r[s] = i
		}
	}
	return r
}

func (r ranking) of(source string) int {
	if rank, ok := r[source]; ok {
		return rank
	}
	return len(r)
}

// merge decides what is wanted at one name. The best-ranked source keeps
// every record type it has there; every other source loses the whole name
// (name level, not type level, so two sources never mix at one name). The
// winners' endpoints are merged per RRset: targets are united, and the
// shortest configured TTL is kept.
func merge(name string, contribs []contribution, rank ranking) *events.DesiredState {
	d := &events.DesiredState{DNSName: name}
	if len(contribs) == 0 {
		return d
	}
	best := slices.MinFunc(contribs, func(a, b contribution) int {
		return cmp.Compare(rank.of(a.object.Source), rank.of(b.object.Source))
	})
	winning := rank.of(best.object.Source)
	merged := map[events.RRsetKey]*events.Endpoint{}
	for _, c := range contribs {
		if rank.of(c.object.Source) != winning {
			d.Losers = append(d.Losers, events.Loser{Object: c.object,
				Reason: fmt.Sprintf("source %q outranks %q", best.object.Source, c.object.Source)})
			continue
		}
		d.Contributors = append(d.Contributors, c.object)
		for _, ep := range c.endpoints {
			m, ok := merged[ep.Key()]
			if !ok {
				cp := ep
				cp.Targets = slices.Clone(ep.Targets)
				cp.Labels = nil
				merged[ep.Key()] = &cp
				continue
			}
			m.Targets = append(m.Targets, ep.Targets...)
			if ep.RecordTTL != 0 && (m.RecordTTL == 0 || ep.RecordTTL < m.RecordTTL) {
				m.RecordTTL = ep.RecordTTL
			}
		}
	}
	for _, ep := range merged {
		d.Endpoints = append(d.Endpoints, *ep)
	}
	events.SortEndpoints(d.Endpoints)
	return d
}
