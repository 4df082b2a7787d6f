package planner

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/retry"
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
	// adjusts are the providers whose appliers adjust desired records
	// before they are planned, and adjusted their answers, per name and
	// provider, until the name's desired state changes (adjust.go).
	adjusts  map[string]bool
	adjusted map[string]map[string][]events.Endpoint
	// verified is each name's share of verifiedRecords (verified.go).
	verified verifiedByName
}

type desiredEntry struct {
	state events.DesiredState
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
	names []string // names it touched
	hash  string   // content hash of its changes
	seq   uint64   // its sequence in the plans stream, to withdraw it (supersede.go)
}

func newRun(p *Planner) *run {
	return &run{Planner: p, desired: map[string]desiredEntry{},
		observed: map[string]map[string]observedEntry{}, zones: map[string][]string{},
		dirty: map[string]string{}, flights: map[zoneKey]*flight{}, unknown: newUnknownNames(),
		holds: map[zoneKey]*hold{}, approved: map[zoneKey]map[string][]events.Change{}, onBus: map[zoneKey]string{},
		adjusts: map[string]bool{}, adjusted: map[string]map[string][]events.Endpoint{},
		verified: verifiedByName{}}
}

// on reports whether subject is under the subject root.
func on(subject, root string) bool { return strings.HasPrefix(subject, root+".") }

// fold folds one message into the state, picking its handler by subject
// as dedup does: the subject, not the payload, says what a message is.
func (s *run) fold(ctx context.Context, m events.Received) {
	var err error
	switch {
	case on(m.Subject, events.SubjectDesired):
		err = s.foldDesired(m)
	case on(m.Subject, events.SubjectResults):
		err = s.foldResult(m)
	case on(m.Subject, events.SubjectZones):
		err = s.foldZones(m)
	case on(m.Subject, events.SubjectHeld):
		err = s.foldHeld(m)
	case on(m.Subject, events.SubjectApprovals):
		err = s.foldApproval(m)
	default:
		err = s.foldObserved(m)
	}
	if err != nil {
		deadLetters.Inc()
		name := s.markUnknown(m)
		unknownNamesGauge.Set(float64(s.unknown.count()))
		s.log.Error("undecodable event; parked on the dead-letter subject; its name is planned for nobody until a readable state comes",
			"subject", m.Subject, "name", name, "err", err)
		if err := events.DeadLetter(ctx, s.js, "planner", m, err); err != nil {
			s.log.Error("dead-letter publish failed", "err", err)
		}
	}
}

func (s *run) foldDesired(m events.Received) error {
	if events.IsMarker(m.Subject) {
		var c events.DesiredComplete
		if err := events.Decode(m, &c); err != nil {
			return err
		}
		s.completeness(c, m.Live)
		return nil
	}
	var d events.DesiredState
	if err := events.Decode(m, &d); err != nil {
		return err
	}
	if s.unknown.desired[d.DNSName] {
		delete(s.unknown.desired, d.DNSName)
		unknownNamesGauge.Set(float64(s.unknown.count()))
	}
	delete(s.adjusted, d.DNSName)
	if len(d.Endpoints) == 0 {
		delete(s.desired, d.DNSName)
	} else {
		s.desired[d.DNSName] = desiredEntry{state: d, live: m.Live}
	}
	s.recountVerified(d.DNSName)
	s.mark(d.DNSName, m.EventID())
	return nil
}

func (s *run) foldObserved(m events.Received) error {
	var o events.ObservedState
	if err := events.Decode(m, &o); err != nil {
		return err
	}
	byName := s.observed[o.Provider]
	if byName == nil {
		byName = map[string]observedEntry{}
		s.observed[o.Provider] = byName
	}
	if s.unknown.observed[o.Provider][o.DNSName] {
		delete(s.unknown.observed[o.Provider], o.DNSName)
		unknownNamesGauge.Set(float64(s.unknown.count()))
	}
	if len(o.Records) == 0 {
		delete(byName, o.DNSName)
	} else {
		byName[o.DNSName] = observedEntry{records: o.Records, seq: m.Seq}
	}
	s.recountVerified(o.DNSName)
	s.observedSeq = max(s.observedSeq, m.Seq)
	s.mark(o.DNSName, m.EventID())
	for _, owner := range s.registryOwners(o.DNSName) {
		s.mark(owner, m.EventID())
	}
	return nil
}

