package planner

import (
	"github.com/zonestream/zonestream/events"
)

// A plan is one NATS message, so it must fit in the server's max_payload
// (1 MiB by default): a plan that does not can never be published. Plans
// are bounded in bytes as well as in changes, with room to spare for
// headers and for the plan's own fields.

// defaultMaxPayload is NATS' default max_payload, for a connection that
// does not say.
const defaultMaxPayload = 1 << 20

// planBudget is the most bytes of changes one plan carries: half the
// connection's max payload.
func (r *run) planBudget() int {
	limit := int64(defaultMaxPayload)
	if r.js != nil && r.js.Conn() != nil {
		if mp := r.js.Conn().MaxPayload(); mp > 0 {
			limit = mp
		}
	}
	return int(limit / 2)
}

// unitBytes is what one name's changes add to a plan, encoded: the
// changes, and the name's entry in the plan's observed revisions.
func unitBytes(name string, unit []events.Change) int {
	n, err := events.Size(&events.Plan{Changes: unit})
	if err != nil {
		return 0 // cannot happen for changes; Publish reports it if it does
	}
	return n + len(name) + 16
}
