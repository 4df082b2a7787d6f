package planner

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/zonestream/zonestream/events"
)

// zoneChanges gathers the changes for one zone, name by name: a name's
// changes (records and their ownership) always travel in one plan.
type zoneChanges struct {
	units [][]events.Change
	names []string
	cause string
}

// plan plans every dirty name whose zone is free, and publishes the plans.
func (s *state) plan(ctx context.Context) {
	start := time.Now()
	s.fresh = s.fresh[:0] // every dirty name is looked at here
	byZone := map[zoneKey]*zoneChanges{}
	providers := slices.Sorted(maps.Keys(s.zones))
	for _, name := range slices.Sorted(maps.Keys(s.dirty)) {
		if !s.complete && !s.desired[name].live {
			// History, not news: planned once the desired state is
			// complete (completeness marks every name again).
			delete(s.dirty, name)
			continue
		}
		done := true
		for _, provider := range providers {
			zone, ok := zoneOf(name, s.zones[provider])
			if !ok || !s.filter.match(name) {
				continue
			}
			k := zoneKey{provider, zone}
			if s.busy(k, start) {
				done = false
				continue
			}
			if !s.known(provider, name) {
				s.log.Debug("state unknown: not planned", "provider", provider, "name", name)
				continue
			}
			np := planName(s.nameInput(provider, zone, name))
			for _, c := range np.conflicts {
				conflicts.Inc()
				s.log.Debug("left alone", "provider", provider, "reason", c)
			}
			for _, r := range np.refused {
				refused.WithLabelValues(r.reason).Inc()
				s.log.Warn("record refused: nothing at it is touched", "provider", provider, "reason", r.reason, "detail", r.detail)
			}
			if len(np.changes) == 0 {
				continue
			}
			zc := byZone[k]
			if zc == nil {
				zc = &zoneChanges{cause: s.dirty[name]}
				byZone[k] = zc
			}
			zc.units = append(zc.units, np.changes)
			zc.names = append(zc.names, name)
		}
		if done {
			delete(s.dirty, name)
		}
	}
	keys := make([]zoneKey, 0, len(byZone))
	for k := range byZone {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b zoneKey) int {
		return cmp.Or(cmp.Compare(a.provider, b.provider), cmp.Compare(a.zone, b.zone))
	})
	for _, k := range keys {
		s.publishZone(ctx, k, byZone[k])
	}
	planSeconds.Observe(time.Since(start).Seconds())
}

func (s *state) nameInput(provider, zone, name string) nameInput {
	d := s.desired[name].state
	resource := ""
	if len(d.Contributors) == 1 {
		resource = d.Contributors[0].Resource()
	}
	return nameInput{name: name, zone: zone, desired: d.Endpoints, resource: resource,
		observed: s.observedAt(provider), policy: s.effectivePolicy(), reg: s.reg}
}

// nameInput is everything planName needs to know about one DNS name.
type nameInput struct {
	name     string
	zone     string
	desired  []events.Endpoint // empty: nothing wanted
	resource string            // the one object that wants the name, if one
	observed func(name string) []events.Endpoint
	policy   Policy
	reg      *registry // ownership rules and managed record types
}

// namePlan is what planName decided.
type namePlan struct {
	changes   []events.Change
	conflicts []string  // why something wanted was left alone
	refused   []refusal // records that cannot be written safely (refuse.go)
}

