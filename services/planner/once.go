package planner

import (
	"fmt"
	"time"

	"github.com/zonestream/zonestream/stage"
)

// With --once the planner makes one pass, as ExternalDNS' --once makes one
// loop: Run returns stage.ErrFinished once the desired state is complete,
// a provider has told its zones, no name waits to be planned and no plan
// waits for its result. It returns it alone when every plan was applied
// (or, in a dry run, published), and with what was not otherwise: plans
// not applied, deletes held, names not adjusted. A zone that failed once
// ends the pass: a plan that failed or got no result in time, a plan or an
// adjust request that could not be sent, an adjust answer that lost a
// name; the pass does not wait for its back-off. Whatever else hangs (an
// API server that never answers, so that the desired state is never
// complete), --once-timeout ends the pass with what it still waited for.

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
	failed, held, lost := 0, len(r.holds), r.lost.count()
	for _, f := range r.flights {
		if f.failures > 0 || f.repeats > 0 || f.publishFailures > 0 {
			failed++
		}
	}
	if len(r.dirty) > 0 && failed == 0 && held == 0 && lost == 0 {
		return false, nil
	}
	if failed == 0 && held == 0 && lost == 0 {
		return true, stage.ErrFinished
	}
	return true, fmt.Errorf("%w, not converged: %d zone(s) with plans not applied, %d zone(s) with deletes held, %d name(s) not adjusted by their provider",
		stage.ErrFinished, failed, held, lost)
}

// passTimedOut ends a pass that outlived --once-timeout.
func (r *run) passTimedOut(timeout time.Duration) error {
	return fmt.Errorf("%w, not converged: the pass did not end within --once-timeout=%s: %s", stage.ErrFinished, timeout, r.waitingFor())
}

// waitingFor says in one line what the pass still waits for.
func (r *run) waitingFor() string {
	if len(r.zones) == 0 {
		return "no applier has said which zones its provider holds (is the applier running, and can it list its provider?)"
	}
	if !r.complete {
		return "the desired state is not complete: " + r.incomplete
	}
	plans := 0
	for _, f := range r.flights {
		plans += len(f.plans) + len(f.unsent)
	}
	if plans > 0 {
		return fmt.Sprintf("%d plan(s) wait for their result (is the applier running?)", plans)
	}
	return fmt.Sprintf("%d name(s) wait to be planned", len(r.dirty))
}
