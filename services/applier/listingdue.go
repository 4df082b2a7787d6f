package applier

import "time"

// A full listing holds the applier's loop while it lists and compares
// every zone: at 2,000,000 records, minutes, while the plans queued behind
// it pass their NotAfter and are dropped and planned again. A plan's own
// read-back keeps the observed state of the names it changed current, so
// while plans keep coming a periodic listing waits for a quiet interval,
// but never more than listingDeferrals intervals: drift by hand is still
// found within (listingDeferrals+1) intervals under constant load, within
// one at rest. A listing that failed does not wait: until one completes,
// a zone's drift (or, after a start, the applier's readiness) hangs on it.
const listingDeferrals = 4

// listingRest is how many times as long as the last listing took the
// applier waits before the next periodic one. A listing that takes longer
// than the interval (a minute for 2,000,000 records) would otherwise run
// back to back, a core spent on it at rest, and a change would nearly
// always find the loop listing.
const listingRest = 3

// listingDue says whether the periodic full listing runs now: the last
// listing failed; or the applier rested after it, and no plan was handled
// in the interval that just ended (busy) or the listing waited
// listingDeferrals intervals already.
func (a *Applier) listingDue(now time.Time, busy bool) bool {
	if !a.listingComplete {
		return true
	}
	if now.Sub(a.lastListing) < (listingRest+1)*a.lastListingTook {
		return false
	}
	return !busy || now.Sub(a.lastListing) >= time.Duration(listingDeferrals+1)*a.cfg.Interval
}
