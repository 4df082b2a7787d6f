package planner

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/zonestream/zonestream/events"
)

// The mass-delete guard. The most damaging failure of a DNS controller is
// a wrong filter, namespace or kubeconfig that makes it decide everything
// it owns is unwanted: it deletes a zone, and no peer stops it. So a
// planning pass that would delete more owned record sets of a zone than
// --max-deletes, and more than --max-deletes-percent of those the zone
// holds, holds those deletes instead of planning them:
//
//   - the names with deletes are planned without their deletes (upsert-only),
//     so the zone's creates and updates go on;
//   - the held deletes are published on zs.held.<provider>.<zone>, with an
//     ID (their content hash) for an operator to approve;
//   - a later pass counts what is held with what it would delete itself,
//     and once that is within the limits (names wanted again, say) the
//     hold is released: its names are planned as they are now;
//   - an approval of the hold's ID lets through, at the next pass, exactly
//     those held deletes that are still what the planner would plan now;
//     any other delete is counted and held as usual.
//
// What counts is a delete of a record set of ours at the name planned: its
// ownership record goes with it and is not counted again. A pass is judged
// with the deletes planned in the zone within --max-deletes-window before it
// (recent.go), so that a wipe arriving in pieces is judged as one.

// hold is what the guard holds back in one zone.
type hold struct {
	id     string
	names  map[string]heldName
	owned  int // owned record sets in the zone when last counted
	recent int // deletes planned in the zone within the window then (recent.go)
}

// heldName is one name's held deletes: its changes, and how many owned
// record sets they delete.
type heldName struct {
	changes []events.Change
	deletes int
}

func (h *hold) count() int {
	n := 0
	for _, hn := range h.names {
		n += hn.deletes
	}
	return n
}

// changes lists the held changes, name by name.
func (h *hold) changes() []events.Change {
	var out []events.Change
	for _, name := range slices.Sorted(maps.Keys(h.names)) {
		out = append(out, h.names[name].changes...)
	}
	return out
}

// limits are --max-deletes and --max-deletes-percent; 0 turns either off.
type limits struct{ max, percent int }

// exceeded reports whether deleting deletes of the owned record sets of a
// zone is more than both limits allow; owned is asked only when needed.
func (l limits) exceeded(deletes int, owned func() int) bool {
	switch {
	case l.max == 0 && l.percent == 0, deletes == 0:
		return false
	case l.max > 0 && deletes <= l.max:
		return false
	case l.percent > 0 && deletes*100 <= l.percent*owned():
		return false
	}
	return true
}

// countDeletes counts the owned record sets changes delete at name: an
// ownership record (elsewhere, or a TXT of registry strings only at the
// name) goes with its record and is not counted.
func (reg *txtRegistry) countDeletes(name string, changes []events.Change) int {
	n := 0
	for _, c := range changes {
		if c.New != nil || c.Old.DNSName != name {
			continue
		}
		if c.Old.RecordType == events.RecordTypeTXT && !reg.noop && reg.userPart(c.Old) == nil {
			continue
		}
		n++
	}
	return n
}

// deletesOf are the deletes among changes.
func deletesOf(changes []events.Change) []events.Change {
	var out []events.Change
	for _, c := range changes {
		if c.New == nil {
			out = append(out, c)
		}
	}
	return out
}

// covered reports whether every delete of changes is one of approved: the
// same record set, holding the same records as when it was held.
func covered(approved, changes []events.Change) bool {
	for _, c := range deletesOf(changes) {
		if !slices.ContainsFunc(approved, func(a events.Change) bool {
			return a.New == nil && a.Key() == c.Key() && events.SameRecords(*a.Old, *c.Old)
		}) {
			return false
		}
	}
	return true
}

// ownedIn counts the record sets of ours that zone k holds: what planning
// every name of it with nothing wanted would delete.
func (r *run) ownedIn(k zoneKey) int {
	n := 0
	zones := []string{k.zone}
	for name := range r.observed[k.provider] {
		if _, ok := zoneOf(name, zones); !ok || !r.filter.Match(name) || !r.known(k.provider, name) {
			continue
		}
		in := r.nameInput(k.provider, k.zone, name)
		in.desired, in.policy = nil, PolicySync
		n += r.reg.countDeletes(name, planName(in).changes)
	}
	return n
}

// heldIn reports whether zone k holds deletes of name.
func (r *run) heldIn(k zoneKey, name string) bool {
	h := r.holds[k]
	if h == nil {
		return false
	}
	_, ok := h.names[name]
	return ok
}

