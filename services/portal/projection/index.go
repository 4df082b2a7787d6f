package projection

import (
	"time"

	"github.com/zonestream/zonestream/events"
)

// index keeps what the periodic look and the page's counts need, so that
// neither walks every view: at rest nearly every view is in sync, and a
// walk of 20,000 of them every 10 s was the portal's largest cost.
type index struct {
	counts map[Status]int
	// pending are the views whose status may change with time alone
	// (--portal-grace running out).
	pending map[*View]struct{}
	// emptied are the views of names nobody wants any more and no
	// provider holds: dropped once their tombstone expired.
	emptied map[*View]struct{}
}

func newIndex() index {
	return index{counts: map[Status]int{}, pending: map[*View]struct{}{}, emptied: map[*View]struct{}{}}
}

// add counts v as it is now.
func (x index) add(v *View) {
	x.counts[v.Status]++
	if v.Status == Pending {
		x.pending[v] = struct{}{}
	}
	if v.emptied() {
		x.emptied[v] = struct{}{}
	}
}

// remove takes v out, as add counted it. A view not yet evaluated (no
// status) was never added.
func (x index) remove(v *View) {
	if v.Status == "" {
		return
	}
	if x.counts[v.Status]--; x.counts[v.Status] == 0 {
		delete(x.counts, v.Status)
	}
	delete(x.pending, v)
	delete(x.emptied, v)
}

// emptied says whether nothing is wanted at v's name any more and no
// provider holds anything there.
func (v *View) emptied() bool {
	d := v.Desired
	return d != nil && len(d.sets) == 0 && len(v.held()) == 0
}

// expired says whether v is emptied and its tombstone is gone from the
// stream, so that nothing about the name is left to show.
func (v *View) expired(now time.Time) bool {
	return v.emptied() && now.Sub(v.Desired.Time) > events.TombstoneTTL
}
