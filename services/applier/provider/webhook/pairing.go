package webhook

import (
	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
)

// updatePairs hands out ExternalDNS' updateOld endpoints to their
// updateNew: the one at the same index when it is unused and of the same
// RRset (the order ExternalDNS sends), else the first unused one of the
// RRset. Each RRset's olds wait in a queue in index order, and a used old
// is skipped once when it reaches the front, so pairing n updates costs
// O(n), not a scan of every old per new: the 32 MiB body holds about
// 250,000 pairs.
type updatePairs struct {
	keys   []events.RRsetKey
	used   []bool
	queues map[events.RRsetKey][]int
}

func pairing(olds []events.Endpoint) *updatePairs {
	p := &updatePairs{keys: make([]events.RRsetKey, len(olds)), used: make([]bool, len(olds)),
		queues: make(map[events.RRsetKey][]int, len(olds))}
	for i := range olds {
		k := provider.KeyOf(olds[i])
		p.keys[i] = k
		p.queues[k] = append(p.queues[k], i)
	}
	return p
}

// take returns the index of the updateOld paired with the updateNew at
// index i, of RRset k, and marks it used; -1 when none is left.
func (p *updatePairs) take(i int, k events.RRsetKey) int {
	j := -1
	if i < len(p.keys) && !p.used[i] && p.keys[i] == k {
		j = i
	} else {
		q := p.queues[k]
		for len(q) > 0 && p.used[q[0]] {
			q = q[1:]
		}
		if len(q) > 0 {
			j, q = q[0], q[1:]
		}
		p.queues[k] = q
	}
	if j >= 0 {
		p.used[j] = true
	}
	return j
}
