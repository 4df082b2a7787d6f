package planner

import (
	"time"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/retry"
)

// A provider's adjust answer may lose names: a webhook that answers [] to a
// request that held TXT records (its client adds those back), a proxy's
// empty body, an AdjustEndpoints that drops what it does not know. Planned
// from such an answer, a lost name reads as wanted by nobody, and every
// record of it would be deleted. So a name the request carried and the
// answer did not is not adjusted, never unwanted: it waits and backs off
// on its own (the other names of its zone go on), counted and logged, and
// is asked for again once its back-off ends.

const (
	lostBackoffBase = time.Second
	lostBackoffMax  = 5 * time.Minute
)

// lostName is one name an adjust answer lost, and when to ask again.
type lostName struct {
	failures  int
	notBefore time.Time
}

// lostNames are the names each provider's adjust answers lost, by
// provider, then name.
type lostNames map[string]map[string]*lostName

// lose notes that provider's answer lost name, and returns how long the
// name waits before it is asked for again.
func (l lostNames) lose(provider, name string) time.Duration {
	byName := l[provider]
	if byName == nil {
		byName = map[string]*lostName{}
		l[provider] = byName
	}
	n := byName[name]
	if n == nil {
		n = &lostName{}
		byName[name] = n
	}
	n.failures++
	wait := retry.Jitter(retry.Delay(lostBackoffBase, lostBackoffMax, n.failures-1))
	n.notBefore = time.Now().Add(wait)
	return wait
}

// found forgets that name was lost: provider adjusted it.
func (l lostNames) found(provider, name string) {
	if byName := l[provider]; byName != nil {
		delete(byName, name)
		if len(byName) == 0 {
			delete(l, provider)
		}
	}
}

// forget drops name from every provider's lost names: nothing is wanted
// there any more, so no answer is awaited for it.
func (l lostNames) forget(name string) {
	for provider := range l {
		l.found(provider, name)
	}
}

// waiting reports whether name waits out its back-off at now.
func (l lostNames) waiting(provider, name string, now time.Time) bool {
	n := l[provider][name]
	return n != nil && now.Before(n.notBefore)
}

// count is how many names wait for an adjustment an answer lost.
func (l lostNames) count() int {
	total := 0
	for _, byName := range l {
		total += len(byName)
	}
	return total
}

// nextAfter is the earliest end of a back-off after now; zero if none.
func (l lostNames) nextAfter(now time.Time) time.Time {
	var at time.Time
	for _, byName := range l {
		for _, n := range byName {
			if n.notBefore.After(now) && (at.IsZero() || n.notBefore.Before(at)) {
				at = n.notBefore
			}
		}
	}
	return at
}

// lostIn says which names of asked answer lost: it holds nothing for
// them, or only TXT records where a record of another type was asked
// (a webhook client answers the TXT records itself, whatever the webhook
// said).
func lostIn(asked, answer map[string][]events.Endpoint) map[string]bool {
	lost := map[string]bool{}
	for name, eps := range asked {
		if !holdsBeyondTXT(answer[name]) && (len(answer[name]) == 0 || holdsBeyondTXT(eps)) {
			lost[name] = true
		}
	}
	return lost
}

func holdsBeyondTXT(eps []events.Endpoint) bool {
	for _, ep := range eps {
		if ep.RecordType != events.RecordTypeTXT {
			return true
		}
	}
	return false
}
