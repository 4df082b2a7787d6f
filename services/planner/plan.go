package planner

import (
	"cmp"
	"context"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/zonestream/zonestream/events"
)

// zoneChanges gathers the changes for one zone, name by name: a name's
// changes (records and their ownership) always travel in one plan.
type zoneChanges struct {
	units   [][]events.Change
	names   []string
	deletes []int // owned record sets each unit deletes (guard.go)
	cause   string
}

// add appends a name's changes.
func (zc *zoneChanges) add(name string, changes []events.Change, deletes int) {
	zc.units, zc.names, zc.deletes = append(zc.units, changes), append(zc.names, name), append(zc.deletes, deletes)
}

// drop removes the units gone picks.
func (zc *zoneChanges) drop(gone func(i int) bool) {
	kept := 0
	for i := range zc.units {
		if gone(i) {
			continue
		}
		zc.units[kept], zc.names[kept], zc.deletes[kept] = zc.units[i], zc.names[i], zc.deletes[i]
		kept++
	}
	zc.units, zc.names, zc.deletes = zc.units[:kept], zc.names[:kept], zc.deletes[:kept]
}

func compareZoneKeys(a, b zoneKey) int {
	return cmp.Or(cmp.Compare(a.provider, b.provider), cmp.Compare(a.zone, b.zone))
}

// plan plans every dirty name whose zone is free, and publishes the plans.
func (r *run) plan(ctx context.Context) {
	start := time.Now()
	// A lapsed lease is seen here too, not only when the alarm rings: no
	// delete may outlive it by a timer's lag.
	r.expireCompleteness(start)
	r.fresh = r.fresh[:0] // every dirty name is looked at here
	byZone := map[zoneKey]*zoneChanges{}
	providers := slices.Sorted(maps.Keys(r.zones))
	r.adjustDirty(ctx, start)
	debug := r.log.Enabled(ctx, slog.LevelDebug)
	quota := quotaPass{}
	for _, name := range slices.Sorted(maps.Keys(r.dirty)) {
		route, routed := r.decide(name)
		r.countRoute(name, route, routed)
		if !r.complete && !r.desired[name].live {
			// History, not news: planned once the desired state is
			// complete (completeness marks every name again).
			delete(r.dirty, name)
			if debug {
				r.log.Debug("desired state not yet complete: not planned until it is", "name", name)
			}
			continue
		}
		done := true
		for _, provider := range providers {
			zone, ok := zoneOf(name, r.zones[provider])
			if !ok || (r.scope(provider) == nil && !r.filter.Match(name)) {
				continue // the domain filter is the flag providers' (routes.go)
			}
			wanted := len(r.desired[name].endpoints) > 0
			routedZone, what := r.intentOf(provider, zone, route, routed)
			if what == planAsToday {
				zone = routedZone // the zone routing found: the longest, as zoneOf's
			}
			if what != planAsToday || !wanted {
				r.unquota(provider, name)
			}
			if wanted && what == leaveAlone {
				// Deletes held there before it was wanted elsewhere are
				// no longer planned: the guard looks at the zone again.
				if k := (zoneKey{provider, zone}); r.heldIn(k, name) {
					switch {
					case r.busy(k, start):
						done = false
					case r.forgetHeld(k, name) && byZone[k] == nil:
						byZone[k] = &zoneChanges{cause: r.dirty[name]}
					}
				}
				if debug {
					r.log.Debug("routed elsewhere or nowhere: left alone at this provider", "provider", provider, "name", name)
				}
				continue
			}
			k := zoneKey{provider, zone}
			if r.busy(k, start) {
				done = false
				if debug {
					r.log.Debug("zone busy (a plan awaits its result or observation, or the zone is paced): planned later", "provider", provider, "zone", zone, "name", name)
				}
				continue
			}
			if !r.known(provider, name) {
				r.log.Debug("state unknown: not planned", "provider", provider, "name", name)
				continue
			}
			if _, ok := r.desiredFor(provider, name); !ok {
				done = false // its provider has not adjusted it yet
				if debug {
					r.log.Debug("awaiting the provider's adjustment: planned later", "provider", provider, "name", name)
				}
				continue
			}
			if wanted && what == planAsToday && !r.admit(quota, provider, zone, name) {
				continue // over the provider's quota (quota.go)
			}
			if r.forgetHeld(k, name) && byZone[k] == nil {
				byZone[k] = &zoneChanges{cause: r.dirty[name]} // the guard looks at the zone again
			}
			np := planName(r.nameInput(provider, zone, name))
			r.recountMismatches(provider, name, np.mismatches)
			for _, c := range np.conflicts {
				conflicts.Inc()
				r.log.Debug("left alone", "provider", provider, "name", name, "reason", c)
			}
			for _, rf := range np.refused {
				refused.WithLabelValues(rf.reason).Inc()
				r.log.Warn("record refused: nothing at it is touched", "provider", provider, "reason", rf.reason, "detail", rf.detail)
			}
			if len(np.changes) == 0 {
				if debug {
					r.log.Debug("in sync: nothing to change", "provider", provider, "zone", zone, "name", name)
				}
				continue
			}
			if debug {
				r.log.Debug("planned", "provider", provider, "zone", zone, "name", name, "changes", changeStrings(np.changes))
			}
			zc := byZone[k]
			if zc == nil {
				zc = &zoneChanges{cause: r.dirty[name]}
				byZone[k] = zc
			}
			zc.add(name, np.changes, r.reg.countDeletes(name, np.changes))
		}
		if done {
			delete(r.dirty, name)
		}
	}
	for _, k := range slices.SortedFunc(maps.Keys(byZone), compareZoneKeys) {
		r.guard(ctx, k, byZone[k])
		r.publishZone(ctx, k, byZone[k])
	}
	r.clearStaleHolds(ctx)
	planSeconds.Observe(time.Since(start).Seconds())
}

