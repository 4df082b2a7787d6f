package applier

import (
	"context"
	"maps"
	"slices"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/registry"
	"github.com/zonestream/zonestream/services/applier/provider"
)

// Report is what an applier tells of its provider, for the status of the
// object that declares it (services/applier/dnsprovider). Every error in
// it is redacted.
type Report struct {
	// Listed: the first full listing of this run was published.
	Listed bool
	// Zones are those of the zone list last published.
	Zones []string
	// Problem is why the last full listing failed ("" when it did not).
	Problem string
	// LastError is the provider's last error, whenever it was.
	LastError string
	// Held is how many names the provider holds a record at that our TXT
	// registry marks ours (counted only with a Scope).
	Held int
}

// Report returns what the applier knows of its provider now.
func (a *Applier) Report() Report {
	a.mu.Lock()
	defer a.mu.Unlock()
	r := a.reported
	r.Listed = a.listed
	r.Zones = slices.Clone(r.Zones)
	return r
}

// notePublished records zones as those of the zone list last published.
func (a *Applier) notePublished(zones []string) {
	a.published = slices.Clone(zones)
	a.mu.Lock()
	a.reported.Zones = slices.Clone(zones)
	a.mu.Unlock()
}

// scope is the Scope to publish: the configured one with the problem of
// the last listing; nil for a provider declared by flags.
func (a *Applier) scope() *events.ProviderScope {
	if a.cfg.Scope == nil {
		return nil
	}
	s := *a.cfg.Scope
	s.Domains, s.Exclude, s.Namespaces = slices.Clone(s.Domains), slices.Clone(s.Exclude), slices.Clone(s.Namespaces)
	a.mu.Lock()
	s.Problem = a.reported.Problem
	a.mu.Unlock()
	return &s
}

// setProblem records why the last full listing failed (nil: it did not).
func (a *Applier) setProblem(err error) {
	problem := ""
	if err != nil {
		problem = provider.Redact(err.Error())
	}
	a.mu.Lock()
	a.reported.Problem = problem
	a.mu.Unlock()
}

// listingProblem publishes, for a declared provider, that its zones could
// not be listed: its zone list keeps the zones published before, so that
// its names wait for it instead of going elsewhere.
func (a *Applier) listingProblem(ctx context.Context, js jetstream.JetStream, err error) {
	a.setProblem(err)
	if a.cfg.Scope == nil {
		return
	}
	if err := a.publishZoneList(ctx, js, a.published); err != nil {
		a.log.Error("publishing the zone list failed", "err", err)
	}
}

// countOwned notes, for a declared provider, the names of zone that a
// listing eps holds an ownership record of ours for.
func (a *Applier) countOwned(zone string, eps []events.Endpoint) {
	if a.cfg.Scope == nil {
		return
	}
	names := a.cfg.Owner.Names()
	// A name counts when it holds a record beside the ownership TXT that
	// speaks for it: an ownership record alone holds nothing.
	records := map[string]bool{}
	var marks []string
	for _, ep := range eps {
		name := events.NormalizeName(ep.DNSName)
		ours := false
		for _, txt := range ep.Targets {
			if l, ok := registry.Parse(txt); ok && ep.RecordType == "TXT" {
				ours = ours || l.Owner == a.cfg.Owner.OwnerID
				continue
			}
			records[name] = true
		}
		if ours {
			marks = append(marks, name)
		}
	}
	owned := map[string]bool{}
	for _, mark := range marks {
		for _, name := range names.RecordNames(mark) {
			if name = events.NormalizeName(name); records[name] {
				owned[name] = true
			}
		}
		if records[mark] { // an old-format record: the TXT beside the record
			owned[mark] = true
		}
	}
	a.owned[zone] = owned
	a.countHeld()
}

// pruneOwned forgets the names held in zones the provider no longer has.
func (a *Applier) pruneOwned(zones []string) {
	if a.cfg.Scope == nil {
		return
	}
	maps.DeleteFunc(a.owned, func(z string, _ map[string]bool) bool { return !slices.Contains(zones, z) })
	a.countHeld()
}

// countHeld reports the names held for us in every zone.
func (a *Applier) countHeld() {
	held := map[string]bool{}
	for _, z := range slices.Sorted(maps.Keys(a.owned)) {
		maps.Copy(held, a.owned[z])
	}
	a.mu.Lock()
	a.reported.Held = len(held)
	a.mu.Unlock()
}

// lastPublishedZones are the zones of the zone list this provider last
// published (by this applier or one before it), nil when there is none.
func (a *Applier) lastPublishedZones(ctx context.Context, js jetstream.JetStream) []string {
	st, err := js.Stream(ctx, events.StreamObserved)
	if err != nil {
		return nil
	}
	m, err := st.GetLastMsgForSubject(ctx, events.ZonesSubject(a.name))
	if err != nil {
		return nil
	}
	var zl events.ZoneList
	if events.Unmarshal(m.Header, m.Data, &zl) != nil {
		return nil
	}
	return zl.Zones
}
