// Package routing decides which providers a DNS name is planned into. The
// planner plans by it, the collector's status and the portal explain by
// it, so that they cannot disagree on where a name goes or why it goes
// nowhere.
//
// Providers declared by flags serve every name in their zones, for every
// namespace, as they always have: a name two of them hold goes to both.
// Once a provider declared by a DNSProvider object (a zone list with a
// scope) holds a name, the most specific holder takes it alone: it must
// let the name's objects' namespaces use it, and two holders as specific
// as each other are a tie, refused, never split. A DNSProvider that lets
// another namespace use it does not take that namespace's names from a
// provider declared in that namespace itself, however specific it is.
//
// It lives beside events rather than in a service because services share
// only events and stage.
package routing

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/domains"
)

// Table is every provider's zone list, by provider.
type Table struct {
	providers map[string]*events.ZoneList
}

// New returns an empty table.
func New() *Table { return &Table{providers: map[string]*events.ZoneList{}} }

// Set records z, replacing the provider's earlier list; one without zones
// and scope removes the provider.
func (t *Table) Set(z *events.ZoneList) {
	if len(z.Zones) == 0 && z.Scope == nil {
		delete(t.providers, z.Provider)
		return
	}
	t.providers[z.Provider] = z
}

// Remove forgets provider.
func (t *Table) Remove(provider string) { delete(t.providers, provider) }

// Len is how many providers the table knows.
func (t *Table) Len() int { return len(t.providers) }

// Providers lists the providers, sorted.
func (t *Table) Providers() []string { return slices.Sorted(maps.Keys(t.providers)) }

// Get returns provider's zone list.
func (t *Table) Get(provider string) (*events.ZoneList, bool) {
	z, ok := t.providers[provider]
	return z, ok
}

// Reason says why a name goes to no provider.
type Reason string

const (
	// NoZone: no provider holds a zone the name lies in.
	NoZone Reason = "NoZone"
	// NotAllowed: the provider that serves the name does not let one of
	// its objects' namespaces use it.
	NotAllowed Reason = "NamespaceNotAllowed"
	// Tie: two providers serve the name equally specifically.
	Tie Reason = "ProviderTie"
)

// Decision is where a name goes.
type Decision struct {
	// Providers are those it is planned into, sorted; empty when refused.
	Providers []string
	// Zone is, per provider of Providers, the zone the name lies in; ""
	// while the provider has listed no zone yet (nothing can be planned
	// into it until it has).
	Zone map[string]string
	// Reason and Detail say why Providers is empty; Tied are the
	// providers of a tie (Reason Tie), sorted.
	Reason Reason
	Detail string
	Tied   []string
}

// Refused reports whether the name goes nowhere.
func (d Decision) Refused() bool { return len(d.Providers) == 0 }

// Goes reports whether the name is planned into provider.
func (d Decision) Goes(provider string) bool { return slices.Contains(d.Providers, provider) }

// holder is one provider that could serve a name.
type holder struct {
	provider string
	list     *events.ZoneList
	zone     string
	weight   int // how specific: the longest zone or domain holding the name
}

// Route decides where name goes, wanted by objects of namespaces (a
// cluster-scoped object's namespace is "").
func (t *Table) Route(name string, namespaces []string) Decision {
	name = events.NormalizeName(name)
	var holders []holder
	declared := false
	for _, p := range t.Providers() {
		h, ok := serves(t.providers[p], name)
		if !ok {
			continue
		}
		h.provider = p
		holders = append(holders, h)
		declared = declared || h.list.Scope != nil
	}
	if len(holders) == 0 {
		return Decision{Reason: NoZone, Detail: "no provider manages a zone holding this name"}
	}
	if !declared {
		return decided(holders)
	}
	d, winner := contest(holders, namespaces)
	if winner != nil && foreign(*winner, namespaces) {
		// Another namespace's provider that lets these objects use it
		// does not take their names from their own namespace's provider.
		own := slices.DeleteFunc(slices.Clone(holders), func(h holder) bool { return !home(h, namespaces) })
		if len(own) > 0 {
			d, _ = contest(own, namespaces)
		}
	}
	return d
}

