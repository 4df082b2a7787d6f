package planner

import (
	"context"
	"time"

	"github.com/zonestream/zonestream/events"
)

// A pass may need many plans for one zone (a first start on 100k names
// needs 200). The applier takes them one at a time, so publishing them all
// at once only queues them, and those still queued when their NotAfter
// passes are dropped unapplied and planned again. So a pass keeps its
// plans and lets out livePlans at a time per zone: the next goes out when
// one is applied. The pass is still one generation (supersede.go): it was
// computed and guarded (guard.go) as a whole, the zone stays busy until its
// last plan has a result, and any outcome but applied drops the rest of it
// back to dirty, planned again once the zone is free.

// livePlans is how many plans of a zone are queued for its applier at once:
// enough that the applier always finds the next one waiting.
const livePlans = 4

// unsent is a plan of the zone's pass not published yet.
type unsent struct {
	plan  *events.Plan
	names []string
	cause string
}

// send publishes the zone's unsent plans while fewer than livePlans are
// out. A plan that cannot be published backs the zone off and takes the
// rest of the pass back to dirty.
func (r *run) send(ctx context.Context, k zoneKey, f *flight) {
	for len(f.unsent) > 0 && len(f.plans) < livePlans {
		u := f.unsent[0]
		// By then this planner has given up on the plan (supersede.go).
		u.plan.NotAfterMillis = time.Now().Add(r.cfg.PlanTimeout).UnixMilli()
		_, ack, err := events.Publish(ctx, r.js, events.PlanSubject(k.provider, k.zone), u.plan, u.cause)
		if err != nil {
			publishErrors.Inc()
			wait := r.backOff(k)
			r.log.Error("publishing plan failed; the zone backs off", "provider", k.provider, "zone", k.zone,
				"retry_in", wait, "err", err)
			r.dropUnsent(f)
			return
		}
		f.unsent = f.unsent[1:]
		f.publishFailures = 0
		f.plans[u.plan.ID] = planned{names: u.names, hash: changesHash(u.plan.Changes), seq: ack.Sequence, readSeq: r.observedSeq}
		f.deadline = time.Now().Add(r.cfg.PlanTimeout)
		plansPublished.WithLabelValues(k.provider).Inc()
		for _, c := range u.plan.Changes {
			changesPlanned.WithLabelValues(k.provider, c.Action()).Inc()
		}
		r.log.Info("planned", "provider", k.provider, "zone", k.zone, "plan", u.plan.ID, "changes", len(u.plan.Changes))
	}
}

// dropUnsent gives up on the rest of the zone's pass: its names are
// planned again once the zone is free.
func (r *run) dropUnsent(f *flight) {
	for _, u := range f.unsent {
		for _, n := range u.names {
			r.mark(n, r.dirty[n])
		}
	}
	f.unsent = nil
}