// forgetHeld takes a name being planned again out of its zone's hold: the
// pass decides about it afresh. While deletes are not allowed at all, a
// pass says nothing about them, and the hold stays as it is.
func (r *run) forgetHeld(k zoneKey, name string) bool {
	h := r.holds[k]
	if h == nil || !r.effectivePolicy().allows("delete") {
		return false
	}
	delete(h.names, name)
	return true
}

// guard applies the mass-delete guard to a zone's pass, before its plans
// are published: it holds the pass' deletes, or releases what was held.
func (r *run) guard(ctx context.Context, k zoneKey, zc *zoneChanges) {
	if !r.effectivePolicy().allows("delete") {
		return
	}
	h := r.holds[k]
	approved := r.approved[k]
	now := time.Now()
	recent := r.recent.within(k, now)
	deletes := recent
	if h != nil {
		deletes += h.count()
	}
	var fresh []int // units with deletes no approval covers
	passing := 0    // what the pass deletes if nothing is held
	for i, name := range zc.names {
		if zc.deletes[i] == 0 {
			continue
		}
		if a, ok := approved[name]; ok && covered(a, zc.units[i]) {
			continue
		}
		fresh = append(fresh, i)
		deletes += zc.deletes[i]
		passing += zc.deletes[i]
	}
	for _, name := range zc.names {
		delete(approved, name) // planned now: approved or held again
	}
	if len(approved) == 0 {
		delete(r.approved, k)
	}
	if len(fresh) == 0 && h == nil {
		return // nothing to judge: what went in the window went
	}
	// The zone held what it holds now and what went in the window.
	owned := -1
	countOwned := func() int {
		if owned < 0 {
			owned = r.ownedIn(k) + recent
		}
		return owned
	}
	if !r.limits.exceeded(deletes, countOwned) {
		if h != nil {
			passing += r.release(ctx, k, h, zc)
		}
		r.recent.note(k, passing, now)
		return
	}
	if h == nil {
		h = &hold{names: map[string]heldName{}}
		r.holds[k] = h
	}
	for _, i := range fresh {
		name := zc.names[i]
		h.names[name] = heldName{changes: deletesOf(zc.units[i]), deletes: zc.deletes[i]}
		in := r.nameInput(k.provider, k.zone, name)
		in.policy = PolicyUpsertOnly
		zc.units[i], zc.deletes[i] = planName(in).changes, 0
	}
	zc.drop(func(i int) bool { return len(zc.units[i]) == 0 })
	if owned >= 0 || h.owned == 0 {
		// Counting walks the zone: done again only when the limits needed it.
		h.owned = countOwned()
	}
	h.recent = recent
	r.publishHold(ctx, k, h)
}

// release plans a zone's held names as they are now, in this pass: the
// zone's deletes are within the limits. It returns how many owned record
// sets they delete.
func (r *run) release(ctx context.Context, k zoneKey, h *hold, zc *zoneChanges) int {
	released := 0
	for _, name := range slices.Sorted(maps.Keys(h.names)) {
		if !r.known(k.provider, name) {
			continue
		}
		if _, what := r.intentAt(k.provider, k.zone, name); what == leaveAlone && len(r.desired[name].endpoints) > 0 {
			continue // wanted again, and routed elsewhere: left alone here
		}
		changes := planName(r.nameInput(k.provider, k.zone, name)).changes
		if len(changes) > 0 {
			n := r.reg.countDeletes(name, changes)
			zc.add(name, changes, n)
			released += n
		}
	}
	r.log.Info("hold released: the zone's deletes are within the limits now",
		"provider", k.provider, "zone", k.zone, "held", h.id, "names_planned", len(h.names))
	delete(r.holds, k)
	r.publishHold(ctx, k, nil)
	return released
}

