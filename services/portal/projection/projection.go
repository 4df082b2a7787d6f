// Package projection builds one view per DNS name from the zonestream
// streams: what is wanted and why, the last plan and its result, what the
// providers hold and what DNS answers, and from these a status.
package projection

import (
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/registry"
	"github.com/zonestream/zonestream/events/routing"
)

// Options tune the status rules.
type Options struct {
	// Grace is how long a difference between what is wanted and what is
	// held or answered counts as pending before it is not in sync.
	Grace time.Duration
	// Ownership are the ownership settings of this deployment; records
	// whose ownership record names another owner are someone else's.
	Ownership registry.Settings
	// Checking says DNS is checked; without it, in sync means the
	// provider holds what is wanted.
	Checking bool
	// Filtered says why the planner's domain filters leave a name out;
	// "" when they do not. Nil: no filters.
	Filtered func(name string) string
}

// recentLimit bounds the plans and results remembered to link results
// (and observations read back at start) to the names they touched.
const recentLimit = 4096

// Projection is the read model: every view, kept current by Apply*.
type Projection struct {
	opts  Options
	names registry.Names // where opts.Ownership puts ownership records
	now   func() time.Time

	mu    sync.RWMutex
	views map[string]*View
	// held is what each provider holds at every name, ownership records
	// and names nobody wants included: name -> provider -> state.
	held map[string]holders
	// routes are the providers' zone lists: where each name goes
	// (events/routing), as the planner decides it.
	routes *routing.Table
	quota  quotaCounts
	// planNames maps a plan's event id to the names its changes touch;
	// results maps a plan's event id to its result. Both are bounded.
	planNames *recent[[]string]
	results   *recent[events.Result]
	// observedBy maps a plan's event id to the names whose observed state it caused.
	observedBy *recent[[]string]
	// early holds the plans for names not in view yet, by name.
	early    *recent[*PlanRef]
	resultAt map[string]Meta
	// holds are the zones' held deletes, by subject (held.go).
	holds map[string]*HeldRef
	subs  []*Subscription
	index index
}

// New returns an empty projection.
func New(opts Options) *Projection {
	return &Projection{opts: opts, names: opts.Ownership.Names(), now: time.Now,
		views: map[string]*View{}, held: map[string]holders{}, routes: routing.New(), quota: quotaCounts{},
		planNames: newRecent[[]string](recentLimit), results: newRecent[events.Result](recentLimit),
		observedBy: newRecent[[]string](recentLimit),
		early:      newRecent[*PlanRef](recentLimit),
		resultAt:   map[string]Meta{}, holds: map[string]*HeldRef{}, index: newIndex()}
}

// Subscription collects the names that changed since it was last drained.
type Subscription struct {
	// C gets a value when names changed (it never blocks the projection).
	C     chan struct{}
	mu    sync.Mutex
	names map[string]struct{}
}

// Subscribe returns a new subscription to changed names.
func (p *Projection) Subscribe() *Subscription {
	s := &Subscription{C: make(chan struct{}, 1), names: map[string]struct{}{}}
	p.mu.Lock()
	p.subs = append(p.subs, s)
	p.mu.Unlock()
	return s
}

// Drain returns the names changed since the last Drain.
func (s *Subscription) Drain() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.names))
	for n := range s.names {
		out = append(out, n)
	}
	clear(s.names)
	return out
}

func (s *Subscription) add(name string) {
	s.mu.Lock()
	s.names[name] = struct{}{}
	s.mu.Unlock()
	select {
	case s.C <- struct{}{}:
	default:
	}
}

// touched re-evaluates a view after a change and tells the subscribers.
// Callers hold p.mu.
func (p *Projection) touched(v *View) {
	v.Version++
	v.Changed = p.now()
	p.route(v)
	p.evaluate(v)
	for _, s := range p.subs {
		s.add(v.Name)
	}
}

// Get returns a copy of the view of name.
func (p *Projection) Get(name string) (View, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	v, ok := p.views[events.NormalizeName(name)]
	if !ok {
		return View{}, false
	}
	cp := *v
	cp.Providers = v.providers()
	cp.Observed = v.observed.asMap(v.Name)
	if v.Desired != nil {
		d := *v.Desired
		d.Subject = events.DesiredSubject(v.Name)
		cp.Desired = &d
	}
	if v.Plan != nil {
		cp.Plan = v.Plan.unpacked()
	}
	return cp, true
}

// Len is the number of names in view.
func (p *Projection) Len() int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return len(p.views)
}

// Reevaluate applies the status rules again to the pending views: pending
// turns into not in sync when its grace runs out without any event. It
// forgets the names nothing is wanted at any more once their tombstone has
// expired from the stream, as a restarted portal would not know them.
func (p *Projection) Reevaluate() {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	for v := range p.index.emptied {
		if v.expired(now) {
			p.index.remove(v)
			delete(p.views, v.Name)
			for _, s := range p.subs {
				s.add(v.Name)
			}
		}
	}
	// evaluate moves views in and out of pending: walk a copy.
	for _, v := range slices.Collect(maps.Keys(p.index.pending)) {
		before, reason := v.Status, v.Reason
		p.evaluate(v)
		if v.Status != before || v.Reason != reason {
			for _, s := range p.subs {
				s.add(v.Name)
			}
		}
	}
}

// recent is a bounded map that forgets its oldest keys first.
type recent[T any] struct {
	limit int
	order []string
	m     map[string]T
}

func newRecent[T any](limit int) *recent[T] { return &recent[T]{limit: limit, m: map[string]T{}} }

func (r *recent[T]) put(k string, v T) {
	if k == "" {
		return
	}
	if _, ok := r.m[k]; !ok {
		r.order = append(r.order, k)
		if len(r.order) > r.limit {
			delete(r.m, r.order[0])
			r.order = r.order[1:]
		}
	}
	r.m[k] = v
}

func (r *recent[T]) get(k string) (T, bool) {
	v, ok := r.m[k]
	return v, ok
}