// contest decides among holders, at least one of them declared: the most
// specific alone, if it serves every namespace; and returns it.
func contest(holders []holder, namespaces []string) (Decision, *holder) {
	top := slices.MaxFunc(holders, func(a, b holder) int { return cmp.Compare(a.weight, b.weight) }).weight
	holders = slices.DeleteFunc(slices.Clone(holders), func(h holder) bool { return h.weight < top })
	if len(holders) > 1 {
		names, tied := make([]string, len(holders)), make([]string, len(holders))
		for i, h := range holders {
			names[i], tied[i] = describe(h), h.provider
		}
		return Decision{Reason: Tie, Tied: tied, Detail: fmt.Sprintf("%s serve this name equally: refused until one of them no longer does",
			strings.Join(names, " and "))}, nil
	}
	h := holders[0]
	if s := h.list.Scope; s != nil {
		for _, ns := range namespaces {
			if !s.Allows(ns) {
				return Decision{Reason: NotAllowed, Detail: fmt.Sprintf("%s serves this name and does not serve %s",
					describe(h), namespaceOf(ns))}, &h
			}
		}
	}
	return decided(holders), &h
}

// declaredIn is the namespace of the DNSProvider that declares h's
// provider: "" for a ClusterDNSProvider or a provider declared by flags.
func declaredIn(h holder) string {
	if h.list.Scope == nil {
		return ""
	}
	ns, _, _ := strings.Cut(h.list.Scope.Declared, "/")
	return ns
}

// foreign: h is declared in a namespace none of the objects are in.
func foreign(h holder, namespaces []string) bool {
	ns := declaredIn(h)
	return ns != "" && !slices.Contains(namespaces, ns)
}

// home: h is declared in the one namespace all the objects are in.
func home(h holder, namespaces []string) bool {
	ns := declaredIn(h)
	return ns != "" && len(namespaces) == 1 && namespaces[0] == ns
}

func decided(holders []holder) Decision {
	d := Decision{Zone: make(map[string]string, len(holders))}
	for _, h := range holders {
		d.Providers = append(d.Providers, h.provider)
		d.Zone[h.provider] = h.zone
	}
	return d
}

// serves says whether a provider's list holds name, in which zone, and
// how specifically. A retiring provider serves nothing new.
func serves(z *events.ZoneList, name string) (holder, bool) {
	h := holder{list: z}
	for _, zone := range z.Zones {
		if domains.Within(name, zone) && len(zone) > len(h.zone) {
			h.zone = zone
		}
	}
	h.weight = len(h.zone)
	s := z.Scope
	if s == nil || (h.zone == "" && len(z.Zones) > 0) {
		return h, h.zone != ""
	}
	// A declared provider whose zones are not listed yet (starting, or
	// its credentials failing from the start) still claims its domains:
	// their names wait for it (Decision.Zone "") rather than go elsewhere.
	if s.Retiring || slices.ContainsFunc(s.Exclude, func(d string) bool { return domains.Within(name, d) }) {
		return h, false
	}
	if len(s.Domains) == 0 {
		return h, h.zone != ""
	}
	in := false
	for _, d := range s.Domains {
		if domains.Within(name, d) {
			in = true
			h.weight = max(h.weight, len(d))
		}
	}
	return h, in
}

func describe(h holder) string {
	if h.list.Scope != nil {
		return fmt.Sprintf("provider %s (%s, zone %s)", h.provider, Kind(h.list.Scope.Declared), h.zone)
	}
	return fmt.Sprintf("provider %s (flags, zone %s)", h.provider, h.zone)
}

func namespaceOf(ns string) string {
	if ns == "" {
		return "cluster-scoped objects"
	}
	return "namespace " + ns
}

// Kind names the kind of object that declared: "DNSProvider team-a/bind"
// or "ClusterDNSProvider public".
func Kind(declared string) string {
	if name, ok := strings.CutPrefix(declared, "/"); ok {
		return "ClusterDNSProvider " + name
	}
	return "DNSProvider " + declared
}

// Namespaces are the distinct namespaces of objects, sorted.
func Namespaces(objects []events.ObjectRef) []string {
	out := make([]string, 0, len(objects))
	for _, o := range objects {
		out = append(out, o.Namespace)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
