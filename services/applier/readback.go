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
// It first waits for the observed states of the last plan: what it
// compares with is what they stored.
func (a *Applier) readBack(ctx context.Context, zone string, changes []events.Change, causation string) (*readBack, error) {
	a.awaitObserved()
	names := changedNames(changes)
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

// storeLater publishes rb's observed states in the background, so that
// the next plan is applied while they are stored. Whatever reads or
// publishes observed state next waits for them first (awaitObserved):
// they are the baseline it compares with, and the observed stream's last
// sequence in the next result must cover them.
func (a *Applier) storeLater(ctx context.Context, rb *readBack) {
	if len(rb.batch) == 0 {
		return
	}
	done := make(chan struct{})
	a.storing = done
	// They outlive a stop (Run waits for them), so that a run that ends,
	// as --once does, leaves the stream holding what it applied.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeOnStop)
	go func() {
		defer close(done)
		defer cancel()
		_ = a.storeObserved(sctx, rb.batch) // what fails is published again by the next listing
	}()
}

// storeOnStop bounds how long the observed states of the last plan may
// keep storing once the applier was told to stop.
const storeOnStop = 10 * time.Second

// awaitObserved returns once the observed states storeLater publishes are
// stored or have failed.
func (a *Applier) awaitObserved() {
	if a.storing != nil {
		<-a.storing
		a.storing = nil
	}
}
