package projection

import (
	"fmt"
	"slices"
	"unique"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/routing"
)

// quotaCounts counts, per declared provider, the names it holds records
// at for us, kept as observed states come, so that a name's status can
// say a quota is full without a scan. Providers declared by flags have no
// quota and are not counted: a flags-only installation keeps nothing more.
type quotaCounts map[string]*heldForUs

type heldForUs struct {
	// covers is the name each of our ownership records speaks for; names
	// counts the ownership records of each name.
	covers map[string]string
	names  map[string]int
}

// ours is the name an ownership record at txt, held as o, speaks for when
// it names our owner; "" otherwise. Callers hold p.mu.
func (p *Projection) ours(txt string, o *Observed) string {
	me := p.opts.Ownership.OwnerID
	if me == "" || o == nil || !slices.Contains(o.owners, unique.Make(me)) {
		return ""
	}
	name, _ := p.names.EndpointName(txt)
	return name
}

// countHeld updates what a declared provider holds for us from what it
// holds at name, and reports whether that crossed its quota (either way).
// Callers hold p.mu.
func (p *Projection) countHeld(provider, name string, o *Observed) bool {
	if !events.IsDeclared(provider) {
		return false
	}
	h := p.quota[provider]
	if h == nil {
		h = &heldForUs{covers: map[string]string{}, names: map[string]int{}}
		p.quota[provider] = h
	}
	before := len(h.names)
	if covered, ok := h.covers[name]; ok {
		delete(h.covers, name)
		if h.names[covered]--; h.names[covered] == 0 {
			delete(h.names, covered)
		}
	}
	if covered := p.ours(name, o); covered != "" {
		h.covers[name] = covered
		h.names[covered]++
	}
	after := len(h.names)
	if len(h.covers) == 0 {
		delete(p.quota, provider)
	}
	q := p.quotaOf(provider)
	return q > 0 && (before >= q) != (after >= q)
}

func (p *Projection) quotaOf(provider string) int {
	if l, ok := p.routes.Get(provider); ok && l.Scope != nil {
		return l.Scope.Quota
	}
	return 0
}

// overQuota says why the planner refuses v's name for the quota of the
// declared provider it goes to: new to it while it holds its quota of
// names or more for us; "" when it does not. Callers hold p.mu.
func (p *Projection) overQuota(v *View) string {
	q := p.quotaOf(v.Provider)
	if q == 0 || v.observed.get(v.Provider) != nil {
		return ""
	}
	h := p.quota[v.Provider]
	if h == nil || h.names[v.Name] > 0 || len(h.names) < q {
		return ""
	}
	l, _ := p.routes.Get(v.Provider)
	return fmt.Sprintf("provider %s holds %d names, its quota (%s)", v.Provider, len(h.names), routing.Kind(l.Scope.Declared))
}
