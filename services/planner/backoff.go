package planner

import (
	"time"

	"github.com/zonestream/zonestream/events/retry"
)

// A plan that cannot be published (the bus down, the stream gone, the plan
// too large), or whose desired records the provider could not adjust
// (adjust.go), must not be planned again at once: the zone backs off,
// exponentially with jitter, and other zones go on.

const (
	publishBackoffBase = 500 * time.Millisecond
	publishBackoffMax  = time.Minute
)

// backOff holds the zone back after a failed publish or adjustment and
// returns for how long.
func (r *run) backOff(k zoneKey) time.Duration {
	f := r.flight(k)
	f.publishFailures++
	wait := retry.Jitter(retry.Delay(publishBackoffBase, publishBackoffMax, f.publishFailures-1))
	f.notBefore = time.Now().Add(wait)
	return wait
}