func (r *run) nameInput(provider, zone, name string) nameInput {
	desired, _ := r.desiredFor(provider, name)
	return nameInput{name: name, zone: zone, desired: desired, resource: r.desired[name].resource,
		observed: r.observedAt(provider), policy: r.effectivePolicy(), reg: r.reg}
}

// nameInput is everything planName needs to know about one DNS name.
type nameInput struct {
	name     string
	zone     string
	desired  []events.Endpoint // empty: nothing wanted
	resource string            // the one object that wants the name, if one
	observed func(name string) []events.Endpoint
	policy   Policy
	reg      *txtRegistry // ownership rules and managed record types
}

// namePlan is what planName decided.
type namePlan struct {
	changes   []events.Change
	conflicts []string // why something wanted was left alone
	// mismatches are the wanted records left alone because another
	// owner's (or no) ownership record covers them (ownermismatch.go).
	mismatches []ownerMismatch
	refused    []refusal // records that cannot be written safely (refuse.go)
}

// planNoop is --registry=noop, as ExternalDNS' noop registry: no ownership
// records are read or written, and every record of a managed type at a
// name in scope is ours to create, update and (with --policy=sync) delete.
func planNoop(in nameInput, keys []rrKey, have, want map[rrKey]*events.Endpoint) namePlan {
	var out namePlan
	for _, k := range keys {
		if k.recordType == events.RecordTypeTXT {
			continue // without ownership records, a TXT is never known to be ours
		}
		w, h := want[k], have[k]
		switch {
		case w != nil && h == nil:
			out.changes = append(out.changes, events.Change{New: w})
		case w != nil && !events.SameRecords(*w, *h) && in.policy.allows("update"):
			out.changes = append(out.changes, events.Change{Old: h, New: w})
		case w == nil && h != nil && in.policy.allows("delete"):
			out.changes = append(out.changes, events.Change{Old: h})
		}
	}
	return out
}

// rrKey is one RRset at a name: its type and set identifier. Two
// routing-policy RRsets of one type ("us" and "eu") are two RRsets,
// planned and owned apart.
type rrKey struct{ recordType, setID string }

func rrsetsByKey(eps []events.Endpoint) map[rrKey]*events.Endpoint {
	m := make(map[rrKey]*events.Endpoint, len(eps))
	for i := range eps {
		ep := eps[i]
		ep.Labels = nil
		m[rrKey{ep.RecordType, ep.SetIdentifier}] = &ep
	}
	return m
}

// managedKeys are the RRsets a name is planned by, in a fixed order (type,
// then set identifier): every managed type for every set identifier seen
// at the name, wanted or held, or at one of its ownership records (an
// orphaned ownership record must be found to be cleaned up), and the
// empty set identifier always.
func managedKeys(in nameInput, have, want map[rrKey]*events.Endpoint) []rrKey {
	sets := []string{""}
	add := func(m map[rrKey]*events.Endpoint, only string) {
		for k := range m {
			if (only == "" || k.recordType == only) && !slices.Contains(sets, k.setID) {
				sets = append(sets, k.setID)
			}
		}
	}
	add(have, "")
	add(want, "")
	if !in.reg.noop {
		for _, t := range in.reg.managed {
			if n := in.reg.names.TXTName(in.name, t); n != in.name {
				add(rrsetsByKey(in.observed(n)), events.RecordTypeTXT)
			}
		}
	}
	slices.Sort(sets)
	var keys []rrKey
	for _, t := range in.reg.managed {
		for _, set := range sets {
			keys = append(keys, rrKey{t, set})
		}
	}
	return keys
}

// changeStrings is changes for a debug line ("create www.example.org A").
func changeStrings(changes []events.Change) []string {
	out := make([]string, len(changes))
	for i, c := range changes {
		out[i] = c.String()
	}
	return out
}
