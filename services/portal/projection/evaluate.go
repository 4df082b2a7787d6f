package projection

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unique"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/registry"
	"github.com/zonestream/zonestream/events/routing"
)

// evaluate applies the status rules to v. Callers hold p.mu.
func (p *Projection) evaluate(v *View) {
	p.index.remove(v)
	v.Status, v.Reason = p.status(v)
	p.index.add(v)
}

func (p *Projection) status(v *View) (Status, string) {
	if h := v.Held; h != nil {
		return DeleteHeld, fmt.Sprintf("the mass-delete guard holds its delete: %d deletes of %d owned record sets in zone %s at once; "+
			"`zonestream plans approve %s` lets them through", h.Deletes, h.Owned, h.Zone, h.ID)
	}
	if v.Desired == nil {
		return Pending, "nothing is known yet about what is wanted here"
	}
	if p.opts.Filtered != nil && !v.declaredRoute() {
		if reason := p.opts.Filtered(v.Name); reason != "" {
			return NotManaged, "filtered out: " + reason
		}
	}
	if r := v.Refused; r != nil {
		if r.Reason == string(routing.NoZone) {
			return NotManaged, "no provider manages a zone holding this name (domain filter or zone list)"
		}
		return NotManaged, r.Reason + ": " + r.Detail
	}
	if reason := p.unlisted(v); reason != "" {
		return Pending, reason
	}
	if reason := p.overQuota(v); reason != "" {
		return NotManaged, "OverQuota: " + reason
	}
	if reason := p.foreign(v); reason != "" {
		return NotManaged, reason
	}
	if v.Result != nil && (v.Result.Status == events.ResultFailed || v.PlanFailures > 0) {
		return Failed, fmt.Sprintf("plan %s %s: %s", v.Result.PlanID, v.Result.Status, v.Result.Error)
	}
	since := p.now().Sub(v.Changed)
	wanted, held := v.Desired.sets, v.held()
	if !slices.Equal(wanted, held) {
		if since < p.opts.Grace {
			return Pending, "the provider does not hold it yet: " + describe(held.byType(), "nothing")
		}
		return NotInSync, "the provider holds " + describe(held.byType(), "nothing") + ", wanted " + describe(wanted.byType(), "nothing")
	}
	if !p.opts.Checking {
		return InSync, "the provider holds what is wanted (DNS is not checked)"
	}
	c := v.Check
	if c == nil || c.Version != v.Version && since < p.opts.Grace {
		return Pending, "the provider holds it; waiting for a DNS check"
	}
	if c.Error != "" {
		return NotAnswering, c.Error
	}
	answered := map[string][]string{}
	for t, targets := range c.Answers {
		if len(targets) > 0 {
			answered[t] = targets
		}
	}
	if !maps.EqualFunc(wanted.byType(), answered, slices.Equal) {
		if since < p.opts.Grace {
			return Pending, "DNS does not answer it yet: " + describe(answered, "nothing")
		}
		return NotInSync, "DNS answers " + describe(answered, "nothing") + ", wanted " + describe(wanted.byType(), "nothing")
	}
	if len(wanted) == 0 {
		return InSync, "nothing is wanted any more, and nothing is there"
	}
	return InSync, ""
}

// held is what the name's provider holds at the name, ownership TXT
// records aside. Before a zone list is seen, or for a provider declared
// by flags, what another provider holds stands in for it; a DNSProvider
// takes the name alone, and what others hold is not its.
func (v *View) held() recordSets {
	o := v.observed.get(v.Provider)
	if o == nil && !events.IsDeclared(v.Provider) {
		o = v.observed.first()
	}
	if o == nil {
		return nil
	}
	return o.sets
}

// foreign says why the records at v are someone else's; empty if they
// are not: an ownership record names another owner, or the provider holds
// records of a wanted type with no ownership record at all.
func (p *Projection) foreign(v *View) string {
	var owners []unique.Handle[string]
	for _, n := range p.registryNames(v.Name) {
		if o := p.held[n].get(v.Provider); o != nil {
			owners = append(owners, o.owners...)
		}
	}
	me := p.opts.Ownership.OwnerID
	for _, h := range owners {
		if owner := h.Value(); owner != registry.Unreadable && me != "" && owner != me {
			return fmt.Sprintf("owned by another owner %q (TXT registry)", owner)
		}
	}
	if len(owners) > 0 {
		return ""
	}
	wanted := v.Desired.sets.byType()
	for t, targets := range v.held().byType() {
		if _, ok := wanted[t]; ok && !slices.Equal(targets, wanted[t]) {
			return fmt.Sprintf("the provider holds %s %s, with no ownership record: not ours, left alone", t, strings.Join(targets, " "))
		}
	}
	return ""
}

// registryNames are where the ownership records of name's records may
// be: the old format's name, and the new format's of each type the
// planner manages by default or a user's TXT.
func (p *Projection) registryNames(name string) []string {
	out := []string{p.names.OldTXTName(name)}
	for _, t := range []string{events.RecordTypeA, events.RecordTypeAAAA, events.RecordTypeCNAME, events.RecordTypeTXT} {
		out = append(out, p.names.TXTName(name, t))
	}
	return out
}

// recordOwners are the owners r's strings name, if r is a TXT record
// (registry.Owner: encrypted ones are Unreadable).
func recordOwners(r events.Endpoint) []string {
	if r.RecordType != events.RecordTypeTXT {
		return nil
	}
	var out []string
	for _, t := range r.Targets {
		if owner, ok := registry.Owner(t); ok {
			out = append(out, owner)
		}
	}
	return out
}

func describe(sets map[string][]string, none string) string {
	if len(sets) == 0 {
		return none
	}
	var parts []string
	for _, t := range slices.Sorted(maps.Keys(sets)) {
		parts = append(parts, t+" "+strings.Join(sets[t], " "))
	}
	return strings.Join(parts, "; ")
}

// RecordSets is what is wanted at v, by record type; nil when nothing is.
func (v *View) RecordSets() map[string][]string {
	if v.Desired == nil {
		return nil
	}
	return v.Desired.sets.byType()
}

// RecordSets is what the provider holds, ownership records aside, by
// record type.
func (o *Observed) RecordSets() map[string][]string {
	return o.sets.byType()
}
