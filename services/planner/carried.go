package planner

import "github.com/zonestream/zonestream/events"

// carriedStates are what the planner needs to take the observed states
// results carry (events.Result's Observed) in the right order with the
// observed stream.
type carriedStates struct {
	// floors are the carried states not yet stored, by provider and name,
	// each with its result's ObservedSeq: what the name held as of that
	// sequence of the observed stream, or later. The applier stores a copy
	// of each right after the result; until that copy is read, a message
	// of the name at or below the sequence is older than what the planner
	// holds.
	floors map[string]map[string]uint64
	// emptied are the names whose last message read was a tombstone, by
	// provider, with its sequence. A name the planner holds nothing of was
	// either never held, and a carried state of it is news, or emptied
	// after the result's read-back, and the carried state is older. Kept
	// while a plan out may still get a result from before them (prune).
	emptied map[string]map[string]uint64
}

func newCarriedStates() carriedStates {
	return carriedStates{floors: map[string]map[string]uint64{}, emptied: map[string]map[string]uint64{}}
}

// carriedMatch says how a message of the observed stream relates to a
// carried state of its name.
type carriedMatch int

const (
	notCarried       carriedMatch = iota // the name holds no carried state
	olderThanCarried                     // stored before the result was read back: ignore it
	copyOfCarried                        // stored after: the copy, or something newer
)

// take says how the message at seq of provider's name relates to a
// carried state, and forgets the state once a message stored after it
// comes.
func (c carriedStates) take(provider, name string, seq uint64) carriedMatch {
	floor, ok := c.floors[provider][name]
	switch {
	case !ok:
		return notCarried
	case seq <= floor:
		return olderThanCarried
	}
	delete(c.floors[provider], name)
	return copyOfCarried
}

// newerThan reports whether the planner read something of provider's name
// stored after the observed stream's sequence floor: a state it holds, or
// a tombstone.
func (c carriedStates) newerThan(held map[string]observedEntry, provider, name string, floor uint64) bool {
	if e, ok := held[name]; ok {
		return e.seq > floor
	}
	return c.emptied[provider][name] > floor
}

// setEmptied records a tombstone of provider's name at seq, or forgets
// one once the name holds something again.
func (c carriedStates) setEmptied(provider, name string, seq uint64, empty bool) {
	if !empty {
		delete(c.emptied[provider], name)
		return
	}
	if c.emptied[provider] == nil {
		c.emptied[provider] = map[string]uint64{}
	}
	c.emptied[provider][name] = seq
}

// prune forgets the tombstones at or below seq: every plan out went out
// after the planner had read that far, so its result's read-back is later
// and no state it carries is older than them.
func (c carriedStates) prune(seq uint64) {
	for _, byName := range c.emptied {
		for name, at := range byName {
			if at <= seq {
				delete(byName, name)
			}
		}
	}
}

// pruneEmptied prunes the tombstones no result still to come can be older
// than: those read before the earliest plan out went out, or all of them
// with none out.
func (r *run) pruneEmptied() {
	oldest := r.observedSeq
	for _, f := range r.flights {
		for _, p := range f.plans {
			oldest = min(oldest, p.readSeq)
		}
	}
	r.carried.prune(oldest)
}

// foldCarried takes in the observed states res carries. A state is taken
// only if the planner read nothing of its name stored after the
// read-back: a name it holds state of, or read a tombstone of, as of a
// later sequence keeps what the stream said.
func (r *run) foldCarried(res *events.Result, cause string) {
	for _, o := range res.Observed {
		if z, ok := zoneOf(o.DNSName, r.zones[res.Provider]); !ok || z != res.Zone || o.Provider != res.Provider || o.Zone != res.Zone {
			continue // a result speaks only of its own zone
		}
		if r.carried.newerThan(r.observed[o.Provider], o.Provider, o.DNSName, res.ObservedSeq) {
			continue
		}
		if r.carried.floors[o.Provider] == nil {
			r.carried.floors[o.Provider] = map[string]uint64{}
		}
		r.carried.floors[o.Provider][o.DNSName] = res.ObservedSeq
		r.observe(o, res.ObservedSeq, cause)
	}
}
