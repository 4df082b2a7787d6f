package planner

import (
	"fmt"
	"strings"
)

// Some wanted records cannot be written safely, and are refused before
// anything is written: counted (zonestream_planner_refused_total{reason}),
// logged, and nothing else at that name and record type is touched.

// Reasons a record is refused.
const (
	// refusedName: the record's name, or the name of its ownership record
	// (a valid 60-octet label "x" becomes "cname-x": 66), is longer than
	// DNS allows. A record whose ownership record cannot be written would
	// be owned by nobody: never created, never cleaned up.
	refusedName = "name-too-long"
	// refusedSize: a name's changes alone do not fit in one plan message.
	refusedSize = "plan-too-large"
	// refusedRegistryString: a user's TXT holds a string that reads as an
	// ownership record: written, it would claim (or disown) records.
	refusedRegistryString = "registry-string"
)

// refusal is one record (or name) the planner will not plan.
type refusal struct {
	reason string
	detail string
}

// DNS limits (RFC 1035 2.3.4), on names without the trailing dot.
const (
	maxLabel = 63
	maxName  = 253
)

// nameProblem says why name cannot be a DNS name on the wire; "" when it can.
func nameProblem(name string) string {
	if len(name) > maxName {
		return fmt.Sprintf("%s is %d octets long, DNS allows %d", name, len(name), maxName)
	}
	for _, l := range strings.Split(name, ".") {
		if len(l) > maxLabel {
			return fmt.Sprintf("label %q of %s is %d octets long, DNS allows %d", l, name, len(l), maxLabel)
		}
	}
	return ""
}
