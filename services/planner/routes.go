package planner

import (
	"context"
	"log/slog"
	"reflect"
	"slices"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/domains"
	"github.com/zonestream/zonestream/events/routing"
)

// Where a name is planned, once providers are declared by DNSProvider
// objects: events/routing decides, as the collector's status and the
// portal explain, so that they cannot disagree. Providers declared by
// flags alone are planned as they always were: routing is not asked.

// intent is what a pass does with a name at one provider.
type intent int

const (
	// planAsToday: as before DNSProviders, by what is wanted (or not).
	planAsToday intent = iota
	// leaveAlone: the name is wanted but routed elsewhere, or nowhere (a
	// tie, a namespace not allowed, the provider's zones not listed yet):
	// nothing at this provider is created, changed or deleted for it.
	leaveAlone
	// retire: the provider is being deleted with its records: the name is
	// planned as if nothing wanted it there (its deletes pass the guard).
	retire
)

// routes is the planner's view of every provider's zone list.
type routes struct {
	table    *routing.Table
	declared int // providers with a scope: while 0, routing is not asked
	// routed and refused are each desired name's share of the gauges
	// namesRouted and namesRefused, as last planned.
	routed  map[string][]string
	refused map[string]routing.Reason
}

func newRoutes() routes {
	return routes{table: routing.New(), routed: map[string][]string{}, refused: map[string]routing.Reason{}}
}

// scope is provider's scope, nil for one declared by flags.
func (r *run) scope(provider string) *events.ProviderScope {
	if z, ok := r.routes.table.Get(provider); ok {
		return z.Scope
	}
	return nil
}

// retiring reports whether provider's records are all to go.
func (r *run) retiring(provider string) bool {
	s := r.scope(provider)
	return s != nil && s.Retiring
}

// decide says where a desired name goes; ok false while no provider is
// declared (every provider holding it gets it, as before).
func (r *run) decide(name string) (routing.Decision, bool) {
	d, ok := r.desired[name]
	if r.routes.declared == 0 || !ok {
		return routing.Decision{}, false
	}
	return r.routes.table.Route(name, d.namespaces), true
}

// intentAt is what to do with name at provider, and the zone to plan it
// in when planned (zone, as zoneOf finds it, when routing is not asked).
func (r *run) intentAt(provider, zone, name string) (string, intent) {
	d, ok := r.decide(name)
	return r.intentOf(provider, zone, d, ok)
}

// intentOf is intentAt with the name's routing decided (routed false:
// routing not asked).
func (r *run) intentOf(provider, zone string, d routing.Decision, routed bool) (string, intent) {
	if r.retiring(provider) {
		return zone, retire
	}
	if !routed {
		return zone, planAsToday
	}
	if !d.Goes(provider) || d.Zone[provider] == "" {
		return "", leaveAlone
	}
	return d.Zone[provider], planAsToday
}

// foldZoneList takes in a provider's zone list, and marks the names whose
// plans it may change.
func (r *run) foldZoneList(z events.ZoneList) {
	old, had := r.routes.table.Get(z.Provider)
	var oldScope *events.ProviderScope
	if had {
		oldScope = old.Scope
	}
	scopeChanged := !sameRouting(oldScope, z.Scope)
	if oldScope != nil {
		r.routes.declared--
	}
	r.routes.table.Set(&z)
	if _, kept := r.routes.table.Get(z.Provider); kept && z.Scope != nil {
		r.routes.declared++
	}
	zonesChanged := !slices.Equal(r.zones[z.Provider], z.Zones)
	prevZones := r.zones[z.Provider]
	r.zones[z.Provider] = z.Zones
	switch {
	case oldScope == nil && z.Scope == nil:
		if zonesChanged || r.adjusts[z.Provider] != z.Adjusts {
			r.markAll() // a provider declared by flags: as before
		}
	case zonesChanged || scopeChanged || r.adjusts[z.Provider] != z.Adjusts:
		var under []string
		under = append(under, prevZones...)
		under = append(under, z.Zones...)
		for _, s := range []*events.ProviderScope{oldScope, z.Scope} {
			if s != nil {
				under = append(under, s.Domains...)
				under = append(under, s.Exclude...)
			}
		}
		r.markUnder(under)
	}
	r.adjusts[z.Provider] = z.Adjusts
	if z.Scope == nil || z.Scope.Quota == 0 {
		r.quota.forget(z.Provider)
	}
}

