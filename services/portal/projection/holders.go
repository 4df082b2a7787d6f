package projection

import (
	"slices"
	"strings"

	"github.com/zonestream/zonestream/events"
)

// holders is what each provider holds at one name: a slice rather than a
// map, as a name is nearly always held by one provider, and a map per name
// would cost ten times the bytes at every name of every zone.
type holders []holder

type holder struct {
	provider string
	state    *Observed
}

// get returns what provider holds; nil when it holds nothing.
func (h holders) get(provider string) *Observed {
	for _, x := range h {
		if x.provider == provider {
			return x.state
		}
	}
	return nil
}

// first is what the first provider by name holds; nil when none holds
// anything.
func (h holders) first() *Observed {
	if len(h) == 0 {
		return nil
	}
	return slices.MinFunc(h, func(a, b holder) int { return strings.Compare(a.provider, b.provider) }).state
}

// asMap is a copy of h, what each provider holds at name, by provider;
// nil when empty.
func (h holders) asMap(name string) map[string]*Observed {
	if len(h) == 0 {
		return nil
	}
	m := make(map[string]*Observed, len(h))
	for _, x := range h {
		o := *x.state
		o.owners, o.Subject = nil, events.ObservedSubject(x.provider, name)
		m[x.provider] = &o
	}
	return m
}

// with returns h with provider holding state; a nil state takes provider
// out.
func (h holders) with(provider string, state *Observed) holders {
	for i, x := range h {
		if x.provider != provider {
			continue
		}
		if state == nil {
			return slices.Delete(h, i, i+1)
		}
		h[i].state = state
		return h
	}
	if state == nil {
		return h
	}
	return append(h, holder{provider, state})
}
