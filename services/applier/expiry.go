package applier

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
)

// A plan is valid until its NotAfter: by then the planner has given up
// waiting for its result and may have planned the zone again from a newer
// state, so applying it late could undo what came after it (a Service
// deleted and created again while the provider was slow). Such a plan is
// dropped unapplied.

// expired reports whether plan is past its NotAfter at now.
func expired(plan *events.Plan, now time.Time) bool {
	return plan.NotAfterMillis != 0 && now.UnixMilli() > plan.NotAfterMillis
}

// dropUnapplied reports the plan with status and why, and acks it:
// nothing is applied (an expired plan, or a dry run's).
func (a *Applier) dropUnapplied(ctx context.Context, js jetstream.JetStream, msg jetstream.Msg, plan *events.Plan, zone, causation string,
	status events.ResultStatus, why string) {
	res := &events.Result{PlanID: plan.ID, Provider: a.name, Zone: zone, Status: status, Error: why}
	if _, _, err := events.Publish(ctx, js, events.ResultSubject(a.name, zone), res, causation); err != nil {
		a.log.Error("publishing the result of a plan dropped unapplied failed; the plan will be redelivered (and dropped again)",
			"plan", plan.ID, "status", status, "err", err)
		_ = msg.NakWithDelay(2 * time.Second)
		return
	}
	a.ack(ctx, js, msg)
	plansTotal.WithLabelValues(a.name, string(status)).Inc()
	a.log.Warn("plan dropped unapplied", "plan", plan.ID, "zone", zone, "changes", len(plan.Changes), "status", status, "why", why)
}