func (s *run) foldZones(m events.Received) error {
	var z events.ZoneList
	if err := events.Decode(m, &z); err != nil {
		return err
	}
	s.observedSeq = max(s.observedSeq, m.Seq)
	if !slices.Equal(s.zones[z.Provider], z.Zones) || s.adjusts[z.Provider] != z.Adjusts {
		s.zones[z.Provider] = z.Zones
		s.adjusts[z.Provider] = z.Adjusts
		s.markAll()
	}
	return nil
}

func (s *run) foldResult(m events.Received) error {
	var r events.Result
	if err := events.Decode(m, &r); err != nil {
		return err
	}
	f := s.flights[zoneKey{r.Provider, r.Zone}]
	if f == nil {
		return nil // a plan of an earlier run: its effect arrives as observed state
	}
	p, ok := f.plans[r.PlanID]
	if !ok {
		return nil
	}
	names := p.names
	delete(f.plans, r.PlanID)
	results.WithLabelValues(r.Provider, string(r.Status)).Inc()
	f.awaitSeq = max(f.awaitSeq, r.ObservedSeq)
	if r.Status == events.ResultApplied {
		f.failures = 0
		if p.hash == f.lastApplied {
			f.repeats++
			unconverged.Inc()
			wait := retry.Delay(500*time.Millisecond, 5*time.Minute, min(f.repeats, 9))
			f.notBefore = time.Now().Add(wait)
			s.log.Warn("the provider does not hold what the same plan applied before; backing off",
				"zone", r.Zone, "plan", r.PlanID, "repeats", f.repeats, "retry_in", wait)
		} else {
			f.repeats = 0
		}
		f.lastApplied = p.hash
	} else {
		f.failures++
		wait := retry.Delay(500*time.Millisecond, time.Minute, f.failures)
		f.notBefore = time.Now().Add(retry.Jitter(wait))
		s.log.Warn("plan not fully applied; re-planning", "plan", r.PlanID, "zone", r.Zone,
			"status", r.Status, "err", r.Error, "failed", len(r.Failed), "retry_in", wait)
	}
	for _, n := range names {
		if _, ok := s.dirty[n]; !ok {
			s.mark(n, m.EventID())
		}
	}
	s.rescan = true // the zone may be free now
	return nil
}

// completeness takes in dedup's mark. A mark read back from the stream's
// history says nothing about now: the dedup and collectors that wrote it may
// be gone, and the clusters may have changed since. Only a live mark
// allows deletes, for as long as its lease.
func (s *run) completeness(c events.DesiredComplete, live bool) {
	switch {
	case !live:
		s.required.add(c.Collectors)
		s.log.Info("completeness mark from an earlier run ignored; waiting for a live one", "complete", c.Complete,
			"collectors", len(c.Collectors))
	case c.Complete:
		if gone, ok := s.required.dropped(c); ok {
			refusedMarks.Inc()
			s.log.Error("complete mark refused: it drops a collector that was synced before and was not retired "+
				"(if its cluster is gone: zonestream cluster retire NAME)", "cluster", gone.Cluster, "collector", gone.Collector)
			s.holdDeletes("the complete mark drops collector " + gone.Cluster + "/" + gone.Collector + ", which was not retired")
			return
		}
		s.required = slices.Clone(c.Collectors)
		lease := c.Lease()
		if lease <= 0 {
			lease = time.Duration(events.LeaseFor(events.DefaultHeartbeat)) * time.Millisecond
		}
		s.completeUntil = time.Now().Add(lease)
		if !s.complete {
			s.complete = true
			deletesAllowed.Set(1)
			s.log.Info("desired state complete: deletes allowed", "clusters", c.Clusters)
			s.markAll() // what was held back
		}
	default:
		s.holdDeletes("dedup says the desired state is incomplete: " + c.Reason)
	}
}