// publishHold says on the bus what the zone holds, when that changed.
func (r *run) publishHold(ctx context.Context, k zoneKey, h *hold) {
	ev := &events.HeldDeletes{Provider: k.provider, Zone: k.zone, MaxDeletes: r.limits.max, MaxDeletesPercent: r.limits.percent}
	if h != nil {
		changes := h.changes()
		ev.Deletes, ev.Owned, ev.Recent = h.count(), h.owned, h.recent
		ev.WindowMillis = r.cfg.MaxDeletesWindow.Milliseconds()
		h.id = events.HeldID(k.provider, k.zone, changes)
		ev.ID = h.id
		ev.Changes = changes[:r.fitting(changes)]
		ev.ChangesOmitted = len(changes) - len(ev.Changes)
	}
	heldPlans.Set(float64(len(r.holds)))
	if r.onBus[k] == ev.ID {
		return
	}
	if h != nil {
		holds.WithLabelValues(k.provider).Inc()
		r.log.Warn("mass-delete guard: deletes held; `zonestream plans` lists them, `zonestream plans approve ID` lets them through",
			"provider", k.provider, "zone", k.zone, "held", h.id, "deletes", ev.Deletes, "owned", ev.Owned,
			"deleted_in_window", ev.Recent, "window", r.cfg.MaxDeletesWindow.String(),
			"max_deletes", r.limits.max, "max_deletes_percent", r.limits.percent)
	}
	if r.js == nil {
		return
	}
	if _, _, err := events.Publish(ctx, r.js, events.HeldSubject(k.provider, k.zone), ev, ""); err != nil {
		// The hold stands whether or not it is seen; the next pass of the
		// zone says it again.
		r.log.Error("publishing held deletes failed", "provider", k.provider, "zone", k.zone, "err", err)
		return
	}
	if ev.ID == "" {
		delete(r.onBus, k)
	} else {
		r.onBus[k] = ev.ID
	}
}

// fitting is how many of changes fit in a message of held deletes: a
// zone's wipe may be larger than a NATS message, and the hold must be
// seen whatever its size (its ID covers every change).
func (r *run) fitting(changes []events.Change) int {
	budget := r.planBudget()
	for i, c := range changes {
		if budget -= unitBytes(c.Key().DNSName, []events.Change{c}); budget < 0 {
			return i
		}
	}
	return len(changes)
}

// foldHeld takes in what the bus says a zone holds: at start, what an
// earlier run left there, which is cleared once this run has planned
// everything and holds nothing in the zone (clearStaleHolds).
func (r *run) foldHeld(m events.Received) error {
	var h events.HeldDeletes
	if err := events.Decode(m, &h); err != nil {
		return err
	}
	k := zoneKey{h.Provider, h.Zone}
	if h.IsTombstone() {
		delete(r.onBus, k)
	} else {
		r.onBus[k] = h.ID
	}
	return nil
}

// foldApproval takes in an operator's approval. Only one published while
// this run watches counts (an old one may be for deletes long since
// replanned), and only for the hold the zone has now.
func (r *run) foldApproval(m events.Received) error {
	var a events.Approval
	if err := events.Decode(m, &a); err != nil {
		return err
	}
	k := zoneKey{a.Provider, a.Zone}
	h := r.holds[k]
	switch {
	case !m.Live:
		return nil
	case h == nil || h.id != a.HeldID:
		approvals.WithLabelValues("ignored").Inc()
		current := ""
		if h != nil {
			current = h.id
		}
		r.log.Warn("approval ignored: the zone holds no such deletes now", "provider", a.Provider, "zone", a.Zone,
			"approved", a.HeldID, "held", current, "by", a.By)
		return nil
	}
	approvals.WithLabelValues("accepted").Inc()
	r.log.Info("held deletes approved: those still current are planned", "provider", a.Provider, "zone", a.Zone,
		"held", a.HeldID, "names", len(h.names), "by", a.By)
	byName := map[string][]events.Change{}
	for name, hn := range h.names {
		byName[name] = hn.changes
		r.mark(name, m.EventID())
	}
	r.approved[k] = byName
	return nil
}

// clearStaleHolds takes back what an earlier run said a zone held, once
// everything has been planned with deletes allowed and this run holds
// nothing there.
func (r *run) clearStaleHolds(ctx context.Context) {
	if len(r.dirty) > 0 || !r.effectivePolicy().allows("delete") {
		return
	}
	for _, k := range slices.SortedFunc(maps.Keys(r.onBus), compareZoneKeys) {
		if r.holds[k] == nil {
			r.publishHold(ctx, k, nil)
		}
	}
}

// The guard's defaults are at least as safe as octoDNS' (which refuses a
// plan that updates or deletes more than 30% of a zone of 10 records or
// more): above 10 owned record sets the share decides, at 30%; below, more
// than 3 deletes are held, where octoDNS holds none. And they are counted
// over a minute, not a pass (recent.go).
const (
	DefaultMaxDeletes        = 3
	DefaultMaxDeletesPercent = 30
	DefaultMaxDeletesWindow  = time.Minute
)
