package planner

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/retry"
	"github.com/zonestream/zonestream/events/routing"
)

// run is what one Run of the planner knows, all of it rebuilt from the
// streams at start.
type run struct {
	*Planner
	js          jetstream.JetStream
	desired     map[string]desiredEntry             // by DNS name
	observed    map[string]map[string]observedEntry // provider -> DNS name -> records
	zones       map[string][]string                 // provider -> zones it manages
	dirty       map[string]string                   // names to re-plan -> causing event id
	flights     map[zoneKey]*flight                 // zones with plans out
	observedSeq uint64                              // highest observed-stream sequence read
	carried     carriedStates                       // observed states results carried (carried.go)
	// fresh are the names marked since the loop last asked, and
	// rescan says a zone may have come free: together they let the loop
	// decide whether to plan without scanning every dirty name each time.
	fresh  []string
	rescan bool
	// complete is set while the planner holds a live mark from dedup saying
	// the desired stream holds what every collector wants, until
	// completeUntil (the mark's lease). Otherwise nothing is deleted: a name
	// missing from a stream still being filled, or from one whose collectors
	// may have missed changes, is not a name nobody wants.
	complete      bool
	completeUntil time.Time
	// incomplete says why deletes are held while complete is false.
	incomplete string
	// required are the collectors a complete mark must still name
	// (required.go).
	required requiredCollectors
	// unknown are the names whose last message could not be read: planned
	// for nobody until a readable one comes (unknown.go).
	unknown unknownNames
	// holds are the deletes the mass-delete guard holds per zone,
	// approved those an operator let through, and onBus the hold ID the
	// bus shows per zone (guard.go).
	holds    map[zoneKey]*hold
	approved map[zoneKey]map[string][]events.Change
	onBus    map[zoneKey]string
	// recent are the deletes planned per zone within the guard's window
	// (recent.go).
	recent recentDeletes
	// adjusts are the providers whose appliers adjust desired records
	// before they are planned, and adjusted their answers, per name and
	// provider, until the name's desired state changes (adjust.go).
	adjusts  map[string]bool
	adjusted map[string]map[string][]events.Endpoint
	// lost are the names an adjust answer lost, waiting to be asked for
	// again (lost.go).
	lost lostNames
	// verified is each name's share of verifiedRecords (verified.go).
	verified verifiedByName
	// mismatches is each name's share of ownerMismatches (ownermismatch.go).
	mismatches map[mismatchKey][]ownerMismatch
	// routes are every provider's zone list, and where desired names go
	// (routes.go); quota the declared providers' quotas (quota.go).
	routes routes
	quota  quotas
}

type desiredEntry struct {
	// endpoints are what is wanted; resource is the one object that
	// wants them, if one (its ownership records' resource label). The rest
	// of the desired state (holders, losers) is dedup's and the portal's.
	endpoints []events.Endpoint
	resource  string
	// namespaces are those of the objects that want them: which
	// declared providers may serve the name (events/routing).
	namespaces []string
	// live: published after this run started watching. Until the desired
	// state is complete, only such names are planned: one read back from
	// the stream may be older than the cluster (an object deleted while
	// zonestream was down), and must not be written back into DNS.
	live bool
}

type observedEntry struct {
	records []events.Endpoint
	seq     uint64
}

type zoneKey struct{ provider, zone string }

// flight tracks the plans out for one zone. The zone is planned again only
// once every plan has a result and the observed state it reported has been
// read, so the next plan starts from the provider's new state.
type flight struct {
	plans     map[string]planned // by plan id
	unsent    []unsent           // the rest of the pass, sent as plans are applied (pace.go)
	awaitSeq  uint64
	notBefore time.Time
	deadline  time.Time
	failures  int
	// lastApplied is the content hash of the zone's last applied plan. The
	// same plan again means the provider does not hold what it was given
	// (it rewrites the data, or rejects it silently): re-planning at once
	// would spin, so such a zone backs off (repeats counts the times).
	lastApplied string
	repeats     int
	// publishFailures counts failed publishes in a row (backoff.go).
	publishFailures int
	// shown and queued are a dry run's last pass for the zone (its
	// changes' hash) and its plans, queued to be seen (dryrun.go).
	shown  string
	queued map[string]planned
}

// planned is a plan out for a zone.
type planned struct {
	names   []string // names it touched
	hash    string   // content hash of its changes
	seq     uint64   // its sequence in the plans stream, to withdraw it (supersede.go)
	readSeq uint64   // the observed stream's sequence read when it went out (carried.go)
}

