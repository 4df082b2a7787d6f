package kubestatus

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/registry"
	"github.com/zonestream/zonestream/events/routing"
)

// judgeName works out the outcome at name of every object of this
// cluster that wants it or wanted it, and returns the ones that changed.
func (b *book) judgeName(name string) []Transition {
	objs := map[events.ObjectRef]bool{}
	if w := b.desired[name]; w != nil {
		for _, r := range w.rrsets {
			for _, o := range r.objects {
				objs[o] = true
			}
		}
		for _, l := range w.losers {
			objs[l.Object] = true
		}
	}
	for _, at := range b.byName[name] {
		objs[at.obj] = true
	}
	var out []Transition
	for _, o := range slices.SortedFunc(maps.Keys(objs), events.CompareRefs) {
		prev, had := b.at(o, name)
		next, keys, gone := b.judge(o, name, prev)
		switch {
		case gone:
			b.forget(o, name)
		default:
			// Records held once, and not lost to another object since:
			// their going is this object's news.
			published := (prev.published || next.State == Published) && next.State != Rejected
			b.remember(o, name, tracked{outcome: next, keys: keys, published: published})
		}
		news := !had || !prev.outcome.Same(next)
		if gone && next.State != Deleted {
			news = false // never published, or lost: nothing of its own went
		}
		if news {
			out = append(out, Transition{Object: o, Name: name, From: prev.outcome, To: next})
		}
	}
	return out
}

// at returns what is remembered of o at name.
func (b *book) at(o events.ObjectRef, name string) (tracked, bool) {
	for _, at := range b.byName[name] {
		if at.obj == o {
			return at.tracked, true
		}
	}
	return tracked{}, false
}

func (b *book) remember(o events.ObjectRef, name string, t tracked) {
	ats := b.byName[name]
	for i := range ats {
		if ats[i].obj == o {
			ats[i].tracked = t
			return
		}
	}
	b.byName[name] = append(ats, objectAt{o, t})
	b.objects[o] = append(b.objects[o], name)
}

func (b *book) forget(o events.ObjectRef, name string) {
	ats := slices.DeleteFunc(b.byName[name], func(at objectAt) bool { return at.obj == o })
	if len(ats) == 0 {
		delete(b.byName, name)
	} else {
		b.byName[name] = ats
	}
	names := slices.DeleteFunc(b.objects[o], func(n string) bool { return n == name })
	if len(names) == 0 {
		delete(b.objects, o)
	} else {
		b.objects[o] = names
	}
}

// judge is the rule: the outcome of object o at name, the RRsets it wants
// there, and whether o is done with the name (no longer wants it, and
// the records it had are gone or another's).
func (b *book) judge(o events.ObjectRef, name string, prev tracked) (Outcome, []rrsetKey, bool) {
	w := b.desired[name]
	var mine []digest
	if w != nil {
		for _, l := range w.losers {
			if l.Object == o {
				return Outcome{State: Rejected, Reason: ReasonOutranked, Detail: l.Reason}, nil, false
			}
		}
		for _, r := range w.rrsets {
			if slices.Contains(r.objects, o) {
				mine = append(mine, r.digest)
			}
		}
	}
	if len(mine) == 0 {
		// Withdrawn: deleted once no provider holds what o had there,
		// unless another object of the cluster wants it now.
		switch {
		case prev.published && b.stillHeld(name, prev.keys):
			return Outcome{State: Pending, Reason: ReasonPending, Detail: "deletion not yet applied"}, prev.keys, false
		case prev.published:
			return Outcome{State: Deleted}, nil, true
		}
		return Outcome{}, nil, true
	}
	keys := make([]rrsetKey, len(mine))
	for i, d := range mine {
		keys[i] = d.key
	}
	d, routed := b.route(name, w)
	if d.Refused() {
		return Outcome{State: Rejected, Reason: string(d.Reason), Detail: d.Detail}, keys, false
	}
	if detail := b.unlisted(d); detail != "" {
		return Outcome{State: Pending, Reason: ReasonPending, Detail: detail}, keys, false
	}
	if b.holdsAll(name, mine, d, routed) {
		return Outcome{State: Published, Reason: ReasonProgrammed}, keys, false
	}
	if detail := b.overQuota(name, d); detail != "" {
		return Outcome{State: Rejected, Reason: ReasonOverQuota, Detail: detail}, keys, false
	}
	if f := b.failures[name]; f.count > 0 {
		return Outcome{State: Failed, Reason: ReasonFailed, Detail: f.err, Failures: f.count}, keys, false
	}
	if detail := b.notOwned(name, mine); detail != "" {
		return Outcome{State: Rejected, Reason: ReasonNotOwned, Detail: detail}, keys, false
	}
	return Outcome{State: Pending, Reason: ReasonPending, Detail: b.problems(d)}, keys, false
}

