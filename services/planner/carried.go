package planner

import "github.com/zonestream/zonestream/events"

// carriedStates are the observed states results carried (events.Result's
// Observed), by provider and name, each with the result's ObservedSeq:
// what the name held as of that sequence of the observed stream, or
// later. The applier stores a copy of each on the observed stream right
// after the result; until that copy is read, a message of the name at or
// below the sequence is older than what the planner holds.
type carriedStates map[string]map[string]uint64

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
	floor, ok := c[provider][name]
	switch {
	case !ok:
		return notCarried
	case seq <= floor:
		return olderThanCarried
	}
	delete(c[provider], name)
	return copyOfCarried
}

// foldCarried takes in the observed states res carries. A state is taken
// only if the planner read nothing of its name stored after the
// read-back: a name it holds state of, as of a later sequence, or any
// name once the planner has read past the read-back (a tombstone leaves
// nothing to compare with), keeps what the stream said.
func (r *run) foldCarried(res *events.Result, cause string) {
	for _, o := range res.Observed {
		if z, ok := zoneOf(o.DNSName, r.zones[res.Provider]); !ok || z != res.Zone || o.Provider != res.Provider || o.Zone != res.Zone {
			continue // a result speaks only of its own zone
		}
		held, ok := r.observed[o.Provider][o.DNSName]
		if ok && held.seq > res.ObservedSeq || !ok && r.observedSeq > res.ObservedSeq {
			continue
		}
		if r.carried[o.Provider] == nil {
			r.carried[o.Provider] = map[string]uint64{}
		}
		r.carried[o.Provider][o.DNSName] = res.ObservedSeq
		r.observe(o, res.ObservedSeq, cause)
	}
}
