package kubestatus

import (
	"slices"

	"github.com/zonestream/zonestream/events"
)

// quotaBook counts, per declared provider, the DNS names it holds records
// at for us: those its ownership records name our owner at, as the quota
// of a DNSProvider counts them. Providers declared by flags have no quota
// and are not counted (events.IsDeclared), so that a flags-only installation
// keeps nothing more.
type quotaBook map[string]*heldForUs

type heldForUs struct {
	// covers is the record name each of our ownership records speaks for;
	// names counts the ownership records of each record name.
	covers map[string]string
	names  map[string]int
}

// countHeld updates what provider holds for us from what it holds at
// name, and reports whether that crossed its quota (either way), which
// changes the outcome of every name routed to it.
func (b *book) countHeld(provider, name string, by heldBy) bool {
	if !events.IsDeclared(provider) || b.ownership.OwnerID == "" {
		return false
	}
	h := b.quota[provider]
	if h == nil {
		h = &heldForUs{covers: map[string]string{}, names: map[string]int{}}
		b.quota[provider] = h
	}
	before := len(h.names)
	if covered, ok := h.covers[name]; ok {
		delete(h.covers, name)
		if h.names[covered]--; h.names[covered] == 0 {
			delete(h.names, covered)
		}
	}
	if slices.Contains(by.owners, b.ownership.OwnerID) {
		if covered, _ := b.names.EndpointName(name); covered != "" {
			h.covers[name] = covered
			h.names[covered]++
		}
	}
	after := len(h.names)
	if len(h.covers) == 0 {
		delete(b.quota, provider)
	}
	q := b.quotaOf(provider)
	return q > 0 && (before >= q) != (after >= q)
}

// quotaOf is the quota of a declared provider; 0: none.
func (b *book) quotaOf(provider string) int {
	if z, ok := b.routes.Get(provider); ok && z.Scope != nil {
		return z.Scope.Quota
	}
	return 0
}

// heldCount is how many names provider holds records at for us.
func (b *book) heldCount(provider string) int {
	if h := b.quota[provider]; h != nil {
		return len(h.names)
	}
	return 0
}

// holdsName: provider holds records at name already (a name held is
// never refused for the quota).
func (b *book) holdsName(provider, name string) bool {
	if h := b.quota[provider]; h != nil && h.names[name] > 0 {
		return true
	}
	return slices.ContainsFunc(b.observed[name], func(by heldBy) bool { return by.provider == provider && len(by.rrsets) > 0 })
}
