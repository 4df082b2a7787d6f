package applier

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
)

// fullListing lists every zone and publishes what changed, then the zone
// list: every zone listed successfully at least once, so a planner never
// sees a zone before its records.
func (a *Applier) fullListing(ctx context.Context, js jetstream.JetStream) {
	a.lastListing, a.listingComplete = time.Now(), false
	if a.externalDNSMetrics() {
		lastReconcile.SetToCurrentTime()
	}
	defer func() { a.lastListingTook = time.Since(a.lastListing) }()
	a.awaitObserved()
	a.checkStream(ctx, js)
	zones, err := a.prov.Zones(ctx)
	if err != nil {
		if ctx.Err() == nil {
			a.providerFailed("zones", err)
			a.log.Error("listing the provider's zones failed", "err", err)
			a.listingProblem(ctx, js, err)
		}
		return
	}
	for i := range zones {
		zones[i] = events.NormalizeName(zones[i])
	}
	slices.Sort(zones)
	zones = slices.Compact(zones)
	a.zones = zones
	a.pruneOwned(zones)
	complete := true
	var failed error
	for _, z := range zones {
		if err := a.syncZone(ctx, z, ""); err != nil {
			complete = false
			failed = cmp.Or(failed, err)
			continue
		}
		a.listedZones[z] = true
	}
	var listed []string
	for _, z := range zones {
		// A declared provider keeps a zone published before (by an
		// applier before this one) while it cannot list it.
		if a.listedZones[z] || a.cfg.Scope != nil && slices.Contains(a.published, z) {
			listed = append(listed, z)
		}
	}
	a.setProblem(failed)
	if len(listed) > 0 || len(zones) == 0 || a.cfg.Scope != nil {
		if err := a.publishZoneList(ctx, js, listed); err != nil {
			complete = false
			a.log.Error("publishing the zone list failed", "err", err)
		}
	}
	if complete && ctx.Err() == nil {
		a.listingComplete = true
		a.synced(zones)
		a.mu.Lock()
		first := !a.listed
		a.listed = true
		a.updateReady()
		a.mu.Unlock()
		if first {
			a.log.Info("first full listing published", "zones", zones)
		}
	}
}

// checkStream notices that the observed stream lost what this applier
// published (purged, or lost with its node): its zone list is gone. It then
// forgets what it published, so that the listing publishes it all again,
// and reports true; otherwise a planner would take every name for empty
// and plan it anew.
func (a *Applier) checkStream(ctx context.Context, js jetstream.JetStream) bool {
	if n := events.Reconnects(js); n != a.reconnects {
		if kept, err := a.lastAck.Kept(ctx); err == nil && kept {
			a.reconnects = n
			a.log.Info("reconnected to NATS: the newest observed state it published is still there")
			return false
		}
		// The server may have restarted and lost what it had just
		// acknowledged: what the stream holds is the baseline, not what
		// this applier believes it published.
		hashes, err := events.LastHashes(ctx, js, events.StreamObserved, events.ObservedFilter(a.name))
		zh, zerr := events.LastHashes(ctx, js, events.StreamObserved, events.ZonesSubject(a.name))
		if err != nil || zerr != nil {
			return false // tried again at the next listing
		}
		a.reconnects, a.hashes, a.zoneListHash = n, hashes, zh[events.ZonesSubject(a.name)]
		a.lastAck.ReadBack(n)
		clear(a.listings)
		a.log.Info("reconnected to NATS: published state read back from the stream", "names", len(hashes))
		return true
	}
	if a.zoneListHash == "" {
		return false
	}
	if held, err := events.Holds(ctx, js, events.StreamObserved, events.ZonesSubject(a.name)); err != nil || held {
		return false
	}
	streamLostTotal.WithLabelValues(a.name).Inc()
	a.log.Error("the observed stream lost what this applier published (purged or lost); publishing everything again")
	a.hashes, a.zoneListHash = map[string]string{}, ""
	clear(a.listings)
	return true
}

