package applier

import (
	"context"
	"errors"
	"time"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
)

// readBack is what the provider holds at a plan's names after it was
// applied, as the observed states to store: the names whose content
// changed since last published, tombstones included.
type readBack struct {
	batch  []observedMsg
	states []events.ObservedState // batch's content, for the plan's result
}

// readBack reads what the provider holds at the names changes touched:
// name by name where the provider can (a zone of 10,000 records is not
// listed again after each plan), else by listing the zone, which stores
// what it finds before it returns (and leaves nothing to store).
//
// It first waits for the observed states still being stored of any of
// these names: what it compares with is what they stored.
func (a *Applier) readBack(ctx context.Context, zone string, changes []events.Change, causation string) (*readBack, error) {
	names := changedNames(changes)
	a.awaitNames(names)
	if len(names) == 0 {
		return &readBack{}, nil
	}
	eps, err := provider.RecordsAt(ctx, a.prov, zone, names)
	if errors.Is(err, errors.ErrUnsupported) {
		return &readBack{}, a.syncZone(ctx, zone, causation)
	}
	if err != nil {
		a.readFailed(ctx, zone, "reading back the names of a plan failed; publishing nothing for them", err)
		return nil, err
	}
	a.providerOK()
	zones := a.zonesWith(zone)
	delete(a.listings, zone) // the next listing compares afresh
	batch, errs := a.observedBatch(zone, zones, recordsByName(eps, zone, zones, names), a.tombstoneCandidates(names), causation)
	if len(errs) > 0 {
		a.log.Error("observed states of a plan's names cannot be published; the next listing tries again", "zone", zone, "err", errors.Join(errs...))
	}
	rb := &readBack{batch: batch}
	for _, m := range batch {
		rb.states = append(rb.states, m.state)
	}
	return rb, nil
}

// changedNames are the names changes touch, each once.
func changedNames(changes []events.Change) []string {
	var names []string
	seen := make(map[string]bool, len(changes))
	for _, c := range changes {
		if n := events.NormalizeName(c.Key().DNSName); n != "" && !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	return names
}

// A store is one plan's observed states being stored in the background.
type store struct {
	done     chan struct{}
	subjects map[string]bool
	stored   []observedMsg // what was acknowledged: read once done is closed
}

// maxStores bounds the plans whose observed states are stored at once.
const maxStores = 4

// storeLater publishes rb's observed states in the background, so that
// the next plan is applied while they are stored. A later plan that
// touches one of their names waits for them before it reads back, as
// does a listing (awaitObserved): they are the baseline it compares with,
// and its result's ObservedSeq must cover them. One that touches none
// need not, and does not.
func (a *Applier) storeLater(ctx context.Context, rb *readBack) {
	if len(rb.batch) == 0 {
		return
	}
	for len(a.stores) >= maxStores {
		a.finishStore()
	}
	s := &store{done: make(chan struct{}), subjects: make(map[string]bool, len(rb.batch))}
	for _, m := range rb.batch {
		s.subjects[m.msg.Subject] = true
	}
	a.stores = append(a.stores, s)
	// They outlive a stop by up to storeOnStop (Run waits for them), so
	// that a run that ends, as --once does, leaves the stream holding what
	// it applied.
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stopped := context.AfterFunc(ctx, func() { time.AfterFunc(storeOnStop, cancel) })
	go func() {
		defer close(s.done)
		defer cancel()
		defer stopped()
		s.stored, _ = a.publishObservedBatch(sctx, rb.batch) // what fails is published again by the next listing
	}()
}

// storeOnStop bounds how long the observed states of a plan may keep
// storing once the applier was told to stop.
const storeOnStop = 10 * time.Second

// finishStore waits for the oldest store and records what it stored.
func (a *Applier) finishStore() {
	s := a.stores[0]
	<-s.done
	a.stores = a.stores[1:]
	a.record(s.stored)
}

// awaitObserved returns once every observed state storeLater publishes
// is stored or has failed.
func (a *Applier) awaitObserved() {
	for len(a.stores) > 0 {
		a.finishStore()
	}
}

// awaitNames is awaitObserved when a store holds one of names.
func (a *Applier) awaitNames(names []string) {
	if len(a.stores) == 0 {
		return
	}
	for _, n := range names {
		subject := events.ObservedSubject(a.name, n)
		for _, s := range a.stores {
			if s.subjects[subject] {
				a.awaitObserved()
				return
			}
		}
	}
}
