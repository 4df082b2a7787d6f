package planner

import "time"

// A wipe rarely comes as one pass: `helm uninstall`, an Argo CD prune or
// `kubectl delete --all` removes objects over seconds, and a provider that
// applies in milliseconds lets every pass see one or two deletes, each
// within the guard's limits. So the guard judges a zone's deletes over a
// window (--max-deletes-window), not a pass: what was planned to go in the
// window counts with what a pass would delete now, and against what the
// zone held when the window began (what it holds now, plus those).

// deletedAt is how many owned record sets a pass planned to delete, and when.
type deletedAt struct {
	at time.Time
	n  int
}

// recentDeletes are the deletes planned per zone within the window.
type recentDeletes struct {
	window time.Duration
	zones  map[zoneKey][]deletedAt
}

func newRecentDeletes(window time.Duration) recentDeletes {
	return recentDeletes{window: window, zones: map[zoneKey][]deletedAt{}}
}

// note records n deletes planned in zone k at now.
func (d recentDeletes) note(k zoneKey, n int, now time.Time) {
	if n > 0 && d.window > 0 {
		d.zones[k] = append(d.zones[k], deletedAt{at: now, n: n})
	}
}

// within counts the deletes planned in zone k within the window before
// now, forgetting older ones.
func (d recentDeletes) within(k zoneKey, now time.Time) int {
	log := d.zones[k]
	i := 0
	for i < len(log) && now.Sub(log[i].at) >= d.window {
		i++
	}
	if i == len(log) {
		delete(d.zones, k)
		return 0
	}
	log = log[i:]
	d.zones[k] = log
	total := 0
	for _, e := range log {
		total += e.n
	}
	return total
}