// sameRouting reports whether two scopes route alike: a new listing
// problem alone changes no plan.
func sameRouting(a, b *events.ProviderScope) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := *a, *b
	x.Problem, y.Problem = "", ""
	return reflect.DeepEqual(x, y)
}

// markUnder schedules every name either side knows of that lies in one
// of under (zones or domains, each with its subdomains).
func (r *run) markUnder(under []string) {
	in := func(n string) bool {
		return slices.ContainsFunc(under, func(d string) bool { return domains.Within(n, d) })
	}
	for n := range r.desired {
		if in(n) {
			r.mark(n, r.dirty[n])
		}
	}
	for _, byName := range r.observed {
		for n := range byName {
			if !in(n) {
				continue
			}
			r.mark(n, r.dirty[n])
			for _, owner := range r.registryOwners(n) {
				r.mark(owner, r.dirty[owner])
			}
		}
	}
}

// filteredOut says whether the domain filter (--domain-filter and the
// others) leaves name out: it is the filter of the providers declared by
// flags, as ExternalDNS' is its one provider's; a name that goes to a
// declared provider, or is refused for one, is filtered by that
// provider's domains instead (events/routing).
func (r *run) filteredOut(name string, d routing.Decision, routed bool) bool {
	if r.filter.Match(name) {
		return false
	}
	forDeclared := slices.ContainsFunc(d.Providers, events.IsDeclared) || (d.Refused() && d.Reason != routing.NoZone)
	return !routed || !forDeclared
}

// countRoute brings name's share of the routing gauges up to date: the
// providers its desired records go to, or why they go nowhere.
func (r *run) countRoute(name string, d routing.Decision, routed bool) {
	var to []string
	var why routing.Reason
	if _, ok := r.desired[name]; ok && !r.filteredOut(name, d, routed) {
		if routed {
			to, why = d.Providers, d.Reason
			if d.Refused() && why != r.routes.refused[name] {
				// Once per name and reason. A name in no zone is no news
				// (it was never planned before DNSProviders either).
				level := slog.LevelWarn
				if why == routing.NoZone {
					level = slog.LevelInfo
				}
				r.log.Log(context.Background(), level, "name planned into no provider", "name", name, "reason", why, "detail", d.Detail)
			}
		} else {
			to = r.flagProvidersOf(name)
			if len(to) == 0 {
				why = routing.NoZone
			}
		}
	}
	for _, p := range r.routes.routed[name] {
		namesRouted.WithLabelValues(p).Dec()
	}
	for _, p := range to {
		namesRouted.WithLabelValues(p).Inc()
	}
	if was := r.routes.refused[name]; was != "" {
		namesRefused.WithLabelValues(string(was)).Dec()
	}
	if why != "" {
		namesRefused.WithLabelValues(string(why)).Inc()
	}
	if len(to) == 0 {
		delete(r.routes.routed, name)
	} else {
		r.routes.routed[name] = to
	}
	if why == "" {
		delete(r.routes.refused, name)
	} else {
		r.routes.refused[name] = why
	}
}

// flagProvidersOf are the providers holding a zone of name, sorted: where
// it goes while no provider is declared.
func (r *run) flagProvidersOf(name string) []string {
	var out []string
	for p, zones := range r.zones {
		if _, ok := zoneOf(name, zones); ok {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// forgetRoutes takes this run's shares out of the routing gauges.
func (r *run) forgetRoutes() {
	for _, to := range r.routes.routed {
		for _, p := range to {
			namesRouted.WithLabelValues(p).Dec()
		}
	}
	for _, why := range r.routes.refused {
		namesRefused.WithLabelValues(string(why)).Dec()
	}
	clear(r.routes.routed)
	clear(r.routes.refused)
	for p := range r.quota.over {
		r.quota.forget(p)
	}
}
