package planner

import (
	"fmt"

	"github.com/zonestream/zonestream/stage"
)

// With --once the planner makes one pass, as ExternalDNS' --once makes one
// loop: Run returns stage.ErrFinished once the desired state is complete,
// a provider has told its zones, no name waits to be planned and no plan
// waits for its result. It returns it alone when every plan was applied
// (or, in a dry run, published), and with what was not otherwise: plans
// not applied, or deletes held by the guard. A name that waits for a
// zone's back-off after a failure ends the pass too: it has failed once.

// passDone says whether the one pass is over, and how it ended.
func (r *run) passDone() (bool, error) {
	if !r.complete || len(r.zones) == 0 {
		return false, nil
	}
	for _, f := range r.flights {
		if len(f.plans) > 0 || len(f.unsent) > 0 {
			return false, nil
		}
	}
	failed, held := 0, len(r.holds)
	for _, f := range r.flights {
		if f.failures > 0 || f.repeats > 0 {
			failed++
		}
	}
	if len(r.dirty) > 0 && failed == 0 && held == 0 {
		return false, nil
	}
	if failed == 0 && held == 0 {
		return true, stage.ErrFinished
	}
	return true, fmt.Errorf("%w, not converged: %d zone(s) with plans not applied, %d zone(s) with deletes held", stage.ErrFinished, failed, held)
}
