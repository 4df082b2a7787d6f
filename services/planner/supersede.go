package planner

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
)

// A plan that got no result within --plan-timeout is superseded: the
// planner plans its zone again from what it knows now. The old plan must
// then never be applied, or a change made since (a Service deleted and
// created again while the provider was slow) is undone by it. So a zone
// has at most one generation of plans live (the plans of one planning
// pass; a pass may need several plans to stay within the size limits):
//
//   - a plan carries NotAfter (publish time + --plan-timeout): an applier
//     that gets it later drops it unapplied (result "expired");
//   - when the planner gives up on a zone's plans, it deletes the ones
//     still queued from ZS_PLANS before planning the zone again, so
//     plans do not pile up while the applier is down;
//   - at start it purges the plans queued by earlier runs: the run that
//     computed them is gone and their results would go unheard.

// withdraw deletes a zone's outstanding plans from the plans stream. A plan
// already taken (applied and acked) is no longer there, which is fine; one
// being applied right now is protected by its preconditions and NotAfter.
func (r *run) withdraw(ctx context.Context, k zoneKey, f *flight) {
	if r.js == nil || len(f.plans) == 0 {
		return
	}
	st, err := r.js.Stream(ctx, events.StreamPlans)
	if err != nil {
		r.log.Warn("cannot withdraw superseded plans; their NotAfter keeps them from being applied", "zone", k.zone, "err", err)
		return
	}
	for id, p := range f.plans {
		if p.seq == 0 {
			continue
		}
		err := st.DeleteMsg(ctx, p.seq)
		switch {
		case err == nil:
			plansWithdrawn.WithLabelValues(k.provider).Inc()
			r.log.Info("superseded plan withdrawn from the queue", "provider", k.provider, "zone", k.zone, "plan", id, "seq", p.seq)
		case errors.Is(err, jetstream.ErrMsgNotFound):
			// Taken by the applier already.
		default:
			r.log.Warn("withdrawing a superseded plan failed; its NotAfter keeps it from being applied",
				"zone", k.zone, "plan", id, "err", err)
		}
	}
}

// purgeEarlierPlans drops every plan queued before this run started.
func purgeEarlierPlans(ctx context.Context, js jetstream.JetStream) (uint64, error) {
	st, err := js.Stream(ctx, events.StreamPlans)
	if err != nil {
		return 0, fmt.Errorf("plans stream: %w", err)
	}
	n := st.CachedInfo().State.Msgs
	if err := st.Purge(ctx); err != nil {
		return 0, fmt.Errorf("purge plans of earlier runs: %w", err)
	}
	return n, nil
}

// isTransient says whether a JetStream request failed for want of an
// answer (a timeout, no responder), as while a stream elects its leader.
func isTransient(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse)
}