// holdDeletes stops deleting until the next live complete mark.
func (s *run) holdDeletes(why string) {
	if s.complete {
		s.log.Warn("deletes held", "why", why)
	}
	s.complete = false
	deletesAllowed.Set(0)
}

// expireCompleteness holds deletes once the complete mark's lease lapsed:
// dedup (or the collectors behind it) stopped saying so.
func (s *run) expireCompleteness(now time.Time) {
	if s.complete && now.After(s.completeUntil) {
		s.holdDeletes("the completeness mark was not renewed in time (dedup or a collector is gone)")
	}
}

// markAll schedules every name either side knows of.
func (s *run) markAll() {
	for n := range s.desired {
		s.mark(n, s.dirty[n])
	}
	for _, byName := range s.observed {
		for n := range byName {
			s.mark(n, s.dirty[n])
			for _, owner := range s.registryOwners(n) {
				s.mark(owner, s.dirty[owner])
			}
		}
	}
}

// busy reports whether a zone still waits for results or observations.
func (s *run) busy(k zoneKey, now time.Time) bool {
	f := s.flights[k]
	if f == nil {
		return false
	}
	return len(f.plans) > 0 || s.observedSeq < f.awaitSeq || now.Before(f.notBefore)
}

// expireFlights gives up waiting on plans that got no result in time,
// withdrawing them first: a superseded plan is never applied.
func (s *run) expireFlights(ctx context.Context) {
	now := time.Now()
	s.expireCompleteness(now)
	for k, f := range s.flights {
		if len(f.plans) > 0 && now.After(f.deadline) {
			s.log.Warn("no result for plans; withdrawing them and re-planning the zone", "provider", k.provider, "zone", k.zone, "plans", len(f.plans))
			s.withdraw(ctx, k, f)
			for _, p := range f.plans {
				for _, n := range p.names {
					s.mark(n, s.dirty[n])
				}
			}
			f.plans = map[string]planned{}
			f.awaitSeq = 0
		}
	}
}

// mark schedules name for planning. Once the replay is done, every mark
// makes the name fresh, dirty before or not: what marked it may be what
// lets it be planned now (the observation its zone waited for, a readable
// state after an unknown one), and the loop does not look again on a
// clock. During the replay a name is fresh once; markAll follows it.
func (s *run) mark(name, cause string) {
	if _, dirty := s.dirty[name]; !dirty || s.caughtUp.Load() {
		s.fresh = append(s.fresh, name)
	}
	s.dirty[name] = cause
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
func (s *run) plannable() bool {
	now := time.Now()
	fresh, rescan := s.fresh, s.rescan
	s.fresh, s.rescan = s.fresh[:0], false
	if !s.someZoneFree(now) {
		return false
	}
	if rescan {
		for n := range s.dirty {
			if s.inFreeZone(n, now) {
				return true
			}
		}
		return false
	}
	for _, n := range fresh {
		if _, ok := s.dirty[n]; ok && s.inFreeZone(n, now) {
			return true
		}
	}
	return false
}

// someZoneFree reports whether any managed zone could take a plan now.
func (s *run) someZoneFree(now time.Time) bool {
	for provider, zones := range s.zones {
		for _, z := range zones {
			if !s.busy(zoneKey{provider, z}, now) {
				return true
			}
		}
	}
	return false
}

// inFreeZone reports whether name is in a zone that could take a plan now.
func (s *run) inFreeZone(name string, now time.Time) bool {
	for provider, zones := range s.zones {
		if z, ok := zoneOf(name, zones); ok && !s.busy(zoneKey{provider, z}, now) {
			return true
		}
	}
	return false
}

func (s *run) observedAt(provider string) func(string) []events.Endpoint {
	byName := s.observed[provider]
	return func(name string) []events.Endpoint { return byName[name].records }
}

// registryOwners lists the names whose ownership a TXT at name may hold, so
// that a change to "a-www.example.com" re-plans www.example.com.
// A TXT that is gone must re-plan them too, so this goes by the name alone.
func (s *run) registryOwners(name string) []string {
	if s.reg.noop {
		return nil
	}
	return s.reg.names.RecordNames(name)
}
