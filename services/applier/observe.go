package applier

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
)

// fullListing lists every zone and publishes what changed, then the zone
// list: every zone listed successfully at least once, so a planner never
// sees a zone before its records.
func (a *Applier) fullListing(ctx context.Context, js jetstream.JetStream) {
	zones, err := a.prov.Zones(ctx)
	if err != nil {
		if ctx.Err() == nil {
			a.providerFailed("zones", err)
			a.log.Error("listing the provider's zones failed", "err", err)
		}
		return
	}
	for i := range zones {
		zones[i] = events.NormalizeName(zones[i])
	}
	slices.Sort(zones)
	zones = slices.Compact(zones)
	a.zones = zones
	complete := true
	for _, z := range zones {
		if err := a.syncZone(ctx, js, z, ""); err != nil {
			complete = false
			continue
		}
		a.listedZones[z] = true
	}
	var listed []string
	for _, z := range zones {
		if a.listedZones[z] {
			listed = append(listed, z)
		}
	}
	if len(listed) > 0 || len(zones) == 0 {
		if err := a.publishZoneList(ctx, js, listed); err != nil {
			complete = false
			a.log.Error("publishing the zone list failed", "err", err)
		}
	}
	if complete && ctx.Err() == nil {
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

func (a *Applier) publishZoneList(ctx context.Context, js jetstream.JetStream, zones []string) error {
	zl := &events.ZoneList{Provider: a.name, Zones: slices.Clone(zones)}
	h, err := events.HashOf(zl)
	if err != nil {
		return err
	}
	if h == a.zoneListHash {
		return nil
	}
	hash, _, err := events.Publish(ctx, js, events.ZonesSubject(a.name), zl, "")
	if err != nil {
		return err
	}
	a.zoneListHash = hash
	a.log.Info("published zone list", "zones", zones)
	return nil
}

// zoneOf returns the most specific of zones that name is in.
func zoneOf(name string, zones []string) string {
	best := ""
	for _, z := range zones {
		if provider.InZone(name, z) && len(z) > len(best) {
			best = z
		}
	}
	return best
}

// syncZone lists zone and publishes the observed state of every name
// whose content changed, tombstones for names that are gone included. A
// failed listing publishes nothing: no deletes from ignorance.
func (a *Applier) syncZone(ctx context.Context, js jetstream.JetStream, zone, causation string) error {
	eps, err := a.prov.Records(ctx, zone)
	if err != nil {
		if ctx.Err() == nil {
			a.providerFailed("records", err)
			a.log.Error("listing a zone failed; publishing nothing for it", "zone", zone, "err", err)
		}
		return err
	}
	a.providerOK()
	zones := a.zones
	if !slices.Contains(zones, zone) {
		zones = append(slices.Clone(zones), zone)
	}
	byName := map[string][]events.Endpoint{}
	for _, ep := range eps {
		name := events.NormalizeName(ep.DNSName)
		if zoneOf(name, zones) != zone {
			continue // belongs to a more specific zone, listed on its own
		}
		byName[name] = append(byName[name], ep)
	}
	published := 0
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		st := &events.ObservedState{Provider: a.name, Zone: zone, DNSName: name, Records: byName[name]}
		ok, err := a.publishObserved(ctx, js, st, causation)
		if err != nil {
			errs = append(errs, err)
		} else if ok {
			published++
		}
	}
	prefix := strings.TrimSuffix(events.ObservedFilter(a.name), ">")
	tombstones := 0
	for _, subj := range slices.Sorted(maps.Keys(a.hashes)) {
		tokens, ok := strings.CutPrefix(subj, prefix)
		if !ok {
			continue
		}
		name, err := events.NameFromTokens(tokens)
		if err != nil || zoneOf(name, zones) != zone {
			continue
		}
		if _, ok := byName[name]; ok {
			continue
		}
		st := &events.ObservedState{Provider: a.name, Zone: zone, DNSName: name}
		ok, err = a.publishObserved(ctx, js, st, causation)
		if err != nil {
			errs = append(errs, err)
		} else if ok {
			tombstones++
		}
	}
	if published > 0 || tombstones > 0 {
		a.log.Debug("published observed state", "zone", zone, "names", published, "tombstones", tombstones)
	}
	return errors.Join(errs...)
}

func (a *Applier) publishObserved(ctx context.Context, js jetstream.JetStream, st *events.ObservedState, causation string) (bool, error) {
	subj := events.ObservedSubject(a.name, st.DNSName)
	h, err := events.HashOf(st)
	if err != nil {
		return false, err
	}
	if a.hashes[subj] == h {
		return false, nil
	}
	hash, _, err := events.Publish(ctx, js, subj, st, causation)
	if err != nil {
		a.log.Error("publishing observed state failed", "subject", subj, "err", err)
		return false, err
	}
	a.hashes[subj] = hash
	return true, nil
}
