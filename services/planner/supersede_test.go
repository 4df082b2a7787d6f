package planner

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
)

func queuedPlans(t *testing.T, js jetstream.JetStream) uint64 {
	t.Helper()
	st, err := js.Stream(context.Background(), events.StreamPlans)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// TestSupersededPlanIsNeverApplied: a delete planned while the applier is
// away, for a name that is wanted again before the plan got a result, is
// withdrawn from the queue when the planner gives up on it: an applier
// coming back never applies it (and would drop it by its NotAfter).
func TestSupersededPlanIsNeverApplied(t *testing.T) {
	nc, js := startBus(t)
	www := "www." + zone
	held(t, js, rr(www, "A", 300, "192.0.2.1"), rr("a-"+www, "TXT", 300, owned("me", "service/default/web")))
	zones(t, js, zone)
	sub := planSub(t, nc)
	runPlanner(t, js, Config{PlanTimeout: time.Second})
	publishComplete(t, js)

	del := nextPlan(t, sub)
	if got := planLines(del); !slices.Equal(got, []string{"delete A www", "delete TXT a-www"}) {
		t.Fatalf("first plan: %v", got)
	}
	if del.NotAfterMillis == 0 {
		t.Fatal("the plan carries no NotAfter")
	}
	// A plain subscriber may see the plan before the stream has stored it.
	waitUntil(t, "the delete queued", func() bool { return queuedPlans(t, js) == 1 })
	wanted(t, js, rr(www, "A", 0, "192.0.2.1")) // the Service is back, the provider still slow
	waitUntil(t, "the superseded delete withdrawn from the queue", func() bool { return queuedPlans(t, js) == 0 })
}

// TestSupersededPlansDoNotPileUp: while the applier is down, the planner
// gives up on its plan every --plan-timeout and plans the zone again; the
// queue holds one plan for the zone, not one per timeout.
func TestSupersededPlansDoNotPileUp(t *testing.T) {
	nc, js := startBus(t)
	www := "www." + zone
	zones(t, js, zone)
	sub := planSub(t, nc)
	runPlanner(t, js, Config{PlanTimeout: time.Second})
	wanted(t, js, rr(www, "A", 0, "192.0.2.1"))
	for range 3 {
		nextPlan(t, sub)
	}
	// A plain subscriber may see the plan before the stream has stored it.
	waitUntil(t, "the last plan queued", func() bool { return queuedPlans(t, js) > 0 })
	if n := queuedPlans(t, js); n != 1 {
		t.Fatalf("%d plans queued for one zone after three timeouts, want 1", n)
	}
}

// TestPlansOfAnEarlierRunAreDropped: plans queued by a planner that is
// gone are purged when the next one starts: nobody waits for their
// results, and they were computed from a state that may be long past.
func TestPlansOfAnEarlierRunAreDropped(t *testing.T) {
	_, js := startBus(t)
	www := "www." + zone
	old := rr(www, "A", 300, "192.0.2.1")
	publish(t, js, events.PlanSubject("p", zone), &events.Plan{ID: "earlier", Provider: "p", Zone: zone,
		Changes: []events.Change{{Old: &old}}})
	runPlanner(t, js, Config{})
	if n := queuedPlans(t, js); n != 0 {
		t.Fatalf("%d plans of an earlier run still queued", n)
	}
}
