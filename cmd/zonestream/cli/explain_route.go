package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/domains"
	"github.com/zonestream/zonestream/events/routing"
)

// Route is where a name goes (events/routing, as the planner plans it),
// and why.
type Route struct {
	// Providers are those it goes to; Zones the zone of each ("" while
	// the provider has not listed its zones).
	Providers []string          `json:"providers,omitempty"`
	Zones     map[string]string `json:"zones,omitempty"`
	// Reason is routing's word when it goes nowhere (NoZone,
	// NamespaceNotAllowed, ProviderTie).
	Reason string `json:"reason,omitempty"`
	// Why says it in words, naming each provider and what declares it.
	Why string `json:"why"`
}

// routeOf decides where name goes by the zone lists of table, wanted by
// objects of namespaces.
func routeOf(table *routing.Table, name string, namespaces []string) *Route {
	if table.Len() == 0 {
		return &Route{Why: "no provider has published its zone list: where it goes is not known yet"}
	}
	d := table.Route(name, namespaces)
	if d.Refused() {
		return &Route{Reason: string(d.Reason), Why: "refused (" + string(d.Reason) + "): " + d.Detail}
	}
	r := &Route{Providers: d.Providers, Zones: d.Zone}
	var whys []string
	for _, p := range d.Providers {
		l, _ := table.Get(p)
		whys = append(whys, routedTo(p, l, name, d.Zone[p], namespaces, len(d.Providers) > 1))
	}
	r.Why = strings.Join(whys, "; ")
	return r
}

// routedTo says why name goes to provider p.
func routedTo(p string, l *events.ZoneList, name, zone string, namespaces []string, several bool) string {
	s := l.Scope
	if s == nil {
		why := fmt.Sprintf("routed to %s (flags): its zone %s holds it", p, zone)
		if several {
			why += " (providers declared by flags each serve every name in their zones)"
		}
		return why
	}
	domain := ""
	for _, d := range s.Domains {
		if domains.Within(name, d) && len(d) > len(domain) {
			domain = d
		}
	}
	var where string
	switch {
	case zone == "":
		where = fmt.Sprintf("it claims its domain %s, but has not listed its zones yet: nothing is planned for the name until it has", domain)
		if s.Problem != "" {
			where += " (" + s.Problem + ")"
		}
	case len(domain) > len(zone):
		where = fmt.Sprintf("its domain %s, in zone %s, is the most specific holding it", domain, zone)
	default:
		where = fmt.Sprintf("the most specific zone holding it, %s", zone)
	}
	return fmt.Sprintf("routed to %s: %s, and it serves %s", routing.Kind(s.Declared), where, served(s, namespaces))
}

// served names the namespaces of the name's objects the provider serves.
func served(s *events.ProviderScope, namespaces []string) string {
	if len(namespaces) == 0 || slices.Contains(s.Namespaces, events.AllNamespaces) {
		return "every namespace"
	}
	var out []string
	for _, ns := range namespaces {
		if ns == "" {
			out = append(out, "cluster-scoped objects")
		} else {
			out = append(out, "namespace "+ns)
		}
	}
	return strings.Join(out, ", ")
}
