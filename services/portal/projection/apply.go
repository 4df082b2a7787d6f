package projection

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/zonestream/zonestream/events"
)

// ApplyDesired takes a desired-state message into the view of its name.
func (p *Projection) ApplyDesired(r events.Received) error {
	if events.IsMarker(r.Subject) {
		return nil
	}
	var d events.DesiredState
	if err := events.Decode(r, &d); err != nil {
		return err
	}
	desired := newDesired(MetaOf(r), &d)
	p.mu.Lock()
	defer p.mu.Unlock()
	v := p.view(d.DNSName)
	if v.Desired != nil && v.Desired.Seq >= r.Seq && v.Desired.Seq != 0 {
		return nil // replayed: already seen
	}
	v.Desired = desired
	v.CheckFailures = 0
	p.touched(v)
	return nil
}

// view returns the view of name, made when missing. Callers hold p.mu.
func (p *Projection) view(name string) *View {
	v, ok := p.views[name]
	if !ok {
		v = &View{Name: name}
		p.route(v)
		for _, h := range p.held[name] {
			v.setObserved(h.provider, h.state)
		}
		if plan, ok := p.early.get(name); ok {
			v.Plan = plan
			if res, ok := p.results.get(plan.EventID); ok {
				p.setResult(v, res, p.resultAt[res.PlanID])
			}
		}
		p.views[name] = v
	}
	return v
}

func (v *View) setObserved(provider string, o *Observed) {
	v.observed = v.observed.with(provider, o)
}

// ApplyObserved takes an observed-state or zone-list message in.
func (p *Projection) ApplyObserved(r events.Received) error {
	if strings.HasPrefix(r.Subject, events.SubjectZones+".") {
		return p.applyZones(r)
	}
	var o events.ObservedState
	if err := events.Decode(r, &o); err != nil {
		return err
	}
	var state *Observed
	if len(o.Records) > 0 {
		state = newObserved(MetaOf(r), o.Zone, o.Records)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if held := p.held[o.DNSName].with(o.Provider, state); len(held) > 0 {
		p.held[o.DNSName] = held
	} else {
		delete(p.held, o.DNSName)
	}
	if p.countHeld(o.Provider, o.DNSName, state) {
		for _, v := range p.views {
			if v.goesTo(o.Provider) {
				p.touched(v) // its quota filled or freed
			}
		}
	}
	cause := r.Causation()
	if cause != "" {
		caused, _ := p.observedBy.get(cause)
		p.observedBy.put(cause, append(caused, o.DNSName, ownerOf(o.DNSName)))
	}
	for _, name := range []string{o.DNSName, ownerOf(o.DNSName)} {
		v, ok := p.views[name]
		if !ok || name == "" {
			continue
		}
		if name == o.DNSName {
			v.setObserved(o.Provider, state)
		}
		if res, ok := p.results.get(cause); ok {
			p.setResult(v, res, p.resultAt[res.PlanID])
		}
		p.touched(v)
	}
	return nil
}

// ownerOf is the name an ExternalDNS ownership record such as
// "a-web.example.org" speaks for ("web.example.org"); empty if none.
func ownerOf(name string) string {
	prefix, rest, ok := strings.Cut(name, "-")
	if !ok {
		return ""
	}
	switch prefix {
	case "a", "aaaa", "cname", "txt", "srv", "mx", "ns", "ptr":
		return rest
	}
	return ""
}

func (p *Projection) applyZones(r events.Received) error {
	var zl events.ZoneList
	if err := events.Decode(r, &zl); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if old, ok := p.routes.Get(zl.Provider); ok && slices.Equal(old.Zones, zl.Zones) && reflect.DeepEqual(old.Scope, zl.Scope) {
		return nil
	}
	p.routes.Set(&zl)
	for _, v := range p.views {
		p.touched(v) // routes the name again
	}
	return nil
}

// ApplyPlan takes in a plan seen on its way to an applier. A plan may
// come before the desired state that caused it (a plain subscription is
// faster than a consumer): it waits for its name's view in early.
func (p *Projection) ApplyPlan(r events.Received) error {
	var plan events.Plan
	if err := events.Decode(r, &plan); err != nil {
		return err
	}
	byName := map[string][]events.Change{}
	for _, c := range plan.Changes {
		name := c.Key().DNSName
		if owner := ownerOf(name); owner != "" && c.Key().RecordType == events.RecordTypeTXT {
			name = owner // an ownership record speaks for its name
		}
		byName[name] = append(byName[name], c)
	}
	meta := MetaOf(r)
	refs := make(map[string]*PlanRef, len(byName))
	for name, changes := range byName {
		packed, err := events.Pack(changes)
		if err != nil {
			return err
		}
		refs[name] = &PlanRef{Meta: meta, ID: plan.ID, Provider: plan.Provider, Zone: plan.Zone, changes: packed}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	names := make([]string, 0, len(refs))
	for name, ref := range refs {
		names = append(names, name)
		v, ok := p.views[name]
		if !ok {
			p.early.put(name, ref)
			continue
		}
		v.Plan, v.Result = ref, nil
		p.touched(v)
	}
	p.planNames.put(r.EventID(), names)
	return nil
}

// ApplyResult takes in a plan's result: the names its plan touched, and
// those whose observed state that plan caused, get it.
func (p *Projection) ApplyResult(r events.Received) error {
	var res events.Result
	if err := events.Decode(r, &res); err != nil {
		return err
	}
	// The observed states a result carries come from the observed stream
	// too (ApplyObserved); kept here, 4096 results of 1000 names each
	// would hold gigabytes.
	res.Observed = nil
	planEvent := r.Causation()
	meta := MetaOf(r)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.results.put(planEvent, res)
	p.resultAt[res.PlanID] = meta
	if len(p.resultAt) > recentLimit {
		clear(p.resultAt) // only a time for display; a rebuild is cheap
	}
	names, _ := p.planNames.get(planEvent)
	caused, _ := p.observedBy.get(planEvent)
	for _, name := range append(slices.Clone(names), caused...) {
		if v, ok := p.views[name]; ok && (v.Result == nil || v.Result.PlanID != res.PlanID) {
			p.setResult(v, res, meta)
			p.touched(v)
		}
	}
	return nil
}

// setResult records res as the name's last result and counts failures.
func (p *Projection) setResult(v *View, res events.Result, meta Meta) {
	if v.Result != nil && v.Result.PlanID == res.PlanID {
		return
	}
	ref := &ResultRef{Meta: meta, PlanID: res.PlanID, Provider: res.Provider, Status: res.Status,
		Error: res.Error, Applied: res.Applied}
	failedHere := false
	for _, f := range res.Failed {
		if n := f.Change.Key().DNSName; n == v.Name || ownerOf(n) == v.Name {
			failedHere = true
			ref.Error = fmt.Sprintf("%s: %s", f.Change, f.Error)
		}
	}
	switch {
	case res.Status == events.ResultFailed || failedHere:
		v.PlanFailures++
	case res.Status == events.ResultApplied:
		v.PlanFailures = 0
	}
	v.Result = ref
}
