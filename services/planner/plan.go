package planner

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/zonestream/zonestream/events"
)

// Policy says which changes the planner may make (--policy).
type Policy string

const (
	PolicySync       Policy = "sync"        // create, update and delete
	PolicyUpsertOnly Policy = "upsert-only" // create and update, never delete
	PolicyCreateOnly Policy = "create-only" // create only
)

func (p Policy) valid() bool {
	return p == PolicySync || p == PolicyUpsertOnly || p == PolicyCreateOnly
}

func (p Policy) allows(action string) bool {
	switch action {
	case "create":
		return true
	case "update":
		return p != PolicyCreateOnly
	}
	return p == PolicySync
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

// registryRRset is a TXT RRset holding ownership strings: the new-format
// record of one type (registry_names.go), the old-format record of every
// type at the name, or the TXT at the name itself where the new-format name
// would fall outside the zone (the apex).
type registryRRset struct {
	name    string
	setID   string // the set identifier of the records it speaks for, as ExternalDNS writes it
	current *events.Endpoint
	keep    bool  // whether our ownership string should be there
	ttl     int64 // TTL for a written record
	claimed bool  // some type wants it written (its resource refreshed)
	kept    map[string]bool
	dropped map[string]bool
	// The RRset may also be the TXT records a user wants at the name
	// (txt.go): then data is set, user holds the user's strings it should
	// have (none: the user's TXT is deleted), and the registry strings in it
	// are left as they are when leaveRegistry is set.
	data          bool
	user          []string
	userTTL       int64
	adds          bool // the user's TXT is created or changed, not deleted
	shared        bool // our ownership of the user's TXT lives in this RRset itself (the apex)
	leaveRegistry bool
}

// newFormatOfAnother reports whether the TXT at txt reads as the
// new-format registry record of a name other than name. "a-web.example.org"
// is web's ownership of its A record; it must never be taken for an
// old-format claim of a host called "a-web", or planning that phantom host
// would "clean up" web's ownership. (A real host named like that, owned in
// the old format, is left alone: seen as unowned, never deleted.)
func (reg *registry) newFormatOfAnother(txt, name string) bool {
	owner, recordType := reg.names.endpointName(txt)
	return recordType != "" && owner != "" && owner != name
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
	for _, id := range sortedKeys(registries) {
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

// anyKept reports whether any registry RRset of the set identifier keeps
// our ownership: then a record of ours in that set remains at the name.
func anyKept(registries map[string]*registryRRset, setID string) bool {
	for _, r := range registries {
		if r.keep && r.setID == setID {
			return true
		}
	}
	return false
}

// deletedIn reports whether changes delete an RRset of the set identifier.
func deletedIn(changes []events.Change, setID string) bool {
	for _, c := range changes {
		if c.New == nil && c.Key().SetIdentifier == setID {
			return true
		}
	}
	return false
}

func (r *registryRRset) claim(t string, ttl int64) {
	r.keep, r.claimed, r.kept[t] = true, true, true
	if ttl != 0 && (r.ttl == 0 || ttl < r.ttl) {
		r.ttl = ttl
	}
}

// change returns the change that makes the registry RRset hold exactly our
// ownership string (r.keep) or none of it, leaving every TXT string that is
// not a registry string, and every other owner's, as it is; strings of
// owners we take over are replaced by ours. An existing string of ours is
// kept byte for byte unless its content must change (claimed: resource
// refreshed; record-type fields changed), so encrypted and quoted strings
// are not rewritten for nothing.
func (r *registryRRset) change(reg *registry, want ownership, ttl int64) (events.Change, bool) {
	var targets []string
	var mine string
	var mineO ownership
	var fields []string
	hadFields, takeover := false, false
	if r.current != nil {
		for _, t := range r.current.Targets {
			o, isRegistry := reg.parse(t)
			if !isRegistry {
				if !r.data {
					targets = append(targets, t) // the user's, left as it is
				}
				continue
			}
			if r.leaveRegistry {
				targets = append(targets, t)
				continue
			}
			switch reg.role(o.owner) {
			case roleMine:
				mine, mineO = t, o
			case roleTakeover:
				takeover = true
				if want.resource == "" {
					want.resource = o.resource
				}
			default:
				targets = append(targets, t) // never ours to drop
				continue
			}
			if o.types != nil {
				hadFields = true
				fields = append(fields, o.types...)
			}
		}
	}
	if r.data {
		targets = append(targets, r.user...)
	}
	keep := r.keep && !r.leaveRegistry
	if hadFields || (r.shared && r.kept[events.RecordTypeTXT]) {
		// Keep writing the per-record-type fields such a string had:
		// the types it listed, less those we deleted, plus those we keep.
		set := map[string]bool{}
		for _, t := range fields {
			if !r.dropped[t] {
				set[t] = true
			}
		}
		for t := range r.kept {
			set[t] = true
		}
		want.types = sortedKeys(set)
		if len(want.types) == 0 {
			keep = false
		}
	}
	if keep {
		switch {
		case mine != "" && mineO.same(want):
		case mine != "" && !r.claimed && !takeover && !hadFields:
		default:
			if mine != "" && !r.claimed && !takeover {
				want.resource = mineO.resource
			}
			if mine == "" || !mineO.same(want) {
				mine = reg.render(want, r.name)
			}
		}
		targets = append(targets, mine)
	}
	slices.Sort(targets)
	next := events.NewEndpoint(r.name, events.RecordTypeTXT, ttl, targets...)
	next.SetIdentifier = r.setID
	switch {
	case r.current == nil && len(next.Targets) == 0:
		return events.Change{}, false
	case r.current == nil:
		return events.Change{New: &next}, true
	case len(next.Targets) == 0:
		return events.Change{Old: r.current}, true
	case slices.Equal(next.Targets, r.current.Targets):
		return events.Change{}, false
	}
	return events.Change{Old: r.current, New: &next}, true
}

// ownedBy is what a registry RRset says about one record type.
type ownedBy struct {
	ours     bool // a string of ours (or of an owner we take over) covers it
	takeover bool // one of an owner we take over does
	foreign  bool // another owner's covers it
}

// owners reads a registry RRset for recordType.
func (reg *registry) owners(txt *events.Endpoint, recordType string, oldFormat bool) ownedBy {
	var o ownedBy
	if txt == nil {
		return o
	}
	for _, t := range txt.Targets {
		s, ok := reg.parse(t)
		if !ok || !s.covers(recordType, oldFormat) {
			continue
		}
		switch reg.role(s.owner) {
		case roleMine:
			o.ours = true
		case roleTakeover:
			o.ours, o.takeover = true, true
		default:
			o.foreign = true
		}
	}
	return o
}

// ours reports whether an RRset holds a string of ours, one we take over,
// or another owner's.
func (reg *registry) ours(txt *events.Endpoint) (mine, takeover, foreign bool) {
	if txt == nil {
		return
	}
	for _, t := range txt.Targets {
		if s, ok := reg.parse(t); ok {
			switch reg.role(s.owner) {
			case roleMine:
				mine = true
			case roleTakeover:
				takeover = true
			default:
				foreign = true
			}
		}
	}
	return
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

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
