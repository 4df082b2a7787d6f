package projection

import (
	"cmp"
	"maps"
	"slices"

	"github.com/zonestream/zonestream/events"
)

// HeldRef is what the planner's mass-delete guard holds in one zone: the
// deletes it will not plan until an operator approves them.
type HeldRef struct {
	Meta
	events.HeldDeletes
}

// HeldMark is a name's part of a zone's held deletes.
type HeldMark struct {
	ID       string          `json:"id"`
	Provider string          `json:"provider"`
	Zone     string          `json:"zone"`
	Deletes  int             `json:"deletes"`
	Owned    int             `json:"owned"`
	Changes  []events.Change `json:"changes"`
}

// ApplyHeld takes in what a zone holds: the names whose deletes it holds
// are marked (status delete held), those it no longer holds unmarked.
func (p *Projection) ApplyHeld(r events.Received) error {
	var h events.HeldDeletes
	if err := events.Decode(r, &h); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	byName := heldByName(&h)
	if old := p.holds[r.Subject]; old != nil {
		for name := range heldByName(&old.HeldDeletes) {
			if v, ok := p.views[name]; ok && byName[name] == nil && v.Held != nil && v.Held.ID == old.ID {
				v.Held = nil
				p.touched(v)
			}
		}
	}
	if h.IsTombstone() {
		delete(p.holds, r.Subject)
		return nil
	}
	p.holds[r.Subject] = &HeldRef{Meta: MetaOf(r), HeldDeletes: h}
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		v := p.view(name)
		v.Held = &HeldMark{ID: h.ID, Provider: h.Provider, Zone: h.Zone, Deletes: h.Deletes, Owned: h.Owned, Changes: byName[name]}
		p.touched(v)
	}
	return nil
}

// heldByName splits held changes by the name they are about: an
// ownership record speaks for its name, as in a plan.
func heldByName(h *events.HeldDeletes) map[string][]events.Change {
	out := map[string][]events.Change{}
	for _, c := range h.Changes {
		name := c.Key().DNSName
		if owner := ownerOf(name); owner != "" && c.Key().RecordType == events.RecordTypeTXT {
			name = owner
		}
		out[name] = append(out[name], c)
	}
	return out
}

// Held lists the zones' held deletes, by provider and zone.
func (p *Projection) Held() []HeldRef {
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := make([]HeldRef, 0, len(p.holds))
	for _, h := range p.holds {
		out = append(out, *h)
	}
	slices.SortFunc(out, func(a, b HeldRef) int {
		return cmp.Or(cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.Zone, b.Zone))
	})
	return out
}
