package planner

import (
	"maps"
	"slices"
)

// A declared provider's quota (ProviderScope.Quota) is the most DNS names
// it may hold records at for us. The names it holds for us (records our
// ownership registry says are ours) and those planned into it since and
// still wanted there count against it. A name it holds is never refused;
// a new one over the quota is not planned into it (nothing else of the
// name changes) until a delete frees room: within a pass names are
// admitted in name order, so the same state admits the same names.

// quotas are the quota's bookkeeping across passes.
type quotas struct {
	// admitted are, per provider, the names planned into it within its
	// quota while wanted there: counted before its records are seen.
	admitted map[string]map[string]bool
	// over are, per provider, the names refused over its quota: logged
	// once each, planned again when room is freed.
	over map[string]map[string]bool
}

func newQuotas() quotas {
	return quotas{admitted: map[string]map[string]bool{}, over: map[string]map[string]bool{}}
}

// quotaPass is what a pass has counted against each provider's quota.
type quotaPass map[string]int

// admit reports whether name, wanted at provider in zone, may be planned
// into it within its quota, and counts it when it is new.
func (r *run) admit(pass quotaPass, provider, zone, name string) bool {
	s := r.scope(provider)
	if s == nil || s.Quota <= 0 || r.quota.admitted[provider][name] || r.holdsForUs(provider, zone, name) {
		return true
	}
	used, ok := pass[provider]
	if !ok {
		used = r.quotaUsed(provider)
	}
	if used < s.Quota {
		pass[provider] = used + 1
		setIn(r.quota.admitted, provider, name)
		if r.quota.over[provider][name] {
			delete(r.quota.over[provider], name)
			namesOverQuota.WithLabelValues(provider).Set(float64(len(r.quota.over[provider])))
		}
		return true
	}
	pass[provider] = used
	if !r.quota.over[provider][name] {
		setIn(r.quota.over, provider, name)
		namesOverQuota.WithLabelValues(provider).Set(float64(len(r.quota.over[provider])))
		r.log.Warn("name over the provider's quota: not planned into it until a name it holds is deleted",
			"provider", provider, "declared", s.Declared, "quota", s.Quota, "name", name)
	}
	return false
}

// quotaUsed counts the names provider holds records at for us, and those
// planned into it and not seen there yet.
func (r *run) quotaUsed(provider string) int {
	held := map[string]bool{}
	for name := range r.observed[provider] {
		if zone, ok := zoneOf(name, r.zones[provider]); ok && r.holdsForUs(provider, zone, name) {
			held[name] = true
		}
	}
	for name := range r.quota.admitted[provider] {
		// One no longer routed there (its zone gone from the list, say)
		// and not re-planned since no longer counts.
		if d, ok := r.decide(name); ok && d.Goes(provider) {
			held[name] = true
		} else {
			delete(r.quota.admitted[provider], name)
		}
	}
	return len(held)
}

// holdsForUs reports whether provider holds records of ours at name: what
// planning it with nothing wanted would delete.
func (r *run) holdsForUs(provider, zone, name string) bool {
	if len(r.observed[provider][name].records) == 0 || !r.known(provider, name) {
		return false
	}
	in := r.nameInput(provider, zone, name)
	in.desired, in.policy = nil, PolicySync
	return r.reg.countDeletes(name, planName(in).changes) > 0
}

// unquota takes name out of provider's quota bookkeeping: it is no longer
// wanted there. Room it held is free: the names over the quota are
// planned again.
func (r *run) unquota(provider, name string) {
	if r.quota.over[provider][name] {
		delete(r.quota.over[provider], name)
		namesOverQuota.WithLabelValues(provider).Set(float64(len(r.quota.over[provider])))
	}
	if r.quota.admitted[provider][name] {
		delete(r.quota.admitted[provider], name)
		r.quotaFreed(provider)
	}
}

// quotaFreed plans the names over provider's quota again: room may be
// free (a name it held is gone).
func (r *run) quotaFreed(provider string) {
	for _, name := range slices.Sorted(maps.Keys(r.quota.over[provider])) {
		r.mark(name, r.dirty[name])
	}
}

// forget drops provider's quota: it has none now, or is gone.
func (q quotas) forget(provider string) {
	if q.over[provider] != nil {
		namesOverQuota.DeleteLabelValues(provider)
	}
	delete(q.admitted, provider)
	delete(q.over, provider)
}

func setIn(m map[string]map[string]bool, key, name string) {
	if m[key] == nil {
		m[key] = map[string]bool{}
	}
	m[key][name] = true
}