func (a *Applier) publishZoneList(ctx context.Context, js jetstream.JetStream, zones []string) error {
	_, adjusts := a.raw.(provider.Adjuster)
	zl := &events.ZoneList{Provider: a.name, Zones: slices.Clone(zones), Adjusts: adjusts, Scope: a.scope()}
	h, err := events.HashOf(zl)
	if err != nil {
		return err
	}
	if h == a.zoneListHash {
		a.notePublished(zones)
		return nil
	}
	hash, _, err := a.lastAck.Publish(ctx, events.ZonesSubject(a.name), zl, "")
	if err != nil {
		return err
	}
	a.zoneListHash = hash
	a.notePublished(zones)
	a.log.Info("published zone list", "zones", zones)
	return nil
}

// syncZone lists zone and publishes the observed state of every name
// whose content changed, tombstones for names that are gone included. A
// failed listing publishes nothing: no deletes from ignorance.
func (a *Applier) syncZone(ctx context.Context, zone, causation string) error {
	a.awaitObserved() // a listing compares with every name's hash
	eps, err := a.prov.Records(ctx, zone)
	if err != nil {
		a.readFailed(ctx, zone, "listing a zone failed; publishing nothing for it", err)
		return err
	}
	a.providerOK()
	a.countOwned(zone, eps)
	a.zoneRecords[zone] = len(eps)
	types := map[string]int{}
	for _, ep := range eps {
		types[ep.RecordType]++
	}
	a.zoneTypes[zone] = types
	return a.publishZone(ctx, zone, eps, causation)
}

// readFailed counts and logs a failed read of zone, unless ctx ended.
func (a *Applier) readFailed(ctx context.Context, zone, msg string, err error) {
	if ctx.Err() == nil {
		a.providerFailed("records", err)
		a.log.Error(msg, "zone", zone, "err", err)
	}
}

// publishZone publishes what a full listing eps of zone holds at each of
// its names, and a tombstone for a name published before that eps hold
// nothing at. Names of a more specific zone are left to it.
func (a *Applier) publishZone(ctx context.Context, zone string, eps []events.Endpoint, causation string) error {
	zones := a.zonesWith(zone)
	// A listing the same as the last one published in full needs nothing
	// published; anything else published for the zone (a plan's names read
	// back, a failure) makes the next listing compare afresh.
	fingerprint := listingFingerprint(eps, zones)
	if last, ok := a.listings[zone]; ok && last == fingerprint {
		return nil
	}
	delete(a.listings, zone)
	batch, errs := a.observedBatch(zone, zones, recordsByName(eps, zone, zones, nil), a.tombstoneCandidates(nil), causation)
	if err := a.storeObserved(ctx, batch); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	a.listings[zone] = fingerprint
	return nil
}

// storeObserved publishes batch and returns once it is stored
// (publishObservedBatch), recording what was.
func (a *Applier) storeObserved(ctx context.Context, batch []observedMsg) error {
	stored, err := a.publishObservedBatch(ctx, batch)
	a.record(stored)
	return err
}

// zonesWith is the provider's zones, zone among them.
func (a *Applier) zonesWith(zone string) []string {
	if slices.Contains(a.zones, zone) {
		return a.zones
	}
	return append(slices.Clone(a.zones), zone)
}

// recordsByName groups eps by name: those of zone (not of a more specific
// one of zones), and only at names when not nil.
func recordsByName(eps []events.Endpoint, zone string, zones, names []string) map[string][]events.Endpoint {
	var only map[string]bool
	if names != nil {
		only = make(map[string]bool, len(names))
		for _, n := range names {
			only[n] = true
		}
	}
	byName := map[string][]events.Endpoint{}
	for _, ep := range eps {
		name := events.NormalizeName(ep.DNSName)
		if provider.ZoneOf(name, zones) != zone || only != nil && !only[name] {
			continue
		}
		byName[name] = append(byName[name], ep)
	}
	return byName
}

