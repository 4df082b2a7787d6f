package events

import (
	"cmp"
	"fmt"
	"slices"
)

// Event is anything published on the bus. Schema names the payload so that
// a reader (or `nats stream view`) knows what it holds without our code.
type Event interface {
	Schema() Schema
	// canonicalize puts the event in the one form its content hash is taken
	// of: every slice sorted, every name normalized.
	canonicalize()
	// subject is the one subject the event may be published on: a reader
	// takes an event's identity from its subject and rejects a payload
	// that claims another (Decode).
	subject() string
}

// Tombstoner is an event that can say "nothing here any more". A tombstone
// replaces its subject's last state (one message per subject) and expires
// (TombstoneTTL, MarkTombstoneTTL), so that the state streams do not grow with everything that
// ever existed: once expired, the subject is empty, which every reader
// takes exactly as it takes the tombstone.
type Tombstoner interface {
	IsTombstone() bool
}

// Schema names an event's payload and its version.
type Schema struct {
	Name    string
	Version int
}

func (s Schema) String() string { return fmt.Sprintf("zonestream.%s/v%d", s.Name, s.Version) }

// ObjectRef names the Kubernetes object an endpoint came from.
type ObjectRef struct {
	Cluster   string `msgpack:"cluster" json:"cluster"`
	Source    string `msgpack:"source" json:"source"`
	Namespace string `msgpack:"namespace,omitempty" json:"namespace,omitempty"`
	Name      string `msgpack:"name" json:"name"`
}

// Resource is the ExternalDNS "resource" label of the object: kind/namespace/name.
func (o ObjectRef) Resource() string {
	return fmt.Sprintf("%s/%s/%s", o.Source, o.Namespace, o.Name)
}

// Subject is the sources-stream subject the object is published under.
func (o ObjectRef) Subject() string { return SourceSubject(o.Cluster, o.Source, o.Namespace, o.Name) }