func newRun(p *Planner) *run {
	return &run{Planner: p, desired: map[string]desiredEntry{},
		observed: map[string]map[string]observedEntry{}, zones: map[string][]string{},
		dirty: map[string]string{}, flights: map[zoneKey]*flight{}, unknown: newUnknownNames(),
		holds: map[zoneKey]*hold{}, approved: map[zoneKey]map[string][]events.Change{}, onBus: map[zoneKey]string{},
		adjusts: map[string]bool{}, adjusted: map[string]map[string][]events.Endpoint{}, lost: lostNames{},
		verified: verifiedByName{}, mismatches: map[mismatchKey][]ownerMismatch{}, routes: newRoutes(), quota: newQuotas(), carried: newCarriedStates(), recent: newRecentDeletes(p.cfg.MaxDeletesWindow),
		incomplete: "no live completeness mark from dedup yet (are dedup and every collector running, and their watches synced?)"}
}

// on reports whether subject is under the subject root.
func on(subject, root string) bool { return strings.HasPrefix(subject, root+".") }

// fold folds one message into the state, picking its handler by subject
// as dedup does: the subject, not the payload, says what a message is.
func (r *run) fold(ctx context.Context, m events.Received) {
	var err error
	switch {
	case on(m.Subject, events.SubjectDesired):
		err = r.foldDesired(m)
	case on(m.Subject, events.SubjectResults):
		err = r.foldResult(ctx, m)
	case on(m.Subject, events.SubjectZones):
		r.readObserved(m.Seq)
		err = r.foldZones(m)
	case on(m.Subject, events.SubjectHeld):
		err = r.foldHeld(m)
	case on(m.Subject, events.SubjectApprovals):
		err = r.foldApproval(m)
	default:
		// Read, whether readable or not: a zone waiting for this sequence
		// must not wait for good on one unreadable message.
		r.readObserved(m.Seq)
		err = r.foldObserved(m)
	}
	if err != nil {
		deadLetters.Inc()
		name := r.markUnknown(m)
		unknownNamesGauge.Set(float64(r.unknown.count()))
		r.log.Error("undecodable event; parked on the dead-letter subject; its name is planned for nobody until a readable state comes",
			"subject", m.Subject, "name", name, "err", err)
		if err := events.DeadLetter(ctx, r.js, Name, m, err); err != nil {
			r.log.Error("dead-letter publish failed", "err", err)
		}
	}
}

func (r *run) foldDesired(m events.Received) error {
	if events.IsMarker(m.Subject) {
		var c events.DesiredComplete
		if err := events.Decode(m, &c); err != nil {
			return err
		}
		r.completeness(c, m.Live)
		return nil
	}
	var d events.DesiredState
	if err := events.Decode(m, &d); err != nil {
		return err
	}
	if r.unknown.desired[d.DNSName] {
		delete(r.unknown.desired, d.DNSName)
		unknownNamesGauge.Set(float64(r.unknown.count()))
	}
	delete(r.adjusted, d.DNSName)
	if len(d.Endpoints) == 0 {
		delete(r.desired, d.DNSName)
		// Nothing is asked for it any more: no adjustment to wait for.
		r.lost.forget(d.DNSName)
		namesWaitingForAdjust.Set(float64(r.lost.count()))
	} else {
		e := desiredEntry{endpoints: d.Endpoints, live: m.Live, namespaces: routing.Namespaces(d.Contributors)}
		if len(d.Contributors) == 1 {
			e.resource = d.Contributors[0].Resource()
		}
		r.desired[d.DNSName] = e
	}
	r.recountVerified(d.DNSName)
	r.mark(d.DNSName, m.EventID())
	return nil
}

func (r *run) foldObserved(m events.Received) error {
	var o events.ObservedState
	if err := events.Decode(m, &o); err != nil {
		return err
	}
	switch r.carried.take(o.Provider, o.DNSName, m.Seq) {
	case olderThanCarried:
		return nil
	case copyOfCarried:
		held, ok := r.observed[o.Provider][o.DNSName]
		switch {
		case ok && reflect.DeepEqual(held.records, o.Records):
			r.observed[o.Provider][o.DNSName] = observedEntry{records: held.records, seq: m.Seq}
			return nil // planned already with what it says
		case !ok && len(o.Records) == 0:
			r.carried.setEmptied(o.Provider, o.DNSName, m.Seq, true)
			return nil
		}
	}
	r.observe(o, m.Seq, m.EventID())
	return nil
}

// observe takes in o, what a provider holds at a name, as of the observed
// stream's sequence seq, and marks the names it may change the plan of.
func (r *run) observe(o events.ObservedState, seq uint64, cause string) {
	byName := r.observed[o.Provider]
	if byName == nil {
		byName = map[string]observedEntry{}
		r.observed[o.Provider] = byName
	}
	if r.unknown.observed[o.Provider][o.DNSName] {
		delete(r.unknown.observed[o.Provider], o.DNSName)
		unknownNamesGauge.Set(float64(r.unknown.count()))
	}
	if len(o.Records) == 0 {
		delete(byName, o.DNSName)
	} else {
		byName[o.DNSName] = observedEntry{records: o.Records, seq: seq}
	}
	r.carried.setEmptied(o.Provider, o.DNSName, seq, len(o.Records) == 0)
	if len(o.Records) == 0 {
		r.quotaFreed(o.Provider) // a delete frees room
	}
	r.recountVerified(o.DNSName)
	r.mark(o.DNSName, cause)
	for _, owner := range r.registryOwners(o.DNSName) {
		r.mark(owner, cause)
	}
}

