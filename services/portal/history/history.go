// Package history reads what happened to one DNS name from the streams, by
// subject, never by scanning a stream: the objects that asked for it, its
// desired states, the plans and results that wrote it, and what the
// providers held after, newest first, linked by their causation ids.
package history

import (
	"cmp"
	"slices"
	"strconv"
	"time"
)

// Kind says which stage's event an entry is.
type Kind string

const (
	KindSource   Kind = "source"
	KindDesired  Kind = "desired"
	KindPlan     Kind = "plan"
	KindResult   Kind = "result"
	KindObserved Kind = "observed"
)

// Entry is one event that touched the name.
type Entry struct {
	Kind      Kind      `json:"kind"`
	Subject   string    `json:"subject"`
	Seq       uint64    `json:"seq"`
	Time      time.Time `json:"time"`
	EventID   string    `json:"eventId,omitempty"`
	Causation string    `json:"causationId,omitempty"`
	// Summary says what the event says about the name, in one line.
	Summary string `json:"summary"`
	// Cause is the summary of the entry's cause when it is in the
	// history ("source service/default/web"), or the plan that caused
	// it when only the plan's result is.
	Cause string `json:"cause,omitempty"`
	// PlanID is the plan a plan or result entry is about.
	PlanID string `json:"planId,omitempty"`
	// Event is the decoded event.
	Event any `json:"event,omitempty"`
}

// Label names the entry in a causation chain: "desired #42".
func (e Entry) Label() string {
	if e.Kind == KindPlan && e.PlanID != "" {
		return "plan " + e.PlanID
	}
	return string(e.Kind) + " #" + strconv.FormatUint(e.Seq, 10)
}

// link fills in every entry's Cause and orders the entries newest first.
func link(entries []Entry) []Entry {
	byID := map[string]int{}
	planOf := map[string]string{}
	for i, e := range entries {
		if e.EventID != "" {
			byID[e.EventID] = i
		}
		if e.Kind == KindResult && e.Causation != "" {
			planOf[e.Causation] = e.PlanID
		}
	}
	for i, e := range entries {
		if e.Causation == "" {
			continue
		}
		if j, ok := byID[e.Causation]; ok {
			entries[i].Cause = entries[j].Label()
		} else if id, ok := planOf[e.Causation]; ok {
			entries[i].Cause = "plan " + id
		}
	}
	slices.SortStableFunc(entries, func(a, b Entry) int {
		return cmp.Or(b.Time.Compare(a.Time), cmp.Compare(rank(b.Kind), rank(a.Kind)), cmp.Compare(b.Seq, a.Seq))
	})
	return entries
}

// rank orders events of one instant along the pipeline.
func rank(k Kind) int {
	return slices.Index([]Kind{KindSource, KindDesired, KindPlan, KindObserved, KindResult}, k)
}
