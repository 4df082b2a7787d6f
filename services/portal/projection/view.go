package projection

import (
	"time"
	"unique"

	"github.com/zonestream/zonestream/events"
)

// View is everything the portal knows about one DNS name.
type View struct {
	Name string `json:"name"`
	// Zone is the longest zone a provider manages that holds the name;
	// empty when none does.
	Zone     string `json:"zone,omitempty"`
	Provider string `json:"provider,omitempty"`
	// Providers are every provider the name goes to (events/routing):
	// kept only when more than Provider, and always in the copies Get
	// returns. Refused says why it goes to none, once zone lists are seen.
	Providers []string `json:"providers,omitempty"`
	Refused   *Refusal `json:"refused,omitempty"`

	Desired *Desired `json:"desired,omitempty"`
	// Observed is what each provider holds at the name.
	// Only the copies Get returns carry it: a view keeps the same in
	// observed, a slice, as a map per name cost ten times the bytes.
	Observed map[string]*Observed `json:"observed,omitempty"`
	observed holders
	Plan     *PlanRef   `json:"plan,omitempty"`
	Result   *ResultRef `json:"result,omitempty"`
	Check    *Check     `json:"check,omitempty"`
	// Held is set while the planner's mass-delete guard holds the
	// deletes of the name's records.
	Held *HeldMark `json:"held,omitempty"`

	Status Status `json:"status"`
	Reason string `json:"reason,omitempty"`
	// PlanFailures counts the plans for the name that failed in a row;
	// CheckFailures the DNS checks that did not get the wanted answer.
	PlanFailures  int `json:"planFailures,omitempty"`
	CheckFailures int `json:"checkFailures,omitempty"`
	// Changed is when anything about the name last changed.
	Changed time.Time `json:"changed"`
	// Version goes up with every change, so that a DNS check started
	// before one is not taken for the name as it is now.
	Version uint64 `json:"version"`
}

// Meta is where and when an event was stored, and what caused it.
type Meta struct {
	Subject   string    `json:"subject"`
	Seq       uint64    `json:"seq"`
	Time      time.Time `json:"time"`
	EventID   string    `json:"eventId,omitempty"`
	Causation string    `json:"causationId,omitempty"`
}

// MetaOf is the Meta of a received message. A causation is shared, one
// copy per process: a plan causes the observed states of all its names.
func MetaOf(r events.Received) Meta {
	m := Meta{Subject: r.Subject, Seq: r.Seq, Time: r.Time, EventID: r.EventID()}
	if c := r.Causation(); c != "" {
		m.Causation = unique.Make(c).Value()
	}
	return m
}

// Desired is the last desired state of the name.
type Desired struct {
	Meta
	// Endpoints are what is wanted. A view keeps only their record sets:
	// the endpoints stay on the bus, and are read from there when someone
	// looks at the name (the portal's detail).
	Endpoints     []events.Endpoint  `json:"endpoints"`
	Contributors  []events.ObjectRef `json:"contributors,omitempty"`
	Losers        []events.Loser     `json:"losers,omitempty"`
	LosersOmitted int                `json:"losersOmitted,omitempty"`
	sets          recordSets
}

// newDesired keeps d as a view does: without the subject, which Get
// puts back (events.DesiredSubject).
func newDesired(meta Meta, d *events.DesiredState) *Desired {
	meta.Subject = ""
	return &Desired{Meta: meta, Contributors: d.Contributors, Losers: d.Losers, LosersOmitted: d.LosersOmitted,
		sets: setsOf(d.Endpoints)}
}

// Observed is what one provider holds at the name.
type Observed struct {
	Meta
	Zone string `json:"zone"`
	// Records are what the provider holds. A view keeps only their record
	// sets and the owners their ownership records name; the records stay
	// on the bus, as the endpoints wanted do.
	Records []events.Endpoint       `json:"records"`
	sets    recordSets              // the records, ownership records left out
	owners  []unique.Handle[string] // the owners the ownership records name
}

// newObserved keeps what a provider holds as a view does: without the
// subject, which Get puts back (events.ObservedSubject).
func newObserved(meta Meta, zone string, records []events.Endpoint) *Observed {
	meta.Subject = ""
	o := &Observed{Meta: meta, Zone: zone}
	var plain []events.Endpoint
	for _, r := range records {
		owners := recordOwners(r)
		if len(owners) == 0 {
			plain = append(plain, r)
		}
		for _, owner := range owners {
			o.owners = append(o.owners, unique.Make(owner))
		}
	}
	o.sets = setsOf(plain)
	return o
}

// PlanRef is the last plan that touched the name, with only its changes
// to the name.
type PlanRef struct {
	Meta
	ID       string `json:"id"`
	Provider string `json:"provider"`
	Zone     string `json:"zone"`
	// Changes are the plan's changes to the name. Only the copies Get
	// returns carry them: a view keeps them packed, a third of the bytes,
	// read only when someone looks at the name.
	Changes []events.Change `json:"changes"`
	changes events.Packed[[]events.Change]
}

// unpacked is a copy of r with its changes decoded.
func (r *PlanRef) unpacked() *PlanRef {
	cp := *r
	cp.changes = nil
	if changes, err := r.changes.Unpack(); err == nil {
		cp.Changes = changes
	}
	return &cp
}

// ResultRef is what became of the last plan for the name.
type ResultRef struct {
	Meta
	PlanID   string              `json:"planId"`
	Provider string              `json:"provider"`
	Status   events.ResultStatus `json:"status"`
	// Error is the plan's error or the provider's error for this name.
	Error   string `json:"error,omitempty"`
	Applied int    `json:"applied"`
}

// Check is the last DNS check of the name.
type Check struct {
	Time    time.Time `json:"time"`
	Latency float64   `json:"latencySeconds"`
	// Answers maps each record type asked to the targets DNS answered.
	Answers map[string][]string `json:"answers"`
	// Error says why DNS did not answer; empty when it did.
	Error string `json:"error,omitempty"`
	// Version is the View.Version the check was made for.
	Version uint64 `json:"version"`
}

// Summary is the line of the list for one name.
type Summary struct {
	Name          string             `json:"name"`
	Zone          string             `json:"zone,omitempty"`
	Providers     []string           `json:"providers,omitempty"`
	Refused       *Refusal           `json:"refused,omitempty"`
	Status        Status             `json:"status"`
	Reason        string             `json:"reason,omitempty"`
	Records       []string           `json:"records,omitempty"`
	Objects       []events.ObjectRef `json:"objects,omitempty"`
	Failures      int                `json:"failures,omitempty"`
	Changed       time.Time          `json:"changed"`
	StatusSlug    string             `json:"statusSlug"`
	ObjectSummary string             `json:"objectSummary,omitempty"`
}
