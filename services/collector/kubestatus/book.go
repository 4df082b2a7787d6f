package kubestatus

import (
	"slices"
	"strings"

	"github.com/cespare/xxhash/v2"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/registry"
	"github.com/zonestream/zonestream/events/routing"
)

// rrsetKey names an RRset at a name.
type rrsetKey struct{ recordType, setID string }

// digest is an RRset in a few bytes: its key and a hash of its targets.
type digest struct {
	key     rrsetKey
	targets uint64
}

func digestOf(ep events.Endpoint) digest {
	ts := slices.Clone(ep.Targets)
	slices.Sort(ts)
	return digest{rrsetKey{ep.RecordType, ep.SetIdentifier}, xxhash.Sum64String(strings.Join(ts, "\x00"))}
}

// wanted is this cluster's part of the desired state at a name.
type wanted struct {
	rrsets []wantedRRset
	losers []events.Loser
	// keys are every RRset wanted at the name, whoever wants it.
	keys []rrsetKey
	// namespaces are those of every object wanting the name, of any
	// cluster: the planner routes the name by them (routing.Namespaces).
	namespaces []string
}

type wantedRRset struct {
	digest
	objects []events.ObjectRef
}

// held is what the providers hold at a name, one entry per provider
// (a slice: a name is nearly always held by one).
type held []heldBy

type heldBy struct {
	provider string
	rrsets   []digest
	owners   []string // owners named by ownership TXT records at the name
}

// failure counts the consecutive plan results that failed a change at a name.
type failure struct {
	count int
	err   string
}

// tracked is what is remembered of one object at one name: the last
// outcome and the RRsets it wanted there.
type tracked struct {
	outcome Outcome
	keys    []rrsetKey
	// published: the provider held the object's records here once, so
	// their going is news (RecordDeleted).
	published bool
}

// book is the collector's memory of the pipeline's outcome for its own
// objects: only names this cluster's objects ask for are kept in full;
// what providers hold is kept as digests.
type book struct {
	owns      func(events.ObjectRef) bool
	ownership registry.Settings
	names     registry.Names // where ownership's records live
	cluster   string         // the cluster name of this collector's objects

	desired  map[string]*wanted
	observed map[string]held
	// routes is every provider's zone list: where a name goes, and why
	// nowhere, decided as the planner decides it.
	routes   *routing.Table
	quota    quotaBook
	failures map[string]failure
	// registry maps an ownership TXT name to the wanted names it covers.
	registry map[string][]string
	// byName is what is remembered of each object at each name; objects
	// indexes the names of each object.
	byName  map[string][]objectAt
	objects map[events.ObjectRef][]string
}

// objectAt is what is remembered of one object at one name.
type objectAt struct {
	obj events.ObjectRef
	tracked
}

func newBook(owns func(events.ObjectRef) bool, o registry.Settings) *book {
	return &book{owns: owns, ownership: o, names: o.Names(), desired: map[string]*wanted{}, observed: map[string]held{},
		routes: routing.New(), quota: quotaBook{}, failures: map[string]failure{}, registry: map[string][]string{},
		byName: map[string][]objectAt{}, objects: map[events.ObjectRef][]string{}}
}

// Transition is an object's records at a name reaching a new outcome.
type Transition struct {
	Object events.ObjectRef
	Name   string
	From   Outcome
	To     Outcome
}