// readObserved records that the observed stream has been read to seq. A
// zone waiting for that sequence is free now, whether or not the message
// marks a name (the stored copy of a carried state marks none), so the
// loop looks at every dirty name again.
func (r *run) readObserved(seq uint64) {
	if seq <= r.observedSeq {
		return
	}
	for _, f := range r.flights {
		if f.awaitSeq > r.observedSeq && f.awaitSeq <= seq {
			r.rescan = true
			break
		}
	}
	r.observedSeq = seq
}

func (r *run) foldZones(m events.Received) error {
	var z events.ZoneList
	if err := events.Decode(m, &z); err != nil {
		return err
	}
	r.foldZoneList(z)
	return nil
}

func (r *run) foldResult(ctx context.Context, m events.Received) error {
	var res events.Result
	if err := events.Decode(m, &res); err != nil {
		return err
	}
	k := zoneKey{res.Provider, res.Zone}
	f := r.flights[k]
	if f == nil {
		return nil // a plan of an earlier run: its effect arrives as observed state
	}
	p, ok := f.plans[res.PlanID]
	if !ok {
		return nil
	}
	names := p.names
	delete(f.plans, res.PlanID)
	results.WithLabelValues(res.Provider, string(res.Status)).Inc()
	r.foldCarried(&res, m.EventID())
	r.pruneEmptied() // after: a tombstone newer than this result's read-back still counts for it
	f.awaitSeq = max(f.awaitSeq, res.ObservedSeq)
	if res.Status == events.ResultApplied {
		f.failures = 0
		if p.hash == f.lastApplied {
			f.repeats++
			unconverged.Inc()
			wait := retry.Delay(500*time.Millisecond, 5*time.Minute, min(f.repeats, 9))
			f.notBefore = time.Now().Add(wait)
			r.log.Warn("the provider does not hold what the same plan applied before; backing off",
				"zone", res.Zone, "plan", res.PlanID, "repeats", f.repeats, "retry_in", wait)
		} else {
			f.repeats = 0
		}
		f.lastApplied = p.hash
		r.send(ctx, k, f)
	} else {
		r.dropUnsent(f)
		f.failures++
		wait := retry.Delay(500*time.Millisecond, time.Minute, f.failures)
		f.notBefore = time.Now().Add(retry.Jitter(wait))
		r.log.Warn("plan not fully applied; re-planning", "plan", res.PlanID, "zone", res.Zone,
			"status", res.Status, "err", res.Error, "failed", len(res.Failed), "retry_in", wait)
	}
	for _, n := range names {
		if _, ok := r.dirty[n]; !ok {
			r.mark(n, m.EventID())
		}
	}
	r.rescan = true // the zone may be free now
	return nil
}

// completeness takes in dedup's mark. A mark read back from the stream's
// history says nothing about now: the dedup and collectors that wrote it may
// be gone, and the clusters may have changed since. Only a live mark
// allows deletes, for as long as its lease.
func (r *run) completeness(c events.DesiredComplete, live bool) {
	switch {
	case !live:
		r.required.add(c.Collectors)
		r.log.Info("completeness mark from an earlier run ignored; waiting for a live one", "complete", c.Complete,
			"collectors", len(c.Collectors))
	case c.Complete:
		if gone, ok := r.required.dropped(c); ok {
			refusedMarks.Inc()
			r.log.Error("complete mark refused: it drops a collector that was synced before and was not retired "+
				"(if its cluster is gone: zonestream cluster retire NAME)", "cluster", gone.Cluster, "collector", gone.Collector)
			r.holdDeletes("the complete mark drops collector " + gone.Cluster + "/" + gone.Collector + ", which was not retired")
			return
		}
		r.required = slices.Clone(c.Collectors)
		lease := c.Lease()
		if lease <= 0 {
			lease = time.Duration(events.LeaseFor(events.DefaultHeartbeat)) * time.Millisecond
		}
		r.completeUntil = time.Now().Add(lease)
		if !r.complete {
			r.complete = true
			deletesAllowed.Set(1)
			r.log.Info("desired state complete: deletes allowed", "clusters", c.Clusters)
			r.markAll() // what was held back
		}
	default:
		r.holdDeletes("dedup says the desired state is incomplete: " + c.Reason)
	}
}

