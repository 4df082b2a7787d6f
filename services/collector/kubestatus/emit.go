package kubestatus

import (
	"fmt"
	"slices"
	"strings"
)

// EventReasons are the Event reasons an Event filter may name: ExternalDNS'
// three (its --events-emit), then zonestream's own warnings.
var EventReasons = []string{EventRecordReady, EventRecordDeleted, EventRecordError, EventRecordRejected, EventDeleteHeld}

// CheckEventReasons returns an error naming the first reason that is not
// one of EventReasons.
func CheckEventReasons(reasons []string) error {
	for _, r := range reasons {
		if !slices.Contains(EventReasons, r) {
			return fmt.Errorf("unknown Event reason %q: want one of %s", r, strings.Join(EventReasons, ", "))
		}
	}
	return nil
}

// WithEvents writes only the Events of these reasons (EventReasons), as
// ExternalDNS' --events-emit does. Without it no Event is written: an
// Event per changed record costs an API write per change, which a user
// asks for.
func WithEvents(reasons ...string) Option {
	return func(s *Status) { s.emit = slices.Clone(reasons) }
}

// emits says whether an outcome's Event is one asked for.
func (s *Status) emits(o Outcome) bool {
	_, reason, _, ok := EventOf(o)
	return ok && slices.Contains(s.emit, reason)
}
