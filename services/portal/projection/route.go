package projection

import (
	"slices"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/routing"
)

// Refusal is why a name goes to no provider (events/routing): Reason is
// routing's word (NoZone, NamespaceNotAllowed, ProviderTie), Detail names
// the providers and the objects that declare them.
type Refusal struct {
	Reason string `json:"reason"`
	Detail string `json:"detail"`
}

// route decides where v's name goes, as the planner does, by the
// namespaces of the objects wanting it. Callers hold p.mu.
func (p *Projection) route(v *View) {
	v.Zone, v.Provider, v.Providers, v.Refused = "", "", nil, nil
	if p.routes.Len() == 0 {
		return // no zone list seen: nothing known
	}
	var namespaces []string
	if v.Desired != nil {
		namespaces = routing.Namespaces(v.Desired.Contributors)
	}
	d := p.routes.Route(v.Name, namespaces)
	if d.Refused() {
		v.Refused = &Refusal{Reason: string(d.Reason), Detail: d.Detail}
		return
	}
	// Zone and Provider are the longest zone of those it goes to: the one
	// a name under two providers' zones (flags) is listed by, as before.
	for _, prov := range d.Providers {
		if v.Provider == "" || len(d.Zone[prov]) > len(v.Zone) {
			v.Zone, v.Provider = d.Zone[prov], prov
		}
	}
	if len(d.Providers) > 1 {
		v.Providers = d.Providers // kept only when more than Provider: most names go to one
	}
}

// providers are every provider v's name goes to.
func (v *View) providers() []string {
	switch {
	case v.Providers != nil:
		return v.Providers
	case v.Provider != "":
		return []string{v.Provider}
	}
	return nil
}

// declaredRoute reports whether v's name goes to a declared provider, or
// is refused for one: the planner's domain filter is the filter of the
// providers declared by flags, a declared provider's is its domains.
func (v *View) declaredRoute() bool {
	return slices.ContainsFunc(v.providers(), events.IsDeclared) || v.Refused != nil && v.Refused.Reason != string(routing.NoZone)
}

// goesTo reports whether v's name goes to provider.
func (v *View) goesTo(provider string) bool {
	return v.Provider == provider || slices.Contains(v.Providers, provider)
}

// unlisted says why nothing is planned for a name that goes to a
// declared provider that has not listed its zones yet; "" otherwise.
// Callers hold p.mu.
func (p *Projection) unlisted(v *View) string {
	if v.Provider == "" || v.Zone != "" {
		return ""
	}
	reason := "provider " + v.Provider + " has not listed its zones yet"
	if l, ok := p.routes.Get(v.Provider); ok && l.Scope != nil && l.Scope.Problem != "" {
		reason += ": " + l.Scope.Problem
	}
	return reason
}
