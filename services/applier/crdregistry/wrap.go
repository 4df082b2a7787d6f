package crdregistry

import (
	"context"
	"log/slog"
	"slices"
	"sync"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
)

// Registry is a provider seen through the CRD registry: its records, less
// the registry strings it holds, plus the virtual ownership records of our
// Ready DNSRecords; and its Apply, with ownership written to DNSRecords.
type Registry struct {
	p     provider.Provider
	store *Store
	log   *slog.Logger

	mu    sync.Mutex
	zones []string // the provider's zones at the last listing: a record is in the most specific
	// hidden are the registry strings each TXT RRset of the provider held
	// at its last listing: kept out of the planner's sight, and put back
	// into every change of their RRset so that they are never touched.
	hidden map[events.RRsetKey][]string
}

// Wrap returns p with ownership kept in store's DNSRecords. The result
// reads names (provider.NameReader) when p does.
func Wrap(p provider.Provider, store *Store) provider.Provider {
	r := &Registry{p: p, store: store, log: store.log, hidden: map[events.RRsetKey][]string{}}
	if nr, ok := p.(provider.NameReader); ok {
		return &nameReading{Registry: r, nr: nr}
	}
	return r
}

// Zones are the provider's.
func (r *Registry) Zones(ctx context.Context) ([]string, error) {
	zones, err := r.p.Zones(ctx)
	if err == nil {
		r.mu.Lock()
		r.zones = slices.Clone(zones)
		r.mu.Unlock()
	}
	return zones, err
}

// Records lists zone with ownership from the DNSRecords.
func (r *Registry) Records(ctx context.Context, zone string) ([]events.Endpoint, error) {
	eps, err := r.p.Records(ctx, zone)
	if err != nil {
		return nil, err
	}
	recs, err := r.store.List(ctx)
	if err != nil {
		return nil, err
	}
	r.correct(ctx, eps, recs)
	return r.present(zone, eps, recs, nil), nil
}

type nameReading struct {
	*Registry
	nr provider.NameReader
}

// RecordsAt reads names of zone with ownership from the DNSRecords.
func (r *nameReading) RecordsAt(ctx context.Context, zone string, names []string) ([]events.Endpoint, error) {
	eps, err := r.nr.RecordsAt(ctx, zone, names)
	if err != nil {
		return nil, err
	}
	recs, err := r.store.List(ctx)
	if err != nil {
		return nil, err
	}
	r.correct(ctx, eps, recs)
	return r.present(zone, eps, recs, names), nil
}

// correct marks Programmed the DNSRecords of ours left Accepted or Failed
// whose records the provider does hold as they say: a change applied just
// before a crash, or by a batch the provider failed after applying part of
// it. ExternalDNS corrects them by applying them again; the planner, which
// never touches a record not owned, could not.
func (r *Registry) correct(ctx context.Context, eps []events.Endpoint, recs []*DNSRecord) {
	held := make(map[events.RRsetKey]events.Endpoint, len(eps))
	for _, ep := range eps {
		held[ep.Key()] = ep
	}
	for _, d := range recs {
		ep, ok := held[d.Spec.Endpoint.Key()]
		if !r.store.ours(d) || d.Ready() || !ok || len(d.Spec.Endpoint.Targets) == 0 || !provider.SameTargets(d.Spec.Endpoint, ep) {
			continue
		}
		r.store.setReady(ctx, d, ReasonProgrammed, "Endpoint found in the DNS provider as written")
	}
}

// present is what the planner sees of the provider's eps at names of zone
// (nil: the whole zone): registry strings hidden, virtual ownership added.
func (r *Registry) present(zone string, eps []events.Endpoint, recs []*DNSRecord, names []string) []events.Endpoint {
	at := func(name string) bool {
		return names == nil || slices.Contains(names, name)
	}
	r.mu.Lock()
	zones := r.zones
	for k := range r.hidden {
		if belongs(k.DNSName, zone, zones) && at(k.DNSName) {
			delete(r.hidden, k)
		}
	}
	out := make([]events.Endpoint, 0, len(eps))
	for _, ep := range eps {
		if ep.RecordType == events.RecordTypeTXT {
			reg, other := splitRegistry(ep.Targets)
			if len(reg) > 0 {
				r.hidden[ep.Key()] = reg
				if len(other) == 0 {
					continue
				}
				ep.Targets = other
			}
		}
		out = append(out, ep)
	}
	r.mu.Unlock()

	here := inZone(recs, zone, zones)
	here = slices.DeleteFunc(here, func(d *DNSRecord) bool { return !at(d.Spec.Endpoint.DNSName) })
	virtual := virtualRecords(here, zone)
	for i, ep := range out {
		if v, ok := virtual[ep.Key()]; ok {
			// The user's TXT and ownership at one name (the apex).
			out[i].Targets = append(slices.Clone(ep.Targets), v.Targets...)
			delete(virtual, ep.Key())
		}
	}
	for k, v := range virtual {
		if at(k.DNSName) {
			out = append(out, v)
		}
	}
	events.SortEndpoints(out)
	return out
}
