package projection

import (
	"slices"

	"github.com/zonestream/zonestream/events/routing"
)

// ProviderView is one provider as the zone lists tell it, with the names
// in view that go to it.
type ProviderView struct {
	Name string `json:"name"`
	// DeclaredBy is "flags", or the object that declares it
	// ("DNSProvider team-a/dns", "ClusterDNSProvider public").
	DeclaredBy string   `json:"declaredBy"`
	Zones      []string `json:"zones"`
	// Domains, Exclude, Namespaces, Quota, Retiring and Problem are its
	// scope (events.ProviderScope); a flag-declared provider has none.
	Domains    []string `json:"domains,omitempty"`
	Exclude    []string `json:"exclude,omitempty"`
	Namespaces []string `json:"namespaces,omitempty"`
	Quota      int      `json:"quota,omitempty"`
	Retiring   bool     `json:"retiring,omitempty"`
	Problem    string   `json:"problem,omitempty"`
	// Held is how many DNS names it holds records at for us: those its
	// ownership records name this deployment's owner at (what its quota
	// counts).
	Held int `json:"held"`
	// Names counts the names in view that go to it, by status.
	Names  int            `json:"names"`
	Counts map[Status]int `json:"counts"`
}

// Providers lists every provider of the zone lists, by name.
func (p *Projection) Providers() []ProviderView {
	p.mu.RLock()
	defer p.mu.RUnlock()
	held := p.heldForUs()
	out := make([]ProviderView, 0, p.routes.Len())
	at := map[string]int{}
	for _, name := range p.routes.Providers() {
		l, _ := p.routes.Get(name)
		pv := ProviderView{Name: name, DeclaredBy: "flags", Zones: slices.Clone(l.Zones), Held: len(held[name]),
			Counts: map[Status]int{}}
		if s := l.Scope; s != nil {
			pv.DeclaredBy = routing.Kind(s.Declared)
			pv.Domains, pv.Exclude, pv.Namespaces = slices.Clone(s.Domains), slices.Clone(s.Exclude), slices.Clone(s.Namespaces)
			pv.Quota, pv.Retiring, pv.Problem = s.Quota, s.Retiring, s.Problem
		}
		at[name] = len(out)
		out = append(out, pv)
	}
	for _, v := range p.views {
		for _, prov := range v.providers() {
			if i, ok := at[prov]; ok {
				out[i].Names++
				out[i].Counts[v.Status]++
			}
		}
	}
	return out
}

// heldForUs is, per provider, the names it holds records at for us: the
// names its ownership records naming our owner speak for. Callers hold
// p.mu.
func (p *Projection) heldForUs() map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for txt, hs := range p.held {
		for _, h := range hs {
			name := p.ours(txt, h.state)
			if name == "" {
				continue
			}
			if out[h.provider] == nil {
				out[h.provider] = map[string]bool{}
			}
			out[h.provider][name] = true
		}
	}
	return out
}
