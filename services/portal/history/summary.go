package history

import (
	"fmt"
	"strings"

	"github.com/zonestream/zonestream/events"
)

// PlanEntry is the history entry of a plan the caller saw: e says where
// and when, plan is the plan with only its changes to the name.
func PlanEntry(e Entry, plan *events.Plan) Entry {
	e.Kind, e.PlanID, e.Event = KindPlan, plan.ID, plan
	changes := make([]string, 0, len(plan.Changes))
	for _, c := range plan.Changes {
		changes = append(changes, change(c))
	}
	e.Summary = fmt.Sprintf("plan %s for zone %s (%s): %s", plan.ID, plan.Zone, plan.Provider, strings.Join(changes, "; "))
	return e
}

func change(c events.Change) string {
	s := c.Action() + " " + c.Key().DNSName + " " + c.Key().RecordType
	if c.New != nil {
		s += " " + strings.Join(c.New.Targets, " ")
	}
	return s
}

func desiredSummary(d *events.DesiredState) string {
	if len(d.Endpoints) == 0 {
		return "nothing is wanted here any more"
	}
	var objs []string
	for _, c := range d.Contributors {
		objs = append(objs, c.Cluster+"/"+c.Resource())
	}
	s := "wanted: " + records(d.Endpoints) + " by " + strings.Join(objs, ", ")
	for _, l := range d.Losers {
		s += fmt.Sprintf("; outranked: %s/%s (%s)", l.Object.Cluster, l.Object.Resource(), l.Reason)
	}
	return s
}

func sourceSummary(obj events.ObjectRef, name string, s *events.SourceState) string {
	var here []events.Endpoint
	for _, ep := range s.Endpoints {
		if ep.DNSName == name {
			here = append(here, ep)
		}
	}
	who := obj.Cluster + "/" + obj.Resource()
	switch {
	case len(s.Endpoints) == 0:
		return who + " is gone or wants nothing (tombstone)"
	case len(here) == 0:
		return who + " wants nothing at this name"
	}
	return who + " wants " + records(here)
}

func observedSummary(o *events.ObservedState) string {
	if len(o.Records) == 0 {
		return fmt.Sprintf("%s holds nothing at %s", o.Provider, o.DNSName)
	}
	return fmt.Sprintf("%s holds at %s: %s", o.Provider, o.DNSName, records(o.Records))
}

func resultSummary(r *events.Result) string {
	s := fmt.Sprintf("plan %s %s by %s (%d changes applied)", r.PlanID, r.Status, r.Provider, r.Applied)
	if r.Error != "" {
		s += ": " + r.Error
	}
	for _, f := range r.Failed {
		s += fmt.Sprintf("; %s failed: %s", f.Change, f.Error)
	}
	return s
}

func records(eps []events.Endpoint) string {
	var parts []string
	for _, ep := range eps {
		p := ep.RecordType + " " + strings.Join(ep.Targets, " ")
		if ep.SetIdentifier != "" {
			p += " [" + ep.SetIdentifier + "]"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}