// planName decides the changes at one name. It is a pure function of its
// input: the same state always gives the same changes, in the same order.
func planName(in nameInput) namePlan {
	reg := in.reg
	have := rrsetsByKey(in.observed(in.name))
	want := rrsetsByKey(in.desired)
	keys := managedKeys(in, have, want)
	if reg.noop {
		return planNoop(in, keys, have, want)
	}
	var out namePlan
	// Registry RRsets by name and set identifier: ExternalDNS gives the
	// ownership record of an RRset with a set identifier the same one, so
	// routing-policy RRsets at one name ("us", "eu") are owned apart.
	registries := map[string]*registryRRset{}
	rrset := func(name, setID string) *registryRRset {
		id := name + "\x00" + setID
		r := registries[id]
		if r == nil {
			txt := rrKey{events.RecordTypeTXT, setID}
			cur := have[txt]
			if name != in.name {
				cur = rrsetsByKey(in.observed(name))[txt]
			}
			r = &registryRRset{name: name, setID: setID, current: cur, kept: map[string]bool{}, dropped: map[string]bool{}}
			registries[id] = r
		}
		return r
	}
	inZone := func(n string) bool {
		_, ok := zoneOf(n, []string{in.zone})
		return ok
	}
	oldName := reg.names.oldTXTName(in.name)
	hasOld := inZone(oldName) && !reg.newFormatOfAnother(oldName, in.name)
	oldRRs := map[string]*registryRRset{} // by set identifier
	oldRRFor := func(setID string) *registryRRset {
		if !hasOld {
			return nil
		}
		if oldRRs[setID] == nil {
			oldRRs[setID] = rrset(oldName, setID)
		}
		return oldRRs[setID]
	}
	oldRRFor("")
	newRRs := map[*registryRRset]bool{}

	var upserts, deletes []events.Change
	for _, k := range keys {
		t := k.recordType
		w, h := want[k], have[k]
		oldRR := oldRRFor(k.setID)
		newName := reg.names.txtName(in.name, t)
		if !inZone(newName) {
			newName = in.name
		}
		if p := cmp.Or(nameProblem(in.name), nameProblem(newName)); p != "" {
			// The record, or its ownership record, cannot be written:
			// touch nothing of this type rather than leave a record
			// that nobody owns.
			if w != nil || h != nil {
				out.refused = append(out.refused, refusal{refusedName, fmt.Sprintf("%s %s: %s", in.name, t, p)})
			}
			continue
		}
		if t == events.RecordTypeTXT {
			if w != nil {
				if p := reg.registryStringIn(*w); p != "" {
					out.refused = append(out.refused, refusal{refusedRegistryString, fmt.Sprintf("%s TXT: %s", in.name, p)})
					continue
				}
			}
			h = reg.userPart(h)
		}
		newRR := rrset(newName, k.setID)
		newRRs[newRR] = true
		// The user's TXT and its ownership in one RRset (the apex): only an
		// explicit record-type/TXT field covers it (txt.go).
		shared := t == events.RecordTypeTXT && newName == in.name
		newRR.shared = newRR.shared || shared
		own := reg.owners(newRR.current, t, shared)
		viaOld := false
		if !own.ours && !own.foreign && oldRR != nil && oldRR != newRR {
			// Records ExternalDNS wrote in the old format only.
			own = reg.owners(oldRR.current, t, true)
			viaOld = own.ours
		}
		switch {
		case h != nil && !own.ours:
			if w != nil {
				out.conflicts = append(out.conflicts, fmt.Sprintf("%s %s exists and is not owned by %q", in.name, t, reg.ownerID))
			}
			continue
		case h == nil && own.foreign:
			if w != nil {
				out.conflicts = append(out.conflicts, fmt.Sprintf("%s %s is claimed by another owner", in.name, t))
			}
			continue
		}
		// put queues a change of the RRset; the user's TXT goes through the
		// TXT RRset at the name, which may hold registry strings too.
		put := func(c events.Change) {
			switch {
			case t == events.RecordTypeTXT:
				d := rrset(in.name, k.setID)
				d.data, d.user, d.adds = true, []string{}, c.New != nil
				if c.New != nil {
					d.user, d.userTTL = c.New.Targets, c.New.RecordTTL
				}
			case c.New != nil:
				upserts = append(upserts, c)
			default:
				deletes = append(deletes, c)
			}
		}
		// keep: our ownership of t stays where it is read from.
		keep := func() {
			if viaOld {
				oldRR.keep, oldRR.kept[t] = true, true
			} else {
				newRR.keep, newRR.kept[t] = true, true
			}
		}
		switch {
		case w != nil && h == nil:
			if in.policy.allows("create") {
				newRR.claim(t, w.RecordTTL)
				if viaOld {
					keep()
				}
				put(events.Change{New: w})
			}
		case w != nil && !events.SameRecords(*w, *h):
			if in.policy.allows("update") {
				newRR.claim(t, w.RecordTTL)
				if viaOld {
					keep()
				}
				put(events.Change{Old: h, New: w})
			} else {
				keep()
			}
		case w != nil:
			keep()
			if !viaOld && in.policy.allows("update") {
				newRR.claim(t, w.RecordTTL)
			}
		case h != nil && in.policy.allows("delete"):
			put(events.Change{Old: h})
			newRR.dropped[t] = true
			if oldRR != nil {
				oldRR.dropped[t] = true
			}
		case h != nil:
			// Not wanted, but the policy keeps it: so does its ownership.
			keep()
		}
	}

	// An old-format string of ours at the name (or one we take over) goes
	// once nothing there is ours any more, as ExternalDNS would remove it
	// with the last record; while something stays, it stays, rewritten to
	// us if it was another owner's we take over.
	oldTouched := map[*registryRRset]bool{}
	for _, oldRR := range oldRRs {
		if newRRs[oldRR] {
			continue
		}
		_, takeover, _ := reg.ours(oldRR.current)
		if takeover || deletedIn(deletes, oldRR.setID) {
			oldTouched[oldRR] = true
			oldRR.keep = oldRR.keep || anyKept(registries, oldRR.setID)
		}
	}

	// Ownership goes in before the records it covers and out after them.
	var regUpserts, regDeletes, dataUpserts, dataDeletes []events.Change
	for _, id := range slices.Sorted(maps.Keys(registries)) {
		r := registries[id]
		if oldRRs[r.setID] == r && !newRRs[r] && !oldTouched[r] {
			if !r.data {
				continue
			}
			r.leaveRegistry = true // only the user's strings change
		}
		ttl := r.ttl
		if !r.claimed && r.current != nil {
			ttl = r.current.RecordTTL
		}
		if r.data && r.userTTL != 0 {
			ttl = r.userTTL
		}
		c, ok := r.change(reg, ownership{owner: reg.ownerID, resource: in.resource}, ttl)
		switch {
		case !ok:
		case r.data && (r.adds || r.claimed):
			dataUpserts = append(dataUpserts, c)
		case r.data:
			dataDeletes = append(dataDeletes, c)
		case r.keep:
			regUpserts = append(regUpserts, c)
		case in.policy.allows("delete"):
			regDeletes = append(regDeletes, c)
		}
	}
	out.changes = slices.Concat(regUpserts, dataUpserts, upserts, deletes, dataDeletes, regDeletes)
	return out
}

