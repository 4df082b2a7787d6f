package projection

// Status is what a name's records are like right now, at a glance.
type Status string

const (
	// InSync: the provider holds what is wanted, and DNS answers it.
	InSync Status = "in sync"
	// Pending: a change is on its way (planned, being applied, or waiting
	// for DNS to answer it) and still within the grace period.
	Pending Status = "pending"
	// NotInSync: past the grace period, the provider or DNS still differs
	// from what is wanted.
	NotInSync Status = "not in sync"
	// NotAnswering: DNS did not answer the name (timeout, SERVFAIL, REFUSED).
	NotAnswering Status = "not answering"
	// Failed: the provider rejected the last plan for the name.
	Failed Status = "failed"
	// NotManaged: the name is wanted but zonestream leaves it alone: no
	// provider manages a zone for it, or someone else owns its records.
	NotManaged Status = "not managed"
	// DeleteHeld: nothing wants the records any more, but the planner's
	// mass-delete guard holds their delete until an operator approves it.
	DeleteHeld Status = "delete held"
)

// Statuses lists every status, in the order the page shows them.
var Statuses = []Status{InSync, Pending, NotInSync, NotAnswering, Failed, DeleteHeld, NotManaged}

// Slug is the status as a CSS class and URL value: "not-in-sync".
func (s Status) Slug() string {
	b := []byte(s)
	for i, c := range b {
		if c == ' ' {
			b[i] = '-'
		}
	}
	return string(b)
}

// ParseStatus accepts a status or its slug.
func ParseStatus(s string) (Status, bool) {
	for _, st := range Statuses {
		if string(st) == s || st.Slug() == s {
			return st, true
		}
	}
	return "", false
}
