package planner

import (
	"maps"
	"slices"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/registry"
)

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
func (reg *txtRegistry) newFormatOfAnother(txt, name string) bool {
	owner, recordType := reg.names.EndpointName(txt)
	return recordType != "" && owner != "" && owner != name
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
func (r *registryRRset) change(reg *txtRegistry, want registry.Labels, ttl int64) (events.Change, bool) {
	now := r.read(reg)
	if want.Resource == "" {
		want.Resource = now.takenResource
	}
	targets := now.others
	if r.data {
		targets = append(targets, r.user...)
	}
	keep := r.keep && !r.leaveRegistry
	if now.hadFields || (r.shared && r.kept[events.RecordTypeTXT]) {
		want.Types = r.types(now.fields)
		if len(want.Types) == 0 {
			keep = false
		}
	}
	if keep {
		targets = append(targets, r.ourString(reg, now, want))
	}
	return r.changeTo(targets, ttl)
}

// registryHolding is what a registry RRset holds now, sorted out by change.
type registryHolding struct {
	others        []string        // strings left as they are: the user's (unless r.data), other owners', every registry string when leaveRegistry
	mine          string          // our ownership string, if there is one
	mineO         registry.Labels // what it says
	fields        []string        // the record types our strings and those we take over listed
	hadFields     bool            // one of them listed record types
	takeover      bool            // a string of an owner we take over is there
	takenResource string          // the first resource such a string names
}

// read sorts the strings the RRset holds now into what change leaves, what
// is ours and what we take over.
func (r *registryRRset) read(reg *txtRegistry) registryHolding {
	var h registryHolding
	if r.current == nil {
		return h
	}
	for _, t := range r.current.Targets {
		o, isRegistry := reg.parse(t)
		if !isRegistry {
			if !r.data {
				h.others = append(h.others, t) // the user's, left as it is
			}
			continue
		}
		if r.leaveRegistry {
			h.others = append(h.others, t)
			continue
		}
		switch reg.role(o.Owner) {
		case roleMine:
			h.mine, h.mineO = t, o
		case roleTakeover:
			h.takeover = true
			if h.takenResource == "" {
				h.takenResource = o.Resource
			}
		default:
			h.others = append(h.others, t) // never ours to drop
			continue
		}
		if o.Types != nil {
			h.hadFields = true
			h.fields = append(h.fields, o.Types...)
		}
	}
	return h
}

// types is the per-record-type field to keep writing when a string had
// one: the types it listed, less those we deleted, plus those we keep.
func (r *registryRRset) types(listed []string) []string {
	set := map[string]bool{}
	for _, t := range listed {
		if !r.dropped[t] {
			set[t] = true
		}
	}
	for t := range r.kept {
		set[t] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// ourString is the ownership string of ours the RRset is to hold: the present
// one byte for byte when it says what is wanted, or when nothing asks for
// a refresh (not claimed, nothing taken over, no type fields); otherwise
// one rendered from want (keeping the present resource when nothing
// claimed it).
func (r *registryRRset) ourString(reg *txtRegistry, now registryHolding, want registry.Labels) string {
	mine := now.mine
	switch {
	case mine != "" && now.mineO.Same(want):
	case mine != "" && !r.claimed && !now.takeover && !now.hadFields:
	default:
		if mine != "" && !r.claimed && !now.takeover {
			want.Resource = now.mineO.Resource
		}
		if mine == "" || !now.mineO.Same(want) {
			mine = reg.render(want, r.name)
		}
	}
	return mine
}

// changeTo is the change from the RRset's current records to targets (none:
// a delete), and false when there is nothing to change.
func (r *registryRRset) changeTo(targets []string, ttl int64) (events.Change, bool) {
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
	// foreignOwner is the first other owner whose string covers it.
	foreignOwner string
}

// owners reads a registry RRset for recordType.
func (reg *txtRegistry) owners(txt *events.Endpoint, recordType string, oldFormat bool) ownedBy {
	var o ownedBy
	if txt == nil {
		return o
	}
	for _, t := range txt.Targets {
		s, ok := reg.parse(t)
		if !ok || !s.Covers(recordType, oldFormat) {
			continue
		}
		switch reg.role(s.Owner) {
		case roleMine:
			o.ours = true
		case roleTakeover:
			o.ours, o.takeover = true, true
		default:
			if !o.foreign {
				o.foreignOwner = s.Owner
			}
			o.foreign = true
		}
	}
	return o
}

// ours reports whether an RRset holds a string of ours, one we take over,
// or another owner's.
func (reg *txtRegistry) ours(txt *events.Endpoint) (mine, takeover, foreign bool) {
	if txt == nil {
		return
	}
	for _, t := range txt.Targets {
		if s, ok := reg.parse(t); ok {
			switch reg.role(s.Owner) {
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
