package crdregistry

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/registry"
	"github.com/zonestream/zonestream/services/applier/provider"
)

// Apply applies a plan's changes to zone: ownership records to DNSRecords,
// everything else to the provider, in ExternalDNS' order: the DNSRecords
// written and marked Accepted first, the provider called, then the
// DNSRecords marked Programmed (or Failed), and those whose ownership goes
// deleted last.
//
// Every TXT change's precondition covers its ownership part too: the
// registry strings of its Old must be exactly the virtual ones our Ready
// DNSRecords make now, else the plan is stale and nothing is done.
func (r *Registry) Apply(ctx context.Context, zone string, changes []events.Change) error {
	recs, err := r.store.List(ctx)
	if err != nil {
		return err
	}
	r.mu.Lock()
	zones := r.zones
	r.mu.Unlock()
	here := inZone(recs, zone, zones)
	// byKey holds every owner's: a record set has one object, whoever's.
	byKey := make(map[events.RRsetKey]*DNSRecord, len(here))
	var mine []*DNSRecord
	for _, d := range here {
		byKey[d.Spec.Endpoint.Key()] = d
		if r.store.ours(d) {
			mine = append(mine, d)
		}
	}
	current := virtualRecords(here, zone)

	s, err := r.sort(zone, changes, current)
	if err != nil {
		return err
	}
	claims, drops, err := r.ownership(zone, s, mine)
	if err != nil {
		refused.Inc()
		r.log.Warn("a plan's ownership change cannot be kept in a DNSRecord; the plan is refused, nothing is written", "zone", zone, "err", err)
		return provider.Permanent(err)
	}

	writes := r.pending(claims, s.records, byKey)
	for i := range writes {
		w := &writes[i]
		if w.written, err = r.store.write(ctx, w.ep, w.have); err != nil {
			r.undo(ctx, writes[:i], err)
			if errors.Is(err, errForeign) {
				refused.Inc()
				return provider.Permanent(err)
			}
			return err
		}
		r.store.setReady(ctx, w.written, ReasonAccepted, "Endpoint accepted by zonestream; not yet programmed")
	}

	if len(s.real) > 0 {
		if err := r.p.Apply(ctx, zone, s.real); err != nil {
			r.undo(ctx, writes, err)
			// The provider's count of changes applied is of its own
			// batch, not of the plan's: the applier reads back instead.
			if pe := (*provider.PartialError)(nil); errors.As(err, &pe) {
				err = pe.Err
			}
			return err
		}
	}
	for _, w := range writes {
		if w.live {
			r.store.setReady(ctx, w.written, ReasonProgrammed, "Endpoint applied to the DNS provider")
		}
	}
	for _, k := range slices.SortedFunc(maps.Keys(drops), compareKeys) {
		if d := byKey[k]; d != nil {
			if err := r.store.remove(ctx, d.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

// sorted is a plan's changes sorted out.
type sorted struct {
	real      []events.Change                   // to the provider, hidden registry strings put back
	records   map[events.RRsetKey]events.Change // every record change, as the planner sees it (registry strings out)
	ownership []ownershipChange
}

// ownershipChange is the registry part of one TXT change.
type ownershipChange struct {
	key      events.RRsetKey
	old, new []string
}

// sort splits changes into the provider's part and the ownership part,
// checking every TXT change's registry strings against current.
func (r *Registry) sort(zone string, changes []events.Change, current map[events.RRsetKey]events.Endpoint) (sorted, error) {
	s := sorted{records: map[events.RRsetKey]events.Change{}}
	for _, c := range changes {
		k := c.Key()
		if k.RecordType != events.RecordTypeTXT {
			s.real = append(s.real, c)
			s.records[k] = c
			continue
		}
		var oldReg, oldUser, newReg, newUser []string
		if c.Old != nil {
			oldReg, oldUser = splitRegistry(c.Old.Targets)
		}
		if c.New != nil {
			newReg, newUser = splitRegistry(c.New.Targets)
		}
		if !sameStrings(oldReg, current[k].Targets) {
			return sorted{}, fmt.Errorf("%w: the ownership of %s in zone %s (DNSRecords) is not what the plan expected", provider.ErrStale, k.DNSName, zone)
		}
		if len(oldReg)+len(newReg) > 0 {
			s.ownership = append(s.ownership, ownershipChange{key: k, old: oldReg, new: newReg})
		}
		if len(oldUser)+len(newUser) == 0 {
			continue
		}
		if len(oldReg)+len(newReg) > 0 && sameStrings(oldUser, newUser) {
			// Only the ownership in a shared RRset (the apex) changes: the
			// user's strings stay as they are, their TTL too.
			continue
		}
		user := events.Change{Old: withTargets(c.Old, oldUser), New: withTargets(c.New, newUser)}
		s.records[k] = user
		hidden := r.hiddenAt(k)
		real := events.Change{Old: withTargets(c.Old, append(oldUser, hidden...)), New: withTargets(c.New, append(newUser, hidden...))}
		if real.Old == nil && len(hidden) > 0 {
			real.Old = &events.Endpoint{DNSName: k.DNSName, RecordType: k.RecordType, SetIdentifier: k.SetIdentifier, Targets: hidden}
		}
		if real.New == nil && len(hidden) > 0 {
			real.New = &events.Endpoint{DNSName: k.DNSName, RecordType: k.RecordType, SetIdentifier: k.SetIdentifier, Targets: hidden}
			if c.Old != nil {
				real.New.RecordTTL = c.Old.RecordTTL
			}
		}
		if real.Old != nil && real.New != nil && sameStrings(real.Old.Targets, real.New.Targets) && real.Old.RecordTTL == real.New.RecordTTL {
			continue
		}
		s.real = append(s.real, real)
	}
	return s, nil
}

// ownership reads the ownership changes: the record sets our strings now
// claim, with what the strings say, and those whose ownership goes.
func (r *Registry) ownership(zone string, s sorted, mine []*DNSRecord) (map[events.RRsetKey]registry.Labels, map[events.RRsetKey]bool, error) {
	claims := map[events.RRsetKey]registry.Labels{}
	drops := map[events.RRsetKey]bool{}
	for _, o := range s.ownership {
		// Another owner's string the plan leaves as it is is not ours to
		// read; one it adds or drops is not ours to change.
		changed := func(strs, other []string) []string {
			return slices.DeleteFunc(slices.Clone(strs), func(str string) bool {
				l, _ := registry.Parse(str)
				return l.Owner != r.store.owner && slices.Contains(other, str)
			})
		}
		now, err := r.spokenFor(zone, o.key, changed(o.new, o.old), s, mine)
		if err != nil {
			return nil, nil, err
		}
		before, err := r.spokenFor(zone, o.key, changed(o.old, o.new), s, mine)
		if err != nil {
			return nil, nil, err
		}
		maps.Copy(claims, now)
		for k := range before {
			if _, kept := now[k]; !kept {
				drops[k] = true
			}
		}
	}
	for k := range claims {
		delete(drops, k)
	}
	return claims, drops, nil
}

// spokenFor are the record sets the ownership strings strs at key speak
// for: the one its name encodes (a-www: A www), or at the apex, the types
// the string lists (or, without such fields, those the plan writes there
// and those already owned there).
func (r *Registry) spokenFor(zone string, key events.RRsetKey, strs []string, s sorted, mine []*DNSRecord) (map[events.RRsetKey]registry.Labels, error) {
	out := map[events.RRsetKey]registry.Labels{}
	for _, str := range strs {
		l, _ := registry.Parse(str)
		if l.Owner != r.store.owner {
			return nil, fmt.Errorf("%s TXT: the plan changes owner %q's ownership; taking over another owner's DNSRecords is not supported (only %q's are written)",
				key.DNSName, l.Owner, r.store.owner)
		}
		name, types := key.DNSName, l.Types
		if !isApex(name, zone) {
			n, t := registry.CRDNames().EndpointName(name)
			if n == "" || t == "" {
				return nil, fmt.Errorf("%s TXT holds an ownership string but is no ownership record's name", key.DNSName)
			}
			name, types = n, []string{t}
		} else if types == nil {
			types = typesAt(name, key.SetIdentifier, s, mine)
		}
		l.Types = nil
		for _, t := range types {
			k := events.RRsetKey{DNSName: name, RecordType: t, SetIdentifier: key.SetIdentifier}
			if t == events.RecordTypeCNAME {
				k = aliasOwnedAsCNAME(k, s, mine)
			}
			out[k] = l
		}
	}
	return out, nil
}

// typesAt are the record types the plan writes at name, and those our
// DNSRecords hold there.
func typesAt(name, setID string, s sorted, mine []*DNSRecord) []string {
	var types []string
	for k, c := range s.records {
		if k.DNSName == name && k.SetIdentifier == setID && c.New != nil && k.RecordType != events.RecordTypeTXT {
			types = append(types, k.RecordType)
		}
	}
	for _, d := range mine {
		if k := d.Spec.Endpoint.Key(); k.DNSName == name && k.SetIdentifier == setID {
			types = append(types, k.RecordType)
		}
	}
	slices.Sort(types)
	return slices.Compact(types)
}

// aliasOwnedAsCNAME is k, a CNAME's, or the alias A record owned as that
// CNAME when the plan or our DNSRecords hold one instead.
func aliasOwnedAsCNAME(k events.RRsetKey, s sorted, mine []*DNSRecord) events.RRsetKey {
	if _, ok := s.records[k]; ok {
		return k
	}
	a := events.RRsetKey{DNSName: k.DNSName, RecordType: events.RecordTypeA, SetIdentifier: k.SetIdentifier}
	if c, ok := s.records[a]; ok && ((c.New != nil && isAlias(*c.New)) || (c.Old != nil && isAlias(*c.Old))) {
		return a
	}
	for _, d := range mine {
		if d.Spec.Endpoint.Key() == a && isAlias(d.Spec.Endpoint) {
			return a
		}
	}
	return k
}

// write is one DNSRecord to write for the plan.
type write struct {
	ep      events.Endpoint
	have    *DNSRecord // as it was, nil when new
	live    bool       // the provider holds ep once the plan is applied: Programmed then
	written *DNSRecord
}

// pending are the DNSRecords the plan writes: those of the record sets
// claimed, and those of ours whose record set the plan changes.
func (r *Registry) pending(claims map[events.RRsetKey]registry.Labels, records map[events.RRsetKey]events.Change,
	byKey map[events.RRsetKey]*DNSRecord) []write {
	keys := slices.Collect(maps.Keys(claims))
	for k, c := range records {
		if _, claimed := claims[k]; !claimed && byKey[k] != nil && c.New != nil {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, compareKeys)
	var out []write
	for _, k := range keys {
		w := write{have: byKey[k]}
		switch c, ok := records[k]; {
		case ok && c.New != nil:
			w.ep, w.live = *c.New, true
		case ok:
			continue // the record goes: its ownership goes with it (drops)
		case w.have != nil:
			w.ep, w.live = w.have.Spec.Endpoint, w.have.Ready()
		default:
			// Ownership of a record set the plan does not write (a plan
			// split in halves): Accepted until a plan writes the record.
			w.ep = events.Endpoint{DNSName: k.DNSName, RecordType: k.RecordType, SetIdentifier: k.SetIdentifier}
		}
		w.ep.Labels = map[string]string{endpointOwnerLabel: r.store.owner}
		resource := claims[k].Resource
		if resource == "" && w.have != nil {
			resource = w.have.Spec.Endpoint.Labels[endpointResourceLabel]
		}
		if resource != "" {
			w.ep.Labels[endpointResourceLabel] = resource
		}
		out = append(out, w)
	}
	return out
}

// undo marks the DNSRecords written for a plan that failed with err: Failed
// (not owned: a later plan writes them again), except those that were
// Programmed before, which are put back as they were: the provider still
// holds what they say, and they must stay ours for the plan to be retried.
func (r *Registry) undo(ctx context.Context, writes []write, cause error) {
	for _, w := range writes {
		if w.written == nil {
			continue
		}
		if w.have != nil && w.have.Ready() {
			if back, err := r.store.write(ctx, w.have.Spec.Endpoint, w.written); err == nil {
				r.store.setReady(ctx, back, ReasonProgrammed, fmt.Sprintf("The provider refused a change (%v); it holds this endpoint still", cause))
				continue
			}
		}
		r.store.setReady(ctx, w.written, ReasonFailed, fmt.Sprintf("Provider rejected the batch: %v", cause))
	}
}

// hiddenAt are the registry strings the provider held at k when last listed.
func (r *Registry) hiddenAt(k events.RRsetKey) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.hidden[k])
}

// withTargets is ep with targets; nil when ep is nil or targets is empty.
func withTargets(ep *events.Endpoint, targets []string) *events.Endpoint {
	if ep == nil || len(targets) == 0 {
		return nil
	}
	c := *ep
	c.Targets = slices.Clone(targets)
	slices.Sort(c.Targets)
	return &c
}

// sameStrings reports whether a and b hold the same strings, in any order.
func sameStrings(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// compareKeys orders record sets as events.CompareEndpoints does.
func compareKeys(a, b events.RRsetKey) int {
	return events.CompareEndpoints(events.Endpoint{DNSName: a.DNSName, RecordType: a.RecordType, SetIdentifier: a.SetIdentifier},
		events.Endpoint{DNSName: b.DNSName, RecordType: b.RecordType, SetIdentifier: b.SetIdentifier})
}
