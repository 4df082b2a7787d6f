package planner

import (
	"context"

	"github.com/zonestream/zonestream/events"
)

// publishZone splits a zone's changes into plans of at most
// --batch-change-size changes and planBudget bytes, and sends them to the
// zone's applier a few at a time (pace.go). A name's changes that alone
// exceed the budget are refused (they can never be sent).
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
	f := r.flight(k)
	for i, changes := range batches {
		p := &events.Plan{ID: planID(), Provider: k.provider, Zone: k.zone, Changes: changes,
			ObservedRevisions: map[string]uint64{}}
		for _, c := range changes {
			p.ObservedRevisions[c.Key().DNSName] = observed[c.Key().DNSName].seq
		}
		f.unsent = append(f.unsent, unsent{plan: p, names: batchNames[i], cause: zc.cause})
	}
	r.send(ctx, k, f)
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
