package planner

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/zonestream/zonestream/events"
)

// zoneChanges gathers the changes for one zone, name by name: a name's
// changes (records and their ownership) always travel in one plan.
type zoneChanges struct {
	units [][]events.Change
	names []string
	cause string
}

// plan plans every dirty name whose zone is free, and publishes the plans.
func (s *state) plan(ctx context.Context) {
	start := time.Now()
	s.fresh = s.fresh[:0] // every dirty name is looked at here
	byZone := map[zoneKey]*zoneChanges{}
	providers := sortedKeys(s.zones)
	for _, name := range sortedKeys(s.dirty) {
		if !s.complete && !s.desired[name].live {
			// History, not news: planned once the desired state is
			// complete (completeness marks every name again).
			delete(s.dirty, name)
			continue
		}
		done := true
		for _, provider := range providers {
			zone, ok := zoneOf(name, s.zones[provider])
			if !ok || !s.filter.match(name) {
				continue
			}
			k := zoneKey{provider, zone}
			if s.busy(k, start) {
				done = false
				continue
			}
			if !s.known(provider, name) {
				s.log.Debug("state unknown: not planned", "provider", provider, "name", name)
				continue
			}
			np := planName(s.nameInput(provider, zone, name))
			for _, c := range np.conflicts {
				conflicts.Inc()
				s.log.Debug("left alone", "provider", provider, "reason", c)
			}
			for _, r := range np.refused {
				refused.WithLabelValues(r.reason).Inc()
				s.log.Warn("record refused: nothing at it is touched", "provider", provider, "reason", r.reason, "detail", r.detail)
			}
			if len(np.changes) == 0 {
				continue
			}
			zc := byZone[k]
			if zc == nil {
				zc = &zoneChanges{cause: s.dirty[name]}
				byZone[k] = zc
			}
			zc.units = append(zc.units, np.changes)
			zc.names = append(zc.names, name)
		}
		if done {
			delete(s.dirty, name)
		}
	}
	keys := make([]zoneKey, 0, len(byZone))
	for k := range byZone {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b zoneKey) int {
		return cmp.Or(cmp.Compare(a.provider, b.provider), cmp.Compare(a.zone, b.zone))
	})
	for _, k := range keys {
		s.publishZone(ctx, k, byZone[k])
	}
	planSeconds.Observe(time.Since(start).Seconds())
}

func (s *state) nameInput(provider, zone, name string) nameInput {
	d := s.desired[name].state
	resource := ""
	if len(d.Contributors) == 1 {
		resource = d.Contributors[0].Resource()
	}
	return nameInput{name: name, zone: zone, desired: d.Endpoints, resource: resource,
		observed: s.observedAt(provider), policy: s.effectivePolicy(), reg: s.reg}
}

// effectivePolicy is the configured policy, without deletes until the
// desired stream is complete.
func (s *state) effectivePolicy() Policy {
	if !s.complete && s.policy == PolicySync {
		return PolicyUpsertOnly
	}
	return s.policy
}

// publishZone splits a zone's changes into plans of at most
// --batch-change-size changes and planBudget bytes, and queues them for the
// zone's applier. A name's changes that alone exceed the budget are
// refused (they can never be sent); a plan that cannot be published backs
// the zone off (backoff.go) instead of being planned again at once.
func (s *state) publishZone(ctx context.Context, k zoneKey, zc *zoneChanges) {
	budget := s.planBudget()
	var batches [][]events.Change
	var batchNames [][]string
	var cur []events.Change
	var curNames []string
	curBytes := 0
	for i, unit := range zc.units {
		size := unitBytes(zc.names[i], unit)
		if size > budget {
			refused.WithLabelValues(refusedSize).Inc()
			s.log.Error("a name's changes alone exceed the size of a plan; refused, not retried until they change",
				"provider", k.provider, "zone", k.zone, "name", zc.names[i], "changes", len(unit), "bytes", size, "limit", budget)
			continue
		}
		if len(cur) > 0 && (len(cur)+len(unit) > s.cfg.BatchChangeSize || curBytes+size > budget) {
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
	observed := s.observed[k.provider]
	for i, changes := range batches {
		p := &events.Plan{ID: planID(), Provider: k.provider, Zone: k.zone, Changes: changes,
			ObservedRevisions: map[string]uint64{},
			// By then this planner has given up on the plan (supersede.go).
			NotAfterMillis: time.Now().Add(s.cfg.PlanTimeout).UnixMilli()}
		for _, c := range changes {
			p.ObservedRevisions[c.Key().DNSName] = observed[c.Key().DNSName].seq
		}
		_, ack, err := events.Publish(ctx, s.js, events.PlanSubject(k.provider, k.zone), p, zc.cause)
		if err != nil {
			publishErrors.Inc()
			wait := s.backOff(k)
			s.log.Error("publishing plan failed; the zone backs off", "provider", k.provider, "zone", k.zone,
				"retry_in", wait, "err", err)
			for _, names := range batchNames[i:] {
				for _, n := range names {
					s.mark(n, s.dirty[n])
				}
			}
			return
		}
		f := s.flight(k)
		f.publishFailures = 0
		f.plans[p.ID] = planned{names: batchNames[i], hash: changesHash(changes), seq: ack.Sequence}
		f.deadline = time.Now().Add(s.cfg.PlanTimeout)
		plansPublished.WithLabelValues(k.provider).Inc()
		for _, c := range changes {
			changesPlanned.WithLabelValues(k.provider, c.Action()).Inc()
		}
		s.log.Info("planned", "provider", k.provider, "zone", k.zone, "plan", p.ID, "changes", len(changes))
	}
}

// flight returns the zone's flight, made on first use.
func (s *state) flight(k zoneKey) *flight {
	f := s.flights[k]
	if f == nil {
		f = &flight{plans: map[string]planned{}}
		s.flights[k] = f
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