// route decides where name goes, as the planner does; routed is false
// while no zone list has been seen, when nothing is known and the name
// is judged by what any provider holds.
func (b *book) route(name string, w *wanted) (d routing.Decision, routed bool) {
	if b.routes.Len() == 0 {
		return routing.Decision{Providers: []string{""}}, false
	}
	return b.routes.Route(name, w.namespaces), true
}

// unlisted says why nothing can be planned yet for a name routed to a
// declared provider that has not listed its zones; "" when each has.
func (b *book) unlisted(d routing.Decision) string {
	for _, p := range d.Providers {
		if z, ok := d.Zone[p]; ok && z == "" {
			detail := "provider " + p + " has not listed its zones yet"
			if l, ok := b.routes.Get(p); ok && l.Scope != nil && l.Scope.Problem != "" {
				detail += ": " + l.Scope.Problem
			}
			return detail
		}
	}
	return ""
}

// overQuota says why a name is refused by the quota of the declared
// provider it goes to: new to it while it holds its quota of names or
// more for us; "" when it is not.
func (b *book) overQuota(name string, d routing.Decision) string {
	for _, p := range d.Providers {
		q := b.quotaOf(p)
		if q == 0 || b.holdsName(p, name) {
			continue
		}
		if n := b.heldCount(p); n >= q {
			return fmt.Sprintf("provider %s holds %d names, its quota (%s)", p, n, kindOf(b, p))
		}
	}
	return ""
}

// problems says what the declared providers a name goes to last failed
// to list; "" when they did not.
func (b *book) problems(d routing.Decision) string {
	var out []string
	for _, p := range d.Providers {
		if l, ok := b.routes.Get(p); ok && l.Scope != nil && l.Scope.Problem != "" {
			out = append(out, "provider "+p+": "+l.Scope.Problem)
		}
	}
	return strings.Join(out, "; ")
}

func kindOf(b *book, provider string) string {
	if l, ok := b.routes.Get(provider); ok && l.Scope != nil {
		return routing.Kind(l.Scope.Declared)
	}
	return "flags"
}

// holdsAll: a provider the name is routed to (any provider, when not
// routed) holds each RRset with the same targets.
func (b *book) holdsAll(name string, want []digest, to routing.Decision, routed bool) bool {
	h := b.observed[name]
	if h == nil {
		return false
	}
	for _, d := range want {
		found := false
		for _, by := range h {
			found = found || (!routed || to.Goes(by.provider)) && slices.Contains(by.rrsets, d)
		}
		if !found {
			return false
		}
	}
	return true
}

// stillHeld: some provider holds an RRset of one of keys at name that no
// object wants now (one wanted by another object is its, not a deletion
// to wait for).
func (b *book) stillHeld(name string, keys []rrsetKey) bool {
	h := b.observed[name]
	if h == nil {
		return false
	}
	var wantedNow []rrsetKey
	if w := b.desired[name]; w != nil {
		wantedNow = w.keys
	}
	for _, by := range h {
		for _, d := range by.rrsets {
			if slices.Contains(keys, d.key) && !slices.Contains(wantedNow, d.key) {
				return true
			}
		}
	}
	return false
}

// notOwned says why a provider's records at name, other than the wanted
// ones, belong to someone else; "" when they may be ours (or nothing is
// there, or the owner id is not known).
func (b *book) notOwned(name string, want []digest) string {
	h := b.observed[name]
	if h == nil || b.ownership.OwnerID == "" {
		return ""
	}
	for _, d := range want {
		if !b.heldOtherwise(h, d) {
			continue
		}
		var owners []string
		for _, reg := range b.registryNames(name, d.key.recordType) {
			for _, by := range b.observed[reg] {
				owners = append(owners, by.owners...)
			}
		}
		if slices.Contains(owners, b.ownership.OwnerID) || slices.Contains(owners, registry.Unreadable) {
			continue
		}
		if len(owners) == 0 {
			return fmt.Sprintf("%s %s exists without an ownership record: not ours to change", name, d.key.recordType)
		}
		slices.Sort(owners)
		return fmt.Sprintf("%s %s is owned by %q, not by %q", name, d.key.recordType,
			strings.Join(slices.Compact(owners), ","), b.ownership.OwnerID)
	}
	return ""
}

// heldOtherwise: a provider holds d's RRset with other targets.
func (b *book) heldOtherwise(h held, d digest) bool {
	for _, by := range h {
		for _, x := range by.rrsets {
			if x.key == d.key && x.targets != d.targets {
				return true
			}
		}
	}
	return false
}

// outcomes returns the last outcome at every name of object o.
func (b *book) outcomes(o events.ObjectRef) map[string]Outcome {
	out := map[string]Outcome{}
	for _, name := range b.objects[o] {
		t, _ := b.at(o, name)
		out[name] = t.outcome
	}
	return out
}

func sortedNames(m map[string]Outcome) []string { return slices.Sorted(maps.Keys(m)) }
