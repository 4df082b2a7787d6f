package planner

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/zonestream/zonestream/events"
)

// TestPassGoesOutAFewPlansAtATime: a pass of many plans queues livePlans
// of them; each applied result lets the next one out, with a NotAfter
// counted from then. A result that is not applied takes the rest of the
// pass back to dirty, and the zone stays busy until its live plans are
// answered.
func TestPassGoesOutAFewPlansAtATime(t *testing.T) {
	nc, js := startBus(t)
	ctx := context.Background()
	const names = 3 * livePlans
	// One name (its A and ownership TXT) per plan.
	s := freshRun(t, js, Config{BatchChangeSize: 2, PlanTimeout: time.Hour})
	feed(t, s, events.DesiredCompleteSubject(), &events.DesiredComplete{Complete: true, Clusters: []string{"c1"}})
	for i := range names {
		name := fmt.Sprintf("n%d.%s", i, zone)
		feed(t, s, events.DesiredSubject(name), &events.DesiredState{DNSName: name,
			Endpoints: []events.Endpoint{rr(name, "A", 0, "192.0.2.1")}})
	}
	sub := planSub(t, nc)
	k := zoneKey{"p", zone}
	s.plan(ctx)
	f := s.flights[k]
	queued := receivePlans(t, sub, livePlans)
	if len(f.plans) != livePlans || len(f.unsent) != names-livePlans {
		t.Fatalf("after the pass: %d plans out, %d unsent; want %d and %d", len(f.plans), len(f.unsent), livePlans, names-livePlans)
	}
	if len(s.dirty) != 0 {
		t.Fatalf("the names of a pass' unsent plans are its own, not dirty: %d dirty", len(s.dirty))
	}

	result := func(id string, status events.ResultStatus) {
		t.Helper()
		feed(t, s, events.ResultSubject(k.provider, k.zone), &events.Result{PlanID: id, Provider: k.provider, Zone: k.zone, Status: status})
	}
	before := time.Now()
	result(queued[0].ID, events.ResultApplied)
	next := receivePlans(t, sub, 1)[0]
	if len(f.plans) != livePlans {
		t.Fatalf("an applied plan must let the next one out: %d out", len(f.plans))
	}
	if at := time.UnixMilli(next.NotAfterMillis); at.Before(before.Add(time.Hour - time.Second)) {
		t.Fatalf("the next plan's NotAfter %s must count from when it went out (%s)", at, before)
	}

	result(queued[1].ID, events.ResultFailed)
	if len(f.unsent) != 0 {
		t.Fatalf("a failed plan must drop the rest of the pass: %d unsent", len(f.unsent))
	}
	// Dirty: the unsent plans' names, and those of the two answered plans
	// (looked at again once their observed state is read).
	if want := names - livePlans - 1 + 2; len(s.dirty) != want {
		t.Fatalf("the unsent plans' names must be dirty again: %d dirty, want %d", len(s.dirty), want)
	}
	if msg, err := sub.NextMsg(200 * time.Millisecond); err == nil {
		t.Fatalf("a plan went out after a failure: %s", msg.Subject)
	}
	if !s.busy(k, time.Now()) {
		t.Fatal("the zone must stay busy while plans of its pass are out")
	}
}

// receivePlans reads n plans from sub.
func receivePlans(t *testing.T, sub *nats.Subscription, n int) []events.Plan {
	t.Helper()
	var out []events.Plan
	for range n {
		msg, err := sub.NextMsg(5 * time.Second)
		if err != nil {
			t.Fatalf("plan %d of %d: %v", len(out)+1, n, err)
		}
		var p events.Plan
		if err := events.Unmarshal(msg.Header, msg.Data, &p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	if msg, err := sub.NextMsg(200 * time.Millisecond); err == nil {
		t.Fatalf("more than %d plans went out: %s", n, msg.Subject)
	}
	return out
}