// CompareRefs orders objects by cluster, source, namespace, name.
func CompareRefs(a, b ObjectRef) int {
	return cmp.Or(cmp.Compare(a.Cluster, b.Cluster), cmp.Compare(a.Source, b.Source),
		cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}

// SourceState is the complete set of endpoints one Kubernetes object wants
// now. No endpoints is a tombstone: the object is gone or wants nothing.
type SourceState struct {
	Object    ObjectRef  `msgpack:"object" json:"object"`
	Endpoints []Endpoint `msgpack:"endpoints" json:"endpoints"`
}

func (*SourceState) Schema() Schema      { return Schema{"source", 1} }
func (s *SourceState) canonicalize()     { SortEndpoints(s.Endpoints) }
func (s *SourceState) subject() string   { return s.Object.Subject() }
func (s *SourceState) IsTombstone() bool { return len(s.Endpoints) == 0 }

// DesiredState is everything wanted at one DNS name after priority and
// merge, with where it came from.
type DesiredState struct {
	DNSName   string     `msgpack:"dnsName" json:"dnsName"`
	Endpoints []Endpoint `msgpack:"endpoints" json:"endpoints"`
	// Contributors are the objects whose endpoints are in Endpoints.
	Contributors []ObjectRef `msgpack:"contributors,omitempty" json:"contributors,omitempty"`
	// Losers are objects that wanted this name and were outranked, at most
	// MaxLosers of them; LosersOmitted counts the rest, so that a name wanted
	// by thousands of objects still fits in one message.
	Losers        []Loser `msgpack:"losers,omitempty" json:"losers,omitempty"`
	LosersOmitted int     `msgpack:"losersOmitted,omitempty" json:"losersOmitted,omitempty"`
	// Holders says which objects each RRset's records come from (the wire
	// name stays "owners"). Dedup reads it back at start, so that the object
	// holding a record keeps it across restarts.
	Holders []RRsetHolder `msgpack:"owners,omitempty" json:"owners,omitempty"`
}

// MaxLosers is the most losers a desired state lists.
const MaxLosers = 100

// RRsetHolder names the objects an RRset at a name comes from: one object,
// or one per cluster when clusters are merged. (Not an owner: that word is
// the registry's TXT owner id.)
type RRsetHolder struct {
	RecordType    string      `msgpack:"recordType" json:"recordType"`
	SetIdentifier string      `msgpack:"setIdentifier,omitempty" json:"setIdentifier,omitempty"`
	Objects       []ObjectRef `msgpack:"objects" json:"objects"`
}

// Loser is an object whose endpoints at a name lost, and why.
type Loser struct {
	Object ObjectRef `msgpack:"object" json:"object"`
	Reason string    `msgpack:"reason" json:"reason"`
}

func (*DesiredState) Schema() Schema    { return Schema{"desired", 1} }
func (d *DesiredState) subject() string { return DesiredSubject(d.DNSName) }

// IsTombstone: nothing is wanted at the name and nobody asked for it.
func (d *DesiredState) IsTombstone() bool {
	return len(d.Endpoints) == 0 && len(d.Losers) == 0 && len(d.Contributors) == 0
}

func (d *DesiredState) canonicalize() {
	d.DNSName = NormalizeName(d.DNSName)
	SortEndpoints(d.Endpoints)
	slices.SortFunc(d.Contributors, CompareRefs)
	slices.SortFunc(d.Losers, func(a, b Loser) int {
		return cmp.Or(CompareRefs(a.Object, b.Object), cmp.Compare(a.Reason, b.Reason))
	})
	for i := range d.Holders {
		slices.SortFunc(d.Holders[i].Objects, CompareRefs)
	}
	slices.SortFunc(d.Holders, func(a, b RRsetHolder) int {
		return cmp.Or(cmp.Compare(a.RecordType, b.RecordType), cmp.Compare(a.SetIdentifier, b.SetIdentifier))
	})
}

// ObservedState is every record a provider really holds at one name,
// ownership TXT records included. No records: the name is empty.
type ObservedState struct {
	Provider string     `msgpack:"provider" json:"provider"`
	Zone     string     `msgpack:"zone" json:"zone"`
	DNSName  string     `msgpack:"dnsName" json:"dnsName"`
	Records  []Endpoint `msgpack:"records" json:"records"`
}

func (*ObservedState) Schema() Schema      { return Schema{"observed", 1} }
func (o *ObservedState) subject() string   { return ObservedSubject(o.Provider, o.DNSName) }
func (o *ObservedState) IsTombstone() bool { return len(o.Records) == 0 }
func (o *ObservedState) canonicalize() {
	o.DNSName = NormalizeName(o.DNSName)
	o.Zone = NormalizeName(o.Zone)
	SortEndpoints(o.Records)
}

// ZoneList is the set of zones a provider manages. An applier publishes it
// only once it has published what every one of those zones holds, so a
// planner that sees a zone also sees its records.
type ZoneList struct {
	Provider string   `msgpack:"provider" json:"provider"`
	Zones    []string `msgpack:"zones" json:"zones"`
	// Adjusts says the provider adjusts desired records before they are
	// planned: the planner asks its applier (adjust.go).
	Adjusts bool `msgpack:"adjusts,omitempty" json:"adjusts,omitempty"`
	// Scope is set for a provider declared by a DNSProvider object: what
	// it may serve, and for whom (scope.go). Nil: declared by flags.
	Scope *ProviderScope `msgpack:"scope,omitempty" json:"scope,omitempty"`
}

func (*ZoneList) Schema() Schema    { return Schema{"zones", 1} }
func (z *ZoneList) subject() string { return ZonesSubject(z.Provider) }
func (z *ZoneList) canonicalize() {
	for i := range z.Zones {
		z.Zones[i] = NormalizeName(z.Zones[i])
	}
	z.Zones = sortedSet(z.Zones)
	if z.Scope != nil {
		z.Scope.canonicalize()
	}
}

// Plan is a batch of RRset changes for one zone, applied as one unit where
// the provider allows it.
type Plan struct {
	ID       string   `msgpack:"id" json:"id"`
	Provider string   `msgpack:"provider" json:"provider"`
	Zone     string   `msgpack:"zone" json:"zone"`
	Changes  []Change `msgpack:"changes" json:"changes"`
	// ObservedRevisions maps each name the plan touches to the sequence, in
	// the observed stream, of the state the plan was computed from.
	ObservedRevisions map[string]uint64 `msgpack:"observedRevisions,omitempty" json:"observedRevisions,omitempty"`
	// NotAfterMillis is when the plan stops being valid (Unix
	// milliseconds; 0: never): by then the planner has given up waiting for
	// its result and may have planned the zone again, so an applier that
	// gets the plan later drops it instead of applying it.
	NotAfterMillis int64 `msgpack:"notAfterMillis,omitempty" json:"notAfterMillis,omitempty"`
	// DryRun marks a plan of a --dry-run planner: published to be seen
	// (zonestream plans, the portal), never applied.
	DryRun bool `msgpack:"dryRun,omitempty" json:"dryRun,omitempty"`
}

func (*Plan) Schema() Schema    { return Schema{"plan", 1} }
func (p *Plan) canonicalize()   { p.Zone = NormalizeName(p.Zone) }
func (p *Plan) subject() string { return PlanSubject(p.Provider, p.Zone) }

// Change replaces one RRset. Old is what the planner saw (nil: the RRset must
// not exist), New what it should become (nil: delete). An applier applies a
// change only while the provider still holds Old, so a plan computed from
// stale observations changes nothing.
type Change struct {
	Old *Endpoint `msgpack:"old,omitempty" json:"old,omitempty"`
	New *Endpoint `msgpack:"new,omitempty" json:"new,omitempty"`
}

// Action says what a change does, for logs and metrics.
func (c Change) Action() string {
	switch {
	case c.Old == nil:
		return "create"
	case c.New == nil:
		return "delete"
	}
	return "update"
}

// Key is the RRset the change touches.
func (c Change) Key() RRsetKey {
	if c.New != nil {
		return c.New.Key()
	}
	return c.Old.Key()
}

func (c Change) String() string {
	k := c.Key()
	return fmt.Sprintf("%s %s %s", c.Action(), k.DNSName, k.RecordType)
}

// ResultStatus is the outcome of a plan.
type ResultStatus string

const (
	ResultApplied ResultStatus = "applied"
	ResultPartial ResultStatus = "partial"
	ResultStale   ResultStatus = "stale"
	ResultFailed  ResultStatus = "failed"
	// ResultExpired: the plan reached the applier after its NotAfter and
	// was dropped unapplied; the planner has planned the zone again.
	ResultExpired ResultStatus = "expired"
	// ResultDryRun: a plan of a --dry-run planner reached an applier
	// that applies; it was dropped unapplied.
	ResultDryRun ResultStatus = "dry-run"
)

// Result reports what became of a plan.
type Result struct {
	PlanID   string         `msgpack:"planId" json:"planId"`
	Provider string         `msgpack:"provider" json:"provider"`
	Zone     string         `msgpack:"zone" json:"zone"`
	Status   ResultStatus   `msgpack:"status" json:"status"`
	Error    string         `msgpack:"error,omitempty" json:"error,omitempty"`
	Failed   []FailedChange `msgpack:"failed,omitempty" json:"failed,omitempty"`
	Applied  int            `msgpack:"applied" json:"applied"`
	// ObservedSeq is the observed stream's last sequence when the applier
	// read back what the provider holds after the plan. With Observed, it
	// covers what was stored of the plan's names before (the states of
	// other names that earlier results carried may still be storing);
	// without, it covers those of the plan's names too. A planner that
	// has read that far, and holds Observed, sees the plan's effect.
	ObservedSeq uint64 `msgpack:"observedSeq" json:"observedSeq"`
	// Observed are the observed states the plan changed (tombstones
	// included), read back after it. The applier stores each on the
	// observed stream right after the result, so that a planner can plan
	// the zone again without waiting for those stores. Empty when they
	// did not fit in one message: they were then stored before the result.
	Observed []ObservedState `msgpack:"observed,omitempty" json:"observed,omitempty"`
}

// FailedChange is a change the provider rejected, and why.
type FailedChange struct {
	Change Change `msgpack:"change" json:"change"`
	Error  string `msgpack:"error" json:"error"`
}

func (*Result) Schema() Schema    { return Schema{"result", 1} }
func (r *Result) subject() string { return ResultSubject(r.Provider, r.Zone) }

func (r *Result) canonicalize() {
	for i := range r.Observed {
		r.Observed[i].canonicalize()
	}
}
