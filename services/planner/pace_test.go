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
	s, sub, k, queued := passOfManyPlans(t)
	f := s.flights[k]
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
	if want := passNames - livePlans - 1 + 2; len(s.dirty) != want {
		t.Fatalf("the unsent plans' names must be dirty again: %d dirty, want %d", len(s.dirty), want)
	}
	if msg, err := sub.NextMsg(200 * time.Millisecond); err == nil {
		t.Fatalf("a plan went out after a failure: %s", msg.Subject)
	}
	if !s.busy(k, time.Now()) {
		t.Fatal("the zone must stay busy while plans of its pass are out")
	}
}

// TestExpiredFlightDropsItsUnsentPlans: when the live plans of a pass get
// no result before their deadline, the planner withdraws them from the
// queue and sends the whole pass back to dirty, unsent plans included, so
// nothing of the given-up pass goes out later.
func TestExpiredFlightDropsItsUnsentPlans(t *testing.T) {
	s, sub, k, _ := passOfManyPlans(t)
	f := s.flights[k]
	f.deadline = time.Now().Add(-time.Second)
	s.expireFlights(context.Background())
	if len(f.plans) != 0 || len(f.unsent) != 0 {
		t.Fatalf("after the expiry: %d plans out, %d unsent; want none", len(f.plans), len(f.unsent))
	}
	if len(s.dirty) != passNames {
		t.Fatalf("every name of the pass must be dirty again: %d dirty, want %d", len(s.dirty), passNames)
	}
	st, err := s.js.Stream(context.Background(), events.StreamPlans)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := st.Info(context.Background()); err != nil || info.State.Msgs != 0 {
		t.Fatalf("the expired plans must be withdrawn from the queue: %v, %+v", err, info)
	}
	if msg, err := sub.NextMsg(200 * time.Millisecond); err == nil {
		t.Fatalf("a plan of the expired pass went out: %s", msg.Subject)
	}
}

// passNames is how many names passOfManyPlans plans, one plan each.
const passNames = 3 * livePlans

// passOfManyPlans plans passNames names of one zone in one pass, one name
// (its A and ownership TXT) per plan, and returns the run, a subscription
// to the plans, the zone and the livePlans plans that went out.
func passOfManyPlans(t *testing.T) (*run, *nats.Subscription, zoneKey, []events.Plan) {
	t.Helper()
	nc, js := startBus(t)
	s := freshRun(t, js, Config{BatchChangeSize: 2, PlanTimeout: time.Hour})
	feed(t, s, events.DesiredCompleteSubject(), &events.DesiredComplete{Complete: true, Clusters: []string{"c1"}})
	for i := range passNames {
		name := fmt.Sprintf("n%d.%s", i, zone)
		feed(t, s, events.DesiredSubject(name), &events.DesiredState{DNSName: name,
			Endpoints: []events.Endpoint{rr(name, "A", 0, "192.0.2.1")}})
	}
	sub := planSub(t, nc)
	k := zoneKey{"p", zone}
	s.plan(context.Background())
	f := s.flights[k]
	queued := receivePlans(t, sub, livePlans)
	if len(f.plans) != livePlans || len(f.unsent) != passNames-livePlans {
		t.Fatalf("after the pass: %d plans out, %d unsent; want %d and %d", len(f.plans), len(f.unsent), livePlans, passNames-livePlans)
	}
	if len(s.dirty) != 0 {
		t.Fatalf("the names of a pass' unsent plans are its own, not dirty: %d dirty", len(s.dirty))
	}
	return s, sub, k, queued
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