// tombstoneCandidates are the names that may need a tombstone, sorted:
// every name published (a full listing, names nil), or those of names
// published before.
func (a *Applier) tombstoneCandidates(names []string) []string {
	var gone []string
	if names == nil {
		prefix := strings.TrimSuffix(events.ObservedFilter(a.name), ">")
		for subj := range a.hashes {
			if tokens, ok := strings.CutPrefix(subj, prefix); ok {
				if name, err := events.NameFromTokens(tokens); err == nil {
					gone = append(gone, name)
				}
			}
		}
	} else {
		for _, name := range names {
			if a.hashes[events.ObservedSubject(a.name, name)] != "" {
				gone = append(gone, name)
			}
		}
	}
	slices.Sort(gone)
	return gone
}

// observedBatch is what to publish for zone: the observed state of each
// name of byName whose content changed, then a tombstone for each
// candidate of the zone that byName holds nothing at.
func (a *Applier) observedBatch(zone string, zones []string, byName map[string][]events.Endpoint, candidates []string, causation string) ([]observedMsg, []error) {
	var batch []observedMsg
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		st := &events.ObservedState{Provider: a.name, Zone: zone, DNSName: name, Records: byName[name]}
		if m, err := a.observedMsg(st, causation); err != nil {
			errs = append(errs, err)
		} else if m != nil {
			batch = append(batch, *m)
		}
	}
	for _, name := range candidates {
		if _, ok := byName[name]; ok || provider.ZoneOf(name, zones) != zone {
			continue
		}
		st := &events.ObservedState{Provider: a.name, Zone: zone, DNSName: name}
		if m, err := a.observedMsg(st, causation); err != nil {
			errs = append(errs, err)
		} else if m != nil {
			m.tombstone = true
			batch = append(batch, *m)
		}
	}
	return batch, errs
}

// observedMsg is one observed state to publish.
type observedMsg struct {
	msg       *nats.Msg
	state     events.ObservedState
	tombstone bool
}

// observedMsg builds the message for st, or returns nil when st's content
// is what was last published at its subject.
func (a *Applier) observedMsg(st *events.ObservedState, causation string) (*observedMsg, error) {
	subj := events.ObservedSubject(a.name, st.DNSName)
	msg, err := events.Message(subj, st, causation)
	if err != nil {
		return nil, err
	}
	if a.hashes[subj] == msg.Header.Get(events.HeaderHash) {
		return nil, nil
	}
	return &observedMsg{msg: msg, state: *st}, nil
}

// publishObservedBatch publishes batch (one message per subject) and
// returns once every message is acknowledged or has failed
// (events.PublishAll), with those acknowledged: the next batch for a
// name cannot overtake this one. Only their hashes are recorded (record),
// so what failed is published again by the next sync.
func (a *Applier) publishObservedBatch(ctx context.Context, batch []observedMsg) (stored []observedMsg, err error) {
	msgs := make([]*nats.Msg, len(batch))
	for i, m := range batch {
		msgs[i] = m.msg
	}
	err = a.lastAck.PublishAll(ctx, msgs, func(i int, _ *jetstream.PubAck) {
		stored = append(stored, batch[i])
	}, func(i int, err error, final bool) {
		if final {
			observedPublishErrors.WithLabelValues(a.name, "final").Inc()
			a.log.Error("publishing observed state failed", "subject", batch[i].msg.Subject, "err", err)
			return
		}
		observedPublishErrors.WithLabelValues(a.name, "async").Inc()
		a.log.Warn("async publish of observed state failed; retrying it", "subject", batch[i].msg.Subject, "err", err)
	})
	return stored, err
}

// record notes the hashes of stored observed states: what the next sync
// compares with.
func (a *Applier) record(stored []observedMsg) {
	tombstones := 0
	for _, m := range stored {
		if m.tombstone {
			delete(a.hashes, m.msg.Subject) // gone: nothing more to compare it with
			tombstones++
		} else {
			a.hashes[m.msg.Subject] = m.msg.Header.Get(events.HeaderHash)
		}
	}
	if len(stored) > 0 {
		a.log.Debug("published observed state", "names", len(stored)-tombstones, "tombstones", tombstones)
	}
}