// holdDeletes stops deleting until the next live complete mark.
func (r *run) holdDeletes(why string) {
	if r.complete {
		r.log.Warn("deletes held", "why", why)
	}
	r.complete, r.incomplete = false, why
	deletesAllowed.Set(0)
}

// expireCompleteness holds deletes once the complete mark's lease lapsed:
// dedup (or the collectors behind it) stopped saying so.
func (r *run) expireCompleteness(now time.Time) {
	if r.complete && now.After(r.completeUntil) {
		r.holdDeletes("the completeness mark was not renewed in time (dedup or a collector is gone)")
	}
}

// markAll schedules every name either side knows of.
func (r *run) markAll() {
	for n := range r.desired {
		r.mark(n, r.dirty[n])
	}
	for _, byName := range r.observed {
		for n := range byName {
			r.mark(n, r.dirty[n])
			for _, owner := range r.registryOwners(n) {
				r.mark(owner, r.dirty[owner])
			}
		}
	}
}

// busy reports whether a zone still waits for results or observations.
func (r *run) busy(k zoneKey, now time.Time) bool {
	f := r.flights[k]
	if f == nil {
		return false
	}
	return len(f.plans) > 0 || len(f.unsent) > 0 || r.observedSeq < f.awaitSeq || now.Before(f.notBefore)
}

// expireFlights gives up waiting on plans that got no result in time,
// withdrawing them first: a superseded plan is never applied.
func (r *run) expireFlights(ctx context.Context) {
	now := time.Now()
	r.expireCompleteness(now)
	for k, f := range r.flights {
		if len(f.plans) > 0 && now.After(f.deadline) {
			r.log.Warn("no result for plans; withdrawing them and re-planning the zone", "provider", k.provider, "zone", k.zone, "plans", len(f.plans))
			r.withdraw(ctx, k, f)
			for _, p := range f.plans {
				for _, n := range p.names {
					r.mark(n, r.dirty[n])
				}
			}
			f.plans = map[string]planned{}
			r.dropUnsent(f)
			f.awaitSeq = 0
			// No result is a failure too: counted for --once, and the zone
			// backs off rather than queue plans nobody takes.
			f.failures++
			f.notBefore = now.Add(retry.Jitter(retry.Delay(500*time.Millisecond, time.Minute, f.failures)))
		}
	}
}

// mark schedules name for planning. Once the replay is done, every mark
// makes the name fresh, dirty before or not: what marked it may be what
// lets it be planned now (the observation its zone waited for, a readable
// state after an unknown one), and the loop does not look again on a
// clock. During the replay a name is fresh once; markAll follows it.
func (r *run) mark(name, cause string) {
	if _, dirty := r.dirty[name]; !dirty || r.caughtUp.Load() {
		r.fresh = append(r.fresh, name)
	}
	r.dirty[name] = cause
}

// plannable reports whether some dirty name could be planned now. It
// looks at the names marked since it was last asked, and at all of them
// only when a zone may have come free, so a flood of changes to a busy
// zone costs O(1) per change, not O(dirty).
//
// While every zone is busy, as during a burst into one zone, no name can
// be planned, whatever its number: that is known from the zones alone.
// Otherwise the order of the walk does not matter (it only asks whether
// some name can go), so the dirty map is walked as it is, not sorted.
func (r *run) plannable() bool {
	now := time.Now()
	fresh, rescan := r.fresh, r.rescan
	r.fresh, r.rescan = r.fresh[:0], false
	if !r.someZoneFree(now) {
		return false
	}
	if rescan {
		for n := range r.dirty {
			if r.inFreeZone(n, now) {
				return true
			}
		}
		return false
	}
	for _, n := range fresh {
		if _, ok := r.dirty[n]; ok && r.inFreeZone(n, now) {
			return true
		}
	}
	return false
}

// someZoneFree reports whether any managed zone could take a plan now.
func (r *run) someZoneFree(now time.Time) bool {
	for provider, zones := range r.zones {
		for _, z := range zones {
			if !r.busy(zoneKey{provider, z}, now) {
				return true
			}
		}
	}
	return false
}

// inFreeZone reports whether name is in a zone that could take a plan now.
func (r *run) inFreeZone(name string, now time.Time) bool {
	for provider, zones := range r.zones {
		if z, ok := zoneOf(name, zones); ok && !r.busy(zoneKey{provider, z}, now) {
			return true
		}
	}
	return false
}

func (r *run) observedAt(provider string) func(string) []events.Endpoint {
	byName := r.observed[provider]
	return func(name string) []events.Endpoint { return byName[name].records }
}

// registryOwners lists the names whose ownership a TXT at name may hold, so
// that a change to "a-www.example.com" re-plans www.example.com.
// A TXT that is gone must re-plan them too, so this goes by the name alone.
func (r *run) registryOwners(name string) []string {
	if r.reg.noop {
		return nil
	}
	return r.reg.names.RecordNames(name)
}
