package planner

import (
	"context"
	"time"

	"github.com/zonestream/zonestream/events"
)

// publishZone splits a zone's changes into plans of at most
// --batch-change-size changes and planBudget bytes, and queues them for the
// zone's applier. A name's changes that alone exceed the budget are
// refused (they can never be sent); a plan that cannot be published backs
// the zone off (backoff.go) instead of being planned again at once.
func (r *run) publishZone(ctx context.Context, k zoneKey, zc *zoneChanges) {
	budget := r.planBudget()
	var batches [][]events.Change
	var batchNames [][]string
	var cur []events.Change
	var curNames []string
	curBytes := 0
	for i, unit := range zc.units {
		size := unitBytes(zc.names[i], unit)
		if size > budget {
			refused.WithLabelValues(refusedSize).Inc()
			r.log.Error("a name's changes alone exceed the size of a plan; refused, not retried until they change",
				"provider", k.provider, "zone", k.zone, "name", zc.names[i], "changes", len(unit), "bytes", size, "limit", budget)
			continue
		}
		if len(cur) > 0 && (len(cur)+len(unit) > r.cfg.BatchChangeSize || curBytes+size > budget) {
			batches, batchNames = append(batches, cur), append(batchNames, curNames)
			cur, curNames, curBytes = nil, nil, 0
		}
		cur = append(cur, unit...)
		curNames = append(curNames, zc.names[i])
		curBytes += size
	}
	if len(cur) > 0 {
		batches, batchNames = append(batches, cur), append(batchNames, curNames)
	}
	if r.cfg.DryRun {
		r.publishDryRun(ctx, k, batches, zc.cause)
		return
	}
	observed := r.observed[k.provider]
	for i, changes := range batches {
		p := &events.Plan{ID: planID(), Provider: k.provider, Zone: k.zone, Changes: changes,
			ObservedRevisions: map[string]uint64{},
			// By then this planner has given up on the plan (supersede.go).
			NotAfterMillis: time.Now().Add(r.cfg.PlanTimeout).UnixMilli()}
		for _, c := range changes {
			p.ObservedRevisions[c.Key().DNSName] = observed[c.Key().DNSName].seq
		}
		_, ack, err := events.Publish(ctx, r.js, events.PlanSubject(k.provider, k.zone), p, zc.cause)
		if err != nil {
			publishErrors.Inc()
			wait := r.backOff(k)
			r.log.Error("publishing plan failed; the zone backs off", "provider", k.provider, "zone", k.zone,
				"retry_in", wait, "err", err)
			for _, names := range batchNames[i:] {
				for _, n := range names {
					r.mark(n, r.dirty[n])
				}
			}
			return
		}
		f := r.flight(k)
		f.publishFailures = 0
		f.plans[p.ID] = planned{names: batchNames[i], hash: changesHash(changes), seq: ack.Sequence}
		f.deadline = time.Now().Add(r.cfg.PlanTimeout)
		plansPublished.WithLabelValues(k.provider).Inc()
		for _, c := range changes {
			changesPlanned.WithLabelValues(k.provider, c.Action()).Inc()
		}
		r.log.Info("planned", "provider", k.provider, "zone", k.zone, "plan", p.ID, "changes", len(changes))
	}
}

// flight returns the zone's flight, made on first use.
func (r *run) flight(k zoneKey) *flight {
	f := r.flights[k]
	if f == nil {
		f = &flight{plans: map[string]planned{}}
		r.flights[k] = f
	}
	return f
}

// changesHash identifies a plan by its changes alone, whatever its id.
func changesHash(changes []events.Change) string {
	h, err := events.HashOf(&events.Plan{Changes: changes})
	if err != nil {
		return ""
	}
	return h
}
