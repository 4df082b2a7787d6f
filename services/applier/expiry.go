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

// dropExpired reports the plan as expired and acks it: nothing is applied.
func (a *Applier) dropExpired(ctx context.Context, js jetstream.JetStream, msg jetstream.Msg, plan *events.Plan, zone, causation string) {
	late := time.Since(time.UnixMilli(plan.NotAfterMillis)).Round(time.Millisecond)
	res := &events.Result{PlanID: plan.ID, Provider: a.name, Zone: zone, Status: events.ResultExpired,
		Error: "plan reached the applier " + late.String() + " after its NotAfter; dropped unapplied"}
	if _, _, err := events.Publish(ctx, js, events.ResultSubject(a.name, zone), res, causation); err != nil {
		a.log.Error("publishing an expired plan's result failed; the plan will be redelivered (and dropped again)", "plan", plan.ID, "err", err)
		_ = msg.NakWithDelay(2 * time.Second)
		return
	}
	a.ack(ctx, msg)
	plansTotal.WithLabelValues(a.name, string(events.ResultExpired)).Inc()
	a.log.Warn("plan expired before it could be applied; dropped (the planner has planned the zone again)",
		"plan", plan.ID, "zone", zone, "changes", len(plan.Changes), "late", late)
}
