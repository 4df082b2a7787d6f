package planner

import (
	"context"
	"slices"

	"github.com/zonestream/zonestream/events"
)

// A dry run (--dry-run) plans as always and publishes its plans marked
// DryRun, so that zonestream plans and the portal show them, but no
// applier applies them and no result is awaited: the zone is free again at
// once. The same pass is not published twice; a new one replaces the
// zone's earlier plans in the queue. Every change is logged.

// publishDryRun publishes one pass of a zone's changes as dry-run plans.
func (r *run) publishDryRun(ctx context.Context, k zoneKey, batches [][]events.Change, cause string) {
	f := r.flight(k)
	hash := changesHash(slices.Concat(batches...))
	if hash == f.shown {
		return
	}
	r.withdraw(ctx, k, &flight{plans: f.queued})
	f.queued, f.shown = map[string]planned{}, hash
	for _, changes := range batches {
		p := &events.Plan{ID: planID(), Provider: k.provider, Zone: k.zone, Changes: changes, DryRun: true}
		_, ack, err := events.Publish(ctx, r.js, events.PlanSubject(k.provider, k.zone), p, cause)
		if err != nil {
			publishErrors.Inc()
			r.log.Error("publishing a dry-run plan failed", "provider", k.provider, "zone", k.zone, "err", err)
			f.shown = "" // shown again at the next pass
			continue
		}
		f.queued[p.ID] = planned{seq: ack.Sequence}
		plansPublished.WithLabelValues(k.provider).Inc()
		for _, c := range changes {
			r.log.Info("dry run: would apply", "provider", k.provider, "zone", k.zone, "plan", p.ID,
				"action", c.Action(), "name", c.Key().DNSName, "type", c.Key().RecordType, "change", c.String())
		}
	}
}
