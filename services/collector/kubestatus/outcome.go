package kubestatus

import (
	"fmt"
	"strings"

	"github.com/zonestream/zonestream/events/routing"
)

// State is where one object's records at one DNS name stand.
type State uint8

const (
	// Pending: wanted, not yet held by the provider.
	Pending State = iota
	// Published: the provider holds every RRset the object wants there.
	Published
	// Rejected: the pipeline will not write them (another object won the
	// name, no provider manages a zone for it, another owner holds it,
	// the provider serving it refuses the object's namespace, two serve
	// it equally, or its quota is full).
	Rejected
	// Failed: the provider refused or failed the last change(s).
	Failed
	// Deleted: the object no longer wants the name and the provider no
	// longer holds what it had there.
	Deleted
	// Held: the planner's mass-delete guard holds the deletes of the
	// object's records in a zone (only ever an Event: held.go).
	Held
)

func (s State) String() string {
	return [...]string{"Pending", "Published", "Rejected", "Failed", "Deleted", "Held"}[s]
}

// Reasons, the short words a condition or an Event carries. The Event
// reasons follow ExternalDNS' (RecordReady, RecordDeleted, RecordError);
// RecordRejected is ours, for records the pipeline decided not to write.
const (
	ReasonProgrammed = "Programmed"
	ReasonPending    = "Pending"
	ReasonFailed     = "Failed"
	ReasonOutranked  = "Outranked"
	ReasonNoZone     = "NoZone"
	ReasonNotOwned   = "NotOwned"
	// The refusals of a name by the providers declared by DNSProvider
	// objects: routing's reasons, and the quota the planner enforces.
	ReasonNamespaceNotAllowed = string(routing.NotAllowed)
	ReasonProviderTie         = string(routing.Tie)
	ReasonOverQuota           = "OverQuota"

	EventRecordReady    = "RecordReady"
	EventRecordDeleted  = "RecordDeleted"
	EventRecordError    = "RecordError"
	EventRecordRejected = "RecordRejected"
	// EventDeleteHeld is ours: records the object no longer wants are
	// kept, their deletes held until an operator approves them.
	EventDeleteHeld = "DeleteHeld"
)

// Outcome is where one object's records at one name stand, and why.
type Outcome struct {
	State State
	// Reason is one of the Reason constants; Detail says it in words.
	Reason string
	Detail string
	// Failures counts the provider's consecutive failures at the name.
	Failures int
}

// Same reports whether two outcomes would say the same thing to a user.
func (o Outcome) Same(p Outcome) bool { return o == p }

// Describe is the outcome in one line about name.
func (o Outcome) Describe(name string) string {
	switch o.State {
	case Published:
		return name + " published"
	case Deleted:
		return name + " deleted"
	case Failed:
		return fmt.Sprintf("%s failed %s in a row: %s", name, times(o.Failures), o.Detail)
	case Rejected:
		return fmt.Sprintf("%s rejected (%s): %s", name, o.Reason, o.Detail)
	case Held:
		return fmt.Sprintf("zone %s: %s", name, o.Detail)
	}
	if o.Detail != "" {
		return name + " pending: " + o.Detail
	}
	return name + " pending"
}

func times(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

// EventOf is the Kubernetes Event an outcome becomes when an object's
// records at a name reach it: type (Normal, Warning), reason and action.
// Pending is no news: ok is false.
func EventOf(o Outcome) (warning bool, reason, action string, ok bool) {
	switch o.State {
	case Published:
		return false, EventRecordReady, "Published", true
	case Deleted:
		return false, EventRecordDeleted, "Deleted", true
	case Failed:
		return true, EventRecordError, "FailedSync", true
	case Rejected:
		return true, EventRecordRejected, o.Reason, true
	case Held:
		return true, EventDeleteHeld, "Held", true
	}
	return false, "", "", false
}

// Summary is an object's Ready condition from the outcomes at its names:
// status, reason and message. The worst name decides: Failed, then
// Rejected, then Pending; Ready only when every name is published.
func Summary(outcomes map[string]Outcome) (ready bool, reason, message string) {
	rank := map[State]int{Failed: 4, Rejected: 3, Pending: 2, Published: 1, Deleted: 0}
	worst := Outcome{State: Deleted}
	var lines []string
	for _, name := range sortedNames(outcomes) {
		o := outcomes[name]
		if o.State == Deleted {
			continue
		}
		if rank[o.State] > rank[worst.State] {
			worst = o
		}
		if o.State != Published {
			lines = append(lines, o.Describe(name))
		}
	}
	switch worst.State {
	case Deleted:
		return false, ReasonPending, "no record wanted by this object has been seen on the bus yet"
	case Published:
		return true, ReasonProgrammed, fmt.Sprintf("%d name(s) published", len(outcomes))
	case Pending:
		return false, ReasonPending, strings.Join(lines, "; ")
	case Failed:
		return false, ReasonFailed, strings.Join(lines, "; ")
	}
	return false, worst.Reason, strings.Join(lines, "; ")
}
