package planner

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/zonestream/zonestream/events"
)

// A provider may rewrite desired records before they are planned
// (ExternalDNS' AdjustEndpoints: Route53 makes a CNAME to an ELB hostname
// an alias A and AAAA). The planner asks its applier (events.Adjust) for
// the dirty names about to be planned, and keeps each answer until the
// name's desired state changes. A name is planned for such a provider only
// from adjusted records: until its applier answers, the zone backs off and
// the name waits.

const (
	// adjustChunk bounds the records of one request, well inside the
	// bus' message size.
	adjustChunk = 1000
	// adjustTimeout bounds one request; the applier's provider may be
	// slow, but the planner's loop must go on.
	adjustTimeout = 10 * time.Second
)

// desiredFor is what provider is to hold at name: the desired records,
// adjusted when the provider adjusts; ok is false while an adjustment is
// missing.
func (r *run) desiredFor(provider, name string) (eps []events.Endpoint, ok bool) {
	d := r.desired[name].endpoints
	if r.retiring(provider) {
		return nil, true // nothing is wanted there any more
	}
	if !r.adjusts[provider] || len(d) == 0 {
		return d, true
	}
	eps, ok = r.adjusted[name][provider]
	return eps, ok
}

// adjustDirty asks each adjusting provider's applier to adjust the desired
// records of the dirty names it would plan now.
func (r *run) adjustDirty(ctx context.Context, now time.Time) {
	for _, provider := range slices.Sorted(func(yield func(string) bool) {
		for p, on := range r.adjusts {
			if on && !yield(p) {
				return
			}
		}
	}) {
		var names []string
		count := 0
		for name := range r.dirty {
			if _, ok := r.desiredFor(provider, name); ok {
				continue
			}
			zone, ok := zoneOf(name, r.zones[provider])
			if !ok || !r.filter.Match(name) || r.busy(zoneKey{provider, zone}, now) || r.lost.waiting(provider, name, now) {
				continue
			}
			if _, what := r.intentAt(provider, zone, name); what == leaveAlone {
				continue // not planned into it: nothing to adjust
			}
			names = append(names, name)
			count += len(r.desired[name].endpoints)
			if count >= adjustChunk {
				r.adjustNames(ctx, provider, names)
				names, count = nil, 0
			}
		}
		if len(names) > 0 {
			r.adjustNames(ctx, provider, names)
		}
	}
}

// adjustNames asks for the adjusted records of names, and keeps them. On
// failure their zones back off: nothing is planned from records the
// provider did not see. A name the answer lost waits on its own (lost.go).
func (r *run) adjustNames(ctx context.Context, provider string, names []string) {
	var eps []events.Endpoint
	for _, n := range names {
		eps = append(eps, r.desired[n].endpoints...)
	}
	ctx, cancel := context.WithTimeout(ctx, adjustTimeout)
	defer cancel()
	adjusted, err := events.Adjust(ctx, r.js.Conn(), provider, eps)
	if err == nil && len(adjusted) == 0 {
		// A provider may drop a record it cannot hold, never every one:
		// an empty answer is a broken one. Every name of it is lost
		// (lost.go), each backing off on its own.
		adjustFailures.WithLabelValues(provider).Inc()
	}
	if err != nil {
		adjustFailures.WithLabelValues(provider).Inc()
		zones := map[zoneKey]bool{}
		for _, n := range names {
			if z, ok := zoneOf(n, r.zones[provider]); ok {
				zones[zoneKey{provider, z}] = true
			}
		}
		for k := range zones {
			wait := r.backOff(k)
			r.log.Warn("desired records not adjusted by the provider: the zone waits", "provider", provider, "zone", k.zone,
				"names", len(names), "retry_in", wait.Round(time.Millisecond), "err", err)
		}
		return
	}
	byName := map[string][]events.Endpoint{}
	for _, ep := range adjusted {
		n := events.NormalizeName(ep.DNSName)
		byName[n] = append(byName[n], ep)
	}
	asked := make(map[string][]events.Endpoint, len(names))
	for _, n := range names {
		asked[n] = r.desired[n].endpoints
	}
	lost := lostIn(asked, byName)
	for _, n := range slices.Sorted(maps.Keys(lost)) {
		wait := r.lost.lose(provider, n)
		namesLost.WithLabelValues(provider).Inc()
		r.log.Warn("the provider's adjust answer lost this name: it is not planned, and nothing of it deleted, until an answer holds it",
			"provider", provider, "name", n, "asked", len(asked[n]), "answered", len(byName[n]), "retry_in", wait.Round(time.Millisecond))
	}
	for _, n := range names {
		if lost[n] {
			continue
		}
		r.lost.found(provider, n)
		if r.adjusted[n] == nil {
			r.adjusted[n] = map[string][]events.Endpoint{}
		}
		r.adjusted[n][provider] = byName[n]
		if z, ok := zoneOf(n, r.zones[provider]); ok && r.flights[zoneKey{provider, z}] != nil {
			// Adjusted: the zone's earlier failure is over.
			r.flights[zoneKey{provider, z}].publishFailures = 0
		}
	}
	namesWaitingForAdjust.Set(float64(r.lost.count()))
}