// planNoop is --registry=noop, as ExternalDNS' noop registry: no ownership
// records are read or written, and every record of a managed type at a
// name in scope is ours to create, update and (with --policy=sync) delete.
func planNoop(in nameInput, keys []rrKey, have, want map[rrKey]*events.Endpoint) namePlan {
	var out namePlan
	for _, k := range keys {
		if k.recordType == events.RecordTypeTXT {
			continue // without ownership records, a TXT is never known to be ours
		}
		w, h := want[k], have[k]
		switch {
		case w != nil && h == nil:
			out.changes = append(out.changes, events.Change{New: w})
		case w != nil && !events.SameRecords(*w, *h) && in.policy.allows("update"):
			out.changes = append(out.changes, events.Change{Old: h, New: w})
		case w == nil && h != nil && in.policy.allows("delete"):
			out.changes = append(out.changes, events.Change{Old: h})
		}
	}
	return out
}

// rrKey is one RRset at a name: its type and set identifier. Two
// routing-policy RRsets of one type ("us" and "eu") are two RRsets,
// planned and owned apart.
type rrKey struct{ recordType, setID string }

func rrsetsByKey(eps []events.Endpoint) map[rrKey]*events.Endpoint {
	m := make(map[rrKey]*events.Endpoint, len(eps))
	for i := range eps {
		ep := eps[i]
		ep.Labels = nil
		m[rrKey{ep.RecordType, ep.SetIdentifier}] = &ep
	}
	return m
}

// managedKeys are the RRsets a name is planned by, in a fixed order (type,
// then set identifier): every managed type for every set identifier seen
// at the name, wanted or held, or at one of its ownership records (an
// orphaned ownership record must be found to be cleaned up), and the
// empty set identifier always.
func managedKeys(in nameInput, have, want map[rrKey]*events.Endpoint) []rrKey {
	sets := []string{""}
	add := func(m map[rrKey]*events.Endpoint, only string) {
		for k := range m {
			if (only == "" || k.recordType == only) && !slices.Contains(sets, k.setID) {
				sets = append(sets, k.setID)
			}
		}
	}
	add(have, "")
	add(want, "")
	if !in.reg.noop {
		for _, t := range in.reg.managed {
			if n := in.reg.names.txtName(in.name, t); n != in.name {
				add(rrsetsByKey(in.observed(n)), events.RecordTypeTXT)
			}
		}
	}
	slices.Sort(sets)
	var keys []rrKey
	for _, t := range in.reg.managed {
		for _, set := range sets {
			keys = append(keys, rrKey{t, set})
		}
	}
	return keys
}
