package events

import (
	"fmt"
	"time"
)

// HeldDeletes are the deletes of one zone that the planner's mass-delete
// guard holds back: more owned records would go at once than its limits
// allow, the mark of a wrong filter, namespace or kubeconfig rather than of
// users removing what they no longer want. Nothing in Changes reaches the
// applier until an operator approves ID (Approval) or a fresh plan of the
// zone deletes no more than the limits allow. No changes: nothing held.
type HeldDeletes struct {
	// ID names the hold for an approval: the content hash of the held
	// changes, so the same deletes replanned by a fresh planner keep it,
	// and any other deletes get another one.
	ID       string `msgpack:"id,omitempty" json:"id,omitempty"`
	Provider string `msgpack:"provider" json:"provider"`
	Zone     string `msgpack:"zone" json:"zone"`
	// Changes are the held changes: each held name's deletes of its
	// records and their ownership records, by name; at most what fits in
	// one message, ChangesOmitted counts the rest.
	Changes        []Change `msgpack:"changes,omitempty" json:"changes,omitempty"`
	ChangesOmitted int      `msgpack:"changesOmitted,omitempty" json:"changesOmitted,omitempty"`
	// Deletes counts the owned record sets Changes delete (an ownership
	// record goes with its record, not on its own); Owned is how many the
	// zone held when they were held.
	Deletes int `msgpack:"deletes,omitempty" json:"deletes,omitempty"`
	Owned   int `msgpack:"owned,omitempty" json:"owned,omitempty"`
	// Recent counts the owned record sets planned to go in the zone
	// within the guard's window (WindowMillis) before the deletes were
	// held: a wipe that arrived in pieces is judged as one, and Owned
	// counts them too.
	Recent       int   `msgpack:"recent,omitempty" json:"recent,omitempty"`
	WindowMillis int64 `msgpack:"windowMillis,omitempty" json:"windowMillis,omitempty"`
	// MaxDeletes and MaxDeletesPercent are the limits the deletes exceed.
	MaxDeletes        int `msgpack:"maxDeletes,omitempty" json:"maxDeletes,omitempty"`
	MaxDeletesPercent int `msgpack:"maxDeletesPercent,omitempty" json:"maxDeletesPercent,omitempty"`
}

// Summary says what is held and against which limits, in the words
// `zonestream plans`, Events and status all use.
func (h *HeldDeletes) Summary() string {
	s := fmt.Sprintf("%d deletes of %d owned record sets", h.Deletes, h.Owned)
	if h.Recent > 0 {
		s += fmt.Sprintf(", after %d deleted within %s", h.Recent, time.Duration(h.WindowMillis)*time.Millisecond)
	}
	return s + fmt.Sprintf(" (limits: more than %d and more than %d%%)", h.MaxDeletes, h.MaxDeletesPercent)
}

func (*HeldDeletes) Schema() Schema      { return Schema{"held", 1} }
func (h *HeldDeletes) subject() string   { return HeldSubject(h.Provider, h.Zone) }
func (h *HeldDeletes) IsTombstone() bool { return len(h.Changes) == 0 && h.ChangesOmitted == 0 }

// canonicalize leaves the changes in the planner's order (by name, each
// name's in the order they would be applied): deterministic already.
func (h *HeldDeletes) canonicalize() { h.Zone = NormalizeName(h.Zone) }

// HeldID is the ID of a hold of changes in a zone: all of them, listed
// in its message or not.
func HeldID(provider, zone string, changes []Change) string {
	id, err := HashOf(&HeldDeletes{Provider: provider, Zone: zone, Changes: changes})
	if err != nil {
		return ""
	}
	return id
}

// Approval is an operator's go-ahead for the deletes held under HeldID:
// the planner then lets through those of them that are still what it
// would plan now, and nothing else.
type Approval struct {
	Provider string `msgpack:"provider" json:"provider"`
	Zone     string `msgpack:"zone" json:"zone"`
	HeldID   string `msgpack:"heldId" json:"heldId"`
	// By names the operator who approved, for the record.
	By string `msgpack:"by" json:"by"`
}

func (*Approval) Schema() Schema    { return Schema{"approval", 1} }
func (a *Approval) subject() string { return ApprovalSubject(a.Provider, a.Zone) }
func (a *Approval) canonicalize()   { a.Zone = NormalizeName(a.Zone) }
