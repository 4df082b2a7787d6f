package planner

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/registry"
)

// planName decides the changes at one name. It is a pure function of its
// input: the same state always gives the same changes, in the same order.
func planName(in nameInput) namePlan {
	have := rrsetsByKey(in.observed(in.name))
	want := rrsetsByKey(in.desired)
	keys := managedKeys(in, have, want)
	if in.reg.noop {
		return planNoop(in, keys, have, want)
	}
	w := newNameWork(in, have, want)
	for _, k := range keys {
		w.planRRset(k)
	}
	w.out.changes = w.ordered(w.retireOldFormat())
	return w.out
}

// nameWork is planName's working state at one name.
type nameWork struct {
	in         nameInput
	reg        *txtRegistry
	have, want map[rrKey]*events.Endpoint
	// registries are the registry RRsets by name and set identifier:
	// ExternalDNS gives the ownership record of an RRset with a set
	// identifier the same one, so routing-policy RRsets at one name ("us",
	// "eu") are owned apart.
	registries map[string]*registryRRset
	// oldName is the old-format (pre-0.16 ExternalDNS) ownership name;
	// hasOld: it is in the zone and not another name's new-format record.
	oldName string
	hasOld  bool
	oldRRs  map[string]*registryRRset // old-format registry RRsets by set identifier
	newRRs  map[*registryRRset]bool   // the new-format ones this name uses
	// upserts and deletes are the changes of records other than TXT.
	upserts, deletes []events.Change
	out              namePlan
}

func newNameWork(in nameInput, have, want map[rrKey]*events.Endpoint) *nameWork {
	w := &nameWork{in: in, reg: in.reg, have: have, want: want, registries: map[string]*registryRRset{},
		oldRRs: map[string]*registryRRset{}, newRRs: map[*registryRRset]bool{}}
	w.oldName = w.reg.names.OldTXTName(in.name)
	w.hasOld = w.inZone(w.oldName) && !w.reg.newFormatOfAnother(w.oldName, in.name)
	w.oldRRFor("")
	return w
}

// rrset is the registry RRset at name for setID, read once.
func (w *nameWork) rrset(name, setID string) *registryRRset {
	id := name + "\x00" + setID
	r := w.registries[id]
	if r == nil {
		txt := rrKey{events.RecordTypeTXT, setID}
		cur := w.have[txt]
		if name != w.in.name {
			cur = rrsetsByKey(w.in.observed(name))[txt]
		}
		r = &registryRRset{name: name, setID: setID, current: cur, kept: map[string]bool{}, dropped: map[string]bool{}}
		w.registries[id] = r
	}
	return r
}

func (w *nameWork) inZone(n string) bool {
	_, ok := zoneOf(n, []string{w.in.zone})
	return ok
}

// oldRRFor is the old-format registry RRset for setID, nil without one.
func (w *nameWork) oldRRFor(setID string) *registryRRset {
	if !w.hasOld {
		return nil
	}
	if w.oldRRs[setID] == nil {
		w.oldRRs[setID] = w.rrset(w.oldName, setID)
	}
	return w.oldRRs[setID]
}

// planRRset decides the change of one RRset (type and set identifier) and
// what becomes of its ownership: whether it may be written at all, whose
// it is, and what the policy does with it.
func (w *nameWork) planRRset(k rrKey) {
	// Read first even when nothing is planned: the old-format RRset is
	// retired or kept by what every type found there (retireOldFormat).
	oldRR := w.oldRRFor(k.setID)
	newName, ok := w.writable(k)
	if !ok {
		return
	}
	h := w.have[k]
	if k.recordType == events.RecordTypeTXT {
		h = w.reg.userPart(h)
	}
	o, ok := w.owned(k, newName, oldRR, h)
	if !ok {
		return
	}
	w.decide(k, h, o)
}

// writable returns the name of the ownership record of k; false, with the
// refusal reported, when the record or its ownership record cannot be
// written (touch nothing of this type rather than leave a record that
// nobody owns) or a wanted TXT holds a registry string.
func (w *nameWork) writable(k rrKey) (string, bool) {
	in, t := w.in, k.recordType
	want := w.want[k]
	newName := w.reg.names.TXTName(in.name, registry.OwnedAsType(t, isAlias(want) || isAlias(w.have[k])))
	if !w.inZone(newName) {
		newName = in.name
	}
	p := nameProblem(in.name)
	if !w.reg.virtual() {
		p = cmp.Or(p, nameProblem(newName))
	}
	if p != "" {
		if want != nil || w.have[k] != nil {
			w.out.refused = append(w.out.refused, refusal{refusedName, fmt.Sprintf("%s %s: %s", in.name, t, p)})
		}
		return "", false
	}
	if t == events.RecordTypeTXT && want != nil {
		if p := w.reg.registryStringIn(*want); p != "" {
			w.out.refused = append(w.out.refused, refusal{refusedRegistryString, fmt.Sprintf("%s TXT: %s", in.name, p)})
			return "", false
		}
	}
	return newName, true
}

// rrsetOwnership is where the ownership of one RRset is read and kept.
type rrsetOwnership struct {
	newRR, oldRR *registryRRset
	// viaOld: ours only through an old-format string, where it stays.
	viaOld bool
}

