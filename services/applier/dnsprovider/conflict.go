package dnsprovider

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/routing"
)

// ConditionConflict is the condition that says whether another declared
// provider claims names of this one as specifically: there, routing
// refuses both (ProviderTie) rather than split a name between them.
const ConditionConflict = "Conflict"

const (
	// ReasonTie: another declared provider claims a zone or domain of
	// this one as specifically.
	ReasonTie = string(routing.Tie)
	// ReasonNoConflict: no other declared provider does.
	ReasonNoConflict = "NoConflict"
)

// claims are the names a declared provider serves, as routing weighs
// them: its included domains, else its zones (as its status lists them,
// written by whichever replica runs it, or as its applier here listed
// them).
func claims(e *entry) []string {
	if len(e.obj.Spec.Domains.Include) > 0 {
		return e.obj.Spec.Domains.Include
	}
	zones := slices.Clone(e.obj.Status.Zones)
	if e.run != nil {
		if a, _, _ := e.run.state(); a != nil {
			zones = append(zones, a.Report().Zones...)
		}
	}
	slices.Sort(zones)
	return slices.Compact(zones)
}

// conflicts finds, for every declared provider, the others that claim one
// of its names as specifically (events/routing, as the planner decides):
// a message per provider in conflict, by bus name. Providers declared by
// flags are not seen here: their ties show in the objects' status only.
func conflicts(entries map[string]*entry) map[string]string {
	table := routing.New()
	claimed := map[string][]string{}
	for key, e := range entries {
		if e.refusal != nil || e.obj.deleting() {
			continue
		}
		c := claims(e)
		if len(c) == 0 {
			continue
		}
		claimed[key] = c
		table.Set(&events.ZoneList{Provider: key, Zones: c, Scope: e.obj.scope(false)})
	}
	out := map[string]string{}
	for _, key := range slices.Sorted(maps.Keys(claimed)) {
		var with []string
		for _, name := range claimed[key] {
			d := table.Route(name, nil)
			if d.Reason != routing.Tie {
				continue
			}
			for _, other := range d.Tied {
				if other != key {
					with = append(with, fmt.Sprintf("%s (%s)", routing.Kind(other), name))
				}
			}
		}
		if len(with) > 0 {
			slices.Sort(with)
			out[key] = "claimed as specifically by " + strings.Join(slices.Compact(with), ", ") +
				": names there go to neither (ProviderTie) until one of them no longer serves them"
		}
	}
	return out
}

// conflictCondition is the Conflict condition of the provider key.
func conflictCondition(found map[string]string, key string, generation int64) Condition {
	if msg, ok := found[key]; ok {
		return Condition{Type: ConditionConflict, Status: "True", Reason: ReasonTie, Message: msg, ObservedGeneration: generation}
	}
	return Condition{Type: ConditionConflict, Status: "False", Reason: ReasonNoConflict, ObservedGeneration: generation}
}
