package planner

import (
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
	ownerID  string
	policy   Policy
	managed  []string // managed record types
}

// namePlan is what planName decided.
type namePlan struct {
	changes   []events.Change
	conflicts []string // why something wanted was left alone
}

// registryRRset is the TXT RRset holding the ownership of some record types
// at a name: its own "<type>-<name>" in the new format, or the TXT at the
// name itself where the new-format name would fall outside the zone (the
// apex).
type registryRRset struct {
	name    string
	current *events.Endpoint
	keep    bool  // whether our ownership string should be there
	ttl     int64 // TTL for a written record
	claimed bool  // some type wants it written
}

// planName decides the changes at one name. It is a pure function of its
// input: the same state always gives the same changes, in the same order.
func planName(in nameInput) namePlan {
	var out namePlan
	have := rrsetsByType(in.observed(in.name))
	want := rrsetsByType(in.desired)
	oldFormat := have[events.RecordTypeTXT]
	registries := map[string]*registryRRset{}
	registryFor := func(recordType string) *registryRRset {
		name := txtName(in.name, recordType)
		var current *events.Endpoint
		if _, inZone := zoneOf(name, []string{in.zone}); !inZone {
			name, current = in.name, oldFormat
		} else if txt := rrsetsByType(in.observed(name))[events.RecordTypeTXT]; txt != nil {
			current = txt
		}
		r := registries[name]
		if r == nil {
			r = &registryRRset{name: name, current: current}
			registries[name] = r
		}
		return r
	}

	var upserts, deletes []events.Change
	for _, t := range in.managed {
		if t == events.RecordTypeTXT {
			continue // the registry's own type: never managed as data
		}
		w, h := want[t], have[t]
		reg := registryFor(t)
		ours, foreign := owners(reg.current, in.ownerID)
		if !ours && !foreign && reg.name != in.name {
			// Records ExternalDNS wrote in the old format only.
			ours, foreign = owners(oldFormat, in.ownerID)
		}
		switch {
		case h != nil && !ours:
			if w != nil {
				out.conflicts = append(out.conflicts, fmt.Sprintf("%s %s exists and is not owned by %q", in.name, t, in.ownerID))
			}
			continue
		case h == nil && foreign:
			if w != nil {
				out.conflicts = append(out.conflicts, fmt.Sprintf("%s %s is claimed by another owner", in.name, t))
			}
			continue
		}
		switch {
		case w != nil && h == nil:
			if in.policy.allows("create") {
				reg.claim(w.RecordTTL)
				upserts = append(upserts, events.Change{New: w})
			}
		case w != nil && !events.SameRecords(*w, *h):
			if in.policy.allows("update") {
				reg.claim(w.RecordTTL)
				upserts = append(upserts, events.Change{Old: h, New: w})
			} else if ours {
				reg.keep = true
			}
		case w != nil:
			reg.keep = true
			if in.policy.allows("update") {
				reg.claim(w.RecordTTL)
			}
		case h != nil && in.policy.allows("delete"):
			deletes = append(deletes, events.Change{Old: h})
		case h != nil:
			// Not wanted, but the policy keeps it: so does its ownership.
			reg.keep = true
		}
	}

	// An old-format string of ours at the name goes once nothing there is
	// ours any more, as ExternalDNS would remove it with the last record.
	if oldOurs, _ := owners(oldFormat, in.ownerID); oldOurs && len(deletes) > 0 {
		if r := registries[in.name]; r == nil {
			registries[in.name] = &registryRRset{name: in.name, current: oldFormat, keep: anyKept(registries)}
		}
	}

	// Ownership goes in before the records it covers and out after them.
	var regUpserts, regDeletes []events.Change
	for _, name := range sortedKeys(registries) {
		r := registries[name]
		ttl := r.ttl
		if !r.claimed && r.current != nil {
			ttl = r.current.RecordTTL
		}
		c, ok := r.change(ownership{owner: in.ownerID, resource: in.resource}, r.keep, r.claimed, ttl)
		switch {
		case !ok:
		case r.keep:
			regUpserts = append(regUpserts, c)
		case in.policy.allows("delete"):
			regDeletes = append(regDeletes, c)
		}
	}
	out.changes = slices.Concat(regUpserts, upserts, deletes, regDeletes)
	return out
}

// anyKept reports whether any registry RRset keeps our ownership: then a
// record of ours remains at the name.
func anyKept(registries map[string]*registryRRset) bool {
	for _, r := range registries {
		if r.keep {
			return true
		}
	}
	return false
}

func (r *registryRRset) claim(ttl int64) {
	r.keep, r.claimed = true, true
	if ttl != 0 && (r.ttl == 0 || ttl < r.ttl) {
		r.ttl = ttl
	}
}

// change returns the change that makes the registry RRset hold exactly our
// ownership string (keep) or none of it, leaving every TXT string that is not
// a registry string as it is. rewrite says our string may be refreshed (its
// resource updated); without it, an existing string of ours is left alone.
func (r *registryRRset) change(want ownership, keep, rewrite bool, ttl int64) (events.Change, bool) {
	var targets []string
	var mine string
	if r.current != nil {
		for _, t := range r.current.Targets {
			o, isRegistry := parseOwnership(t)
			switch {
			case !isRegistry:
				targets = append(targets, t)
			case o.owner == want.owner:
				mine = t
			default:
				targets = append(targets, t) // never ours to drop
			}
		}
	}
	if keep {
		if mine == "" || rewrite {
			mine = want.format()
		}
		targets = append(targets, mine)
	}
	next := events.NewEndpoint(r.name, events.RecordTypeTXT, ttl, targets...)
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

// owners reads a registry RRset: whether it holds our ownership string, and
// whether it holds another owner's.
func owners(txt *events.Endpoint, ownerID string) (ours, foreign bool) {
	if txt == nil {
		return false, false
	}
	for _, t := range txt.Targets {
		if o, ok := parseOwnership(t); ok {
			if o.owner == ownerID {
				ours = true
			} else {
				foreign = true
			}
		}
	}
	return ours, foreign
}

func rrsetsByType(eps []events.Endpoint) map[string]*events.Endpoint {
	m := make(map[string]*events.Endpoint, len(eps))
	for i := range eps {
		ep := eps[i]
		ep.Labels = nil
		m[ep.RecordType] = &ep
	}
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