// owned reads whose k (held as h) is: from its new-format ownership
// record, else from the old-format one ExternalDNS may have left. false,
// with a conflict reported when k is wanted, when it is not ours to change.
func (w *nameWork) owned(k rrKey, newName string, oldRR *registryRRset, h *events.Endpoint) (rrsetOwnership, bool) {
	in, reg, t := w.in, w.reg, k.recordType
	want := w.want[k]
	o := rrsetOwnership{newRR: w.rrset(newName, k.setID), oldRR: oldRR}
	w.newRRs[o.newRR] = true
	// The user's TXT and its ownership in one RRset (the apex): only an
	// explicit record-type/TXT field covers it (txt.go).
	shared := t == events.RecordTypeTXT && newName == in.name
	o.newRR.shared = o.newRR.shared || shared
	own := reg.owners(o.newRR.current, t, shared)
	if !own.ours && !own.foreign && oldRR != nil && oldRR != o.newRR {
		// Records ExternalDNS wrote in the old format only.
		own = reg.owners(oldRR.current, t, true)
		o.viaOld = own.ours
	}
	switch {
	case h != nil && !own.ours:
		if want != nil {
			w.out.conflicts = append(w.out.conflicts, fmt.Sprintf("%s %s exists and is not owned by %q", in.name, t, reg.OwnerID))
			w.out.mismatches = append(w.out.mismatches, ownerMismatch{recordType: t, owner: reg.OwnerID, foreignOwner: own.foreignOwner})
		}
		return o, false
	case h == nil && own.foreign:
		if want != nil {
			w.out.conflicts = append(w.out.conflicts, fmt.Sprintf("%s %s is claimed by another owner", in.name, t))
			w.out.mismatches = append(w.out.mismatches, ownerMismatch{recordType: t, owner: reg.OwnerID, foreignOwner: own.foreignOwner})
		}
		return o, false
	}
	return o, true
}

// decide plans an RRset of ours, k held as h, by the policy: its change,
// and which ownership record keeps or drops its type.
func (w *nameWork) decide(k rrKey, h *events.Endpoint, o rrsetOwnership) {
	in, t := w.in, k.recordType
	want, newRR, oldRR := w.want[k], o.newRR, o.oldRR
	// put queues a change of the RRset; the user's TXT goes through the
	// TXT RRset at the name, which may hold registry strings too.
	put := func(c events.Change) {
		switch {
		case t == events.RecordTypeTXT:
			d := w.rrset(in.name, k.setID)
			d.data, d.user, d.adds = true, []string{}, c.New != nil
			if c.New != nil {
				d.user, d.userTTL = c.New.Targets, c.New.RecordTTL
			}
		case c.New != nil:
			w.upserts = append(w.upserts, c)
		default:
			w.deletes = append(w.deletes, c)
		}
	}
	// keep: our ownership of t stays where it is read from.
	keep := func() {
		if o.viaOld {
			oldRR.keep, oldRR.kept[t] = true, true
		} else {
			newRR.keep, newRR.kept[t] = true, true
		}
	}
	switch {
	case want != nil && h == nil:
		if in.policy.allows("create") {
			newRR.claim(t, want.RecordTTL)
			if o.viaOld {
				keep()
			}
			put(events.Change{New: want})
		}
	case want != nil && !events.SameRecords(*want, *h):
		if in.policy.allows("update") {
			newRR.claim(t, want.RecordTTL)
			if o.viaOld {
				keep()
			}
			put(events.Change{Old: h, New: want})
		} else {
			keep()
		}
	case want != nil:
		keep()
		if !o.viaOld && in.policy.allows("update") {
			newRR.claim(t, want.RecordTTL)
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

// retireOldFormat decides the old-format registry RRsets to rewrite or
// remove. An old-format string of ours at the name (or one we take over)
// goes once nothing there is ours any more, as ExternalDNS would remove it
// with the last record; while something stays, it stays, rewritten to us
// if it was another owner's we take over.
func (w *nameWork) retireOldFormat() map[*registryRRset]bool {
	touched := map[*registryRRset]bool{}
	for _, oldRR := range w.oldRRs {
		if w.newRRs[oldRR] || oldRR.current == nil {
			continue // nothing at the name to retire: none is written
		}
		_, takeover, _ := w.reg.ours(oldRR.current)
		if takeover || deletedIn(w.deletes, oldRR.setID) {
			touched[oldRR] = true
			oldRR.keep = oldRR.keep || anyKept(w.registries, oldRR.setID)
		}
	}
	return touched
}

// ordered is every change at the name in the order they must be applied:
// ownership goes in before the records it covers and out after them.
func (w *nameWork) ordered(oldTouched map[*registryRRset]bool) []events.Change {
	var regUpserts, regDeletes, dataUpserts, dataDeletes []events.Change
	for _, id := range slices.Sorted(maps.Keys(w.registries)) {
		r := w.registries[id]
		if w.oldRRs[r.setID] == r && !w.newRRs[r] && !oldTouched[r] {
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
		c, ok := r.change(w.reg, registry.Labels{Owner: w.reg.OwnerID, Resource: w.in.resource}, ttl)
		switch {
		case !ok:
		case r.data && (r.adds || r.claimed):
			dataUpserts = append(dataUpserts, c)
		case r.data:
			dataDeletes = append(dataDeletes, c)
		case r.keep:
			regUpserts = append(regUpserts, c)
		case w.in.policy.allows("delete"):
			regDeletes = append(regDeletes, c)
		}
	}
	return slices.Concat(regUpserts, dataUpserts, w.upserts, w.deletes, dataDeletes, regDeletes)
}

// isAlias says whether the record carries alias=true (strconv.ParseBool,
// as ExternalDNS reads it).
func isAlias(ep *events.Endpoint) bool {
	if ep == nil {
		return false
	}
	for _, p := range ep.ProviderSpecific {
		if p.Name == "alias" {
			b, _ := strconv.ParseBool(p.Value)
			return b
		}
	}
	return false
}
