package projection

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/zonestream/zonestream/events"
)

// Filter selects names in List. Empty fields select everything.
type Filter struct {
	Zone, Cluster, Namespace, Source string
	// Provider selects the names that go to it (events/routing).
	Provider string
	Status   Status
	// Text matches names, record targets and object names, case-insensitively.
	Text string
}

// List returns the names the filter selects, by zone then name, and the
// count of every status among them.
func (p *Projection) List(f Filter) ([]Summary, map[Status]int) {
	text := strings.ToLower(strings.TrimSpace(f.Text))
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := make([]Summary, 0, len(p.views))
	counts := map[Status]int{}
	for _, v := range p.views {
		if !f.selects(v, text) {
			continue
		}
		counts[v.Status]++
		if f.Status != "" && v.Status != f.Status {
			continue
		}
		out = append(out, v.summary())
	}
	slices.SortFunc(out, func(a, b Summary) int { return cmp.Or(cmp.Compare(a.Zone, b.Zone), cmp.Compare(a.Name, b.Name)) })
	return out, counts
}

// Summaries returns the summaries of the names given that still exist.
func (p *Projection) Summaries(names []string) []Summary {
	p.mu.RLock()
	defer p.mu.RUnlock()
	var out []Summary
	for _, n := range names {
		if v, ok := p.views[n]; ok {
			out = append(out, v.summary())
		}
	}
	return out
}

// Counts counts the names in each status.
func (p *Projection) Counts() map[Status]int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return maps.Clone(p.index.counts)
}

func (f Filter) selects(v *View, text string) bool {
	if f.Zone != "" && v.Zone != events.NormalizeName(f.Zone) {
		return false
	}
	if f.Provider != "" && !v.goesTo(f.Provider) {
		return false
	}
	if f.Cluster != "" || f.Namespace != "" || f.Source != "" {
		if v.Desired == nil || !slices.ContainsFunc(v.Desired.Contributors, func(o events.ObjectRef) bool {
			return (f.Cluster == "" || o.Cluster == f.Cluster) && (f.Namespace == "" || o.Namespace == f.Namespace) &&
				(f.Source == "" || o.Source == f.Source)
		}) {
			return false
		}
	}
	if text == "" || strings.Contains(v.Name, text) {
		return true
	}
	if v.Desired == nil {
		return false
	}
	for _, o := range v.Desired.Contributors {
		if strings.Contains(strings.ToLower(o.Namespace+"/"+o.Name), text) {
			return true
		}
	}
	for _, e := range v.Desired.sets {
		if _, target, _ := strings.Cut(e, " "); strings.Contains(strings.ToLower(target), text) {
			return true
		}
	}
	return false
}

func (v *View) summary() Summary {
	s := Summary{Name: v.Name, Zone: v.Zone, Providers: v.providers(), Refused: v.Refused, Status: v.Status, Reason: v.Reason, Changed: v.Changed,
		Failures: v.PlanFailures + v.CheckFailures, StatusSlug: v.Status.Slug()}
	sets := v.RecordSets()
	for _, t := range slices.Sorted(maps.Keys(sets)) {
		s.Records = append(s.Records, t+" "+strings.Join(sets[t], " "))
	}
	if v.Desired != nil {
		s.Objects = v.Desired.Contributors
		var objs []string
		for _, o := range v.Desired.Contributors {
			objs = append(objs, o.Cluster+"/"+o.Resource())
		}
		s.ObjectSummary = strings.Join(objs, ", ")
	}
	return s
}

// CheckTarget is what a DNS check of a name asks.
type CheckTarget struct {
	Name    string
	Version uint64
	// Types are the record types to ask: those wanted and those held.
	Types []string
	// Checked says the name was checked at this version already.
	Checked bool
}

// CheckTarget returns what to ask DNS about name; false if it is gone.
func (p *Projection) CheckTarget(name string) (CheckTarget, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	v, ok := p.views[name]
	if !ok {
		return CheckTarget{}, false
	}
	types := map[string]bool{}
	if v.Desired != nil {
		for _, t := range v.Desired.sets.types() {
			types[t] = true
		}
	}
	for _, t := range v.held().types() {
		types[t] = true
	}
	if len(types) == 0 {
		types[events.RecordTypeA] = true
	}
	checked := v.Check != nil && v.Check.Version == v.Version
	return CheckTarget{Name: name, Version: v.Version, Types: slices.Sorted(maps.Keys(types)), Checked: checked}, true
}

// SetCheck records a DNS check made for the view's version c.Version; a
// check of an older version is dropped, the name is checked again.
func (p *Projection) SetCheck(name string, c Check) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok := p.views[name]
	if !ok || v.Version != c.Version {
		return false
	}
	v.Check = &c
	p.evaluate(v)
	if v.Status == NotAnswering || v.Status == NotInSync {
		v.CheckFailures++
	} else {
		v.CheckFailures = 0
	}
	for _, s := range p.subs {
		s.add(v.Name)
	}
	return true
}

// Names lists every name in view.
func (p *Projection) Names() []string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return slices.Collect(maps.Keys(p.views))
}

// Choices are the values of each filter among the names in view.
type Choices struct {
	Zones, Clusters, Namespaces, Sources []string
}

// Choices lists the values the filters can take.
func (p *Projection) Choices() Choices {
	sets := [4]map[string]bool{{}, {}, {}, {}}
	p.mu.RLock()
	for _, v := range p.views {
		sets[0][v.Zone] = true
		if v.Desired != nil {
			for _, o := range v.Desired.Contributors {
				sets[1][o.Cluster], sets[2][o.Namespace], sets[3][o.Source] = true, true, true
			}
		}
	}
	p.mu.RUnlock()
	sorted := func(set map[string]bool) []string {
		delete(set, "")
		return slices.Sorted(maps.Keys(set))
	}
	return Choices{Zones: sorted(sets[0]), Clusters: sorted(sets[1]), Namespaces: sorted(sets[2]), Sources: sorted(sets[3])}
}