// setDesired records the desired state at a name and returns what it changed.
func (b *book) setDesired(d *events.DesiredState) []Transition {
	name := events.NormalizeName(d.DNSName)
	w := &wanted{}
	for _, l := range d.Losers {
		if b.owns(l.Object) {
			w.losers = append(w.losers, l)
		}
	}
	for _, ow := range d.Holders {
		var mine []events.ObjectRef
		for _, o := range ow.Objects {
			if b.owns(o) {
				mine = append(mine, o)
			}
		}
		if len(mine) == 0 {
			continue
		}
		for _, ep := range d.Endpoints {
			if ep.RecordType == ow.RecordType && ep.SetIdentifier == ow.SetIdentifier {
				w.rrsets = append(w.rrsets, wantedRRset{digestOf(ep), mine})
			}
		}
	}
	ours := len(w.rrsets) > 0 || len(w.losers) > 0
	b.unindex(name)
	if !ours && len(b.byName[name]) == 0 {
		delete(b.desired, name)
		delete(b.failures, name)
		return nil
	}
	// Every RRset wanted, whoever wants it, is kept while judging, so
	// that an object that let go of a name now another's is done with it.
	for _, ep := range d.Endpoints {
		w.keys = append(w.keys, rrsetKey{ep.RecordType, ep.SetIdentifier})
	}
	w.namespaces = routing.Namespaces(d.Contributors)
	b.desired[name] = w
	b.index(name, w)
	out := b.judgeName(name)
	if !ours {
		delete(b.desired, name)
		delete(b.failures, name)
	}
	return out
}

func (b *book) index(name string, w *wanted) {
	for _, r := range w.rrsets {
		for _, txt := range b.registryNames(name, r.key.recordType) {
			if !slices.Contains(b.registry[txt], name) {
				b.registry[txt] = append(b.registry[txt], name)
			}
		}
	}
}

func (b *book) unindex(name string) {
	w := b.desired[name]
	if w == nil {
		return
	}
	for _, r := range w.rrsets {
		for _, txt := range b.registryNames(name, r.key.recordType) {
			b.registry[txt] = slices.DeleteFunc(b.registry[txt], func(n string) bool { return n == name })
			if len(b.registry[txt]) == 0 {
				delete(b.registry, txt)
			}
		}
	}
}

// setObserved records what a provider holds at a name.
func (b *book) setObserved(o *events.ObservedState) []Transition {
	name := events.NormalizeName(o.DNSName)
	by := heldBy{provider: o.Provider}
	for _, r := range o.Records {
		if r.RecordType == events.RecordTypeTXT {
			if owner, ok := ownerOf(r); ok {
				by.owners = append(by.owners, owner)
				continue // an ownership record: only its owner matters
			}
		}
		by.rrsets = append(by.rrsets, digestOf(r))
	}
	h := slices.DeleteFunc(b.observed[name], func(x heldBy) bool { return x.provider == o.Provider })
	if len(by.rrsets) > 0 || len(by.owners) > 0 {
		h = append(h, by)
	}
	if len(h) == 0 {
		delete(b.observed, name)
	} else {
		b.observed[name] = slices.Clip(h)
	}
	if b.countHeld(o.Provider, name, by) {
		return b.judgeAll() // a quota filled or freed: every name routed there may change
	}
	out := b.judgeName(name)
	for _, covered := range b.registry[name] {
		out = append(out, b.judgeName(covered)...)
	}
	return out
}

// ownerOf returns the owner an ownership TXT record names (registry.Owner);
// ok is false when it is no ownership record.
func ownerOf(r events.Endpoint) (owner string, ok bool) {
	for _, t := range r.Targets {
		if owner, ok := registry.Owner(t); ok {
			return owner, true
		}
	}
	return "", false
}

// setZones records the zones a provider manages, and its scope when an
// object declares it.
func (b *book) setZones(z *events.ZoneList) []Transition {
	b.routes.Set(z)
	return b.judgeAll()
}

// judgeAll judges every wanted name again: where names go has changed.
func (b *book) judgeAll() []Transition {
	var out []Transition
	for name := range b.desired {
		out = append(out, b.judgeName(name)...)
	}
	return out
}

// addResult counts the failures a plan result reports at wanted names.
func (b *book) addResult(r *events.Result) []Transition {
	names := map[string]string{}
	for _, f := range r.Failed {
		name := events.NormalizeName(f.Change.Key().DNSName)
		if _, ok := b.desired[name]; ok {
			names[name] = f.Error
		}
	}
	var out []Transition
	for name, err := range names {
		f := b.failures[name]
		b.failures[name] = failure{count: f.count + 1, err: err}
		out = append(out, b.judgeName(name)...)
	}
	return out
}
