package planner

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/registry"
)

func TestRepeatedAppliedPlanBacksOff(t *testing.T) {
	p, err := New(Config{Ownership: registry.Settings{OwnerID: "me"}, Policy: "sync", Registry: "txt", BatchChangeSize: 10},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	s := newRun(p)
	k := zoneKey{"rfc2136", "example.test"}
	ep := events.NewEndpoint("www.example.test", "A", 0, "192.0.2.1")
	same := planned{names: []string{"www.example.test"}, hash: changesHash([]events.Change{{New: &ep}})}
	s.flights[k] = &flight{plans: map[string]planned{}}
	applied := func(id string) {
		t.Helper()
		s.flights[k].plans[id] = same
		msg, err := events.Message(events.ResultSubject(k.provider, k.zone),
			&events.Result{PlanID: id, Provider: k.provider, Zone: k.zone, Status: events.ResultApplied}, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.foldResult(context.Background(), events.Received{Subject: msg.Subject, Header: msg.Header, Data: msg.Data}); err != nil {
			t.Fatal(err)
		}
	}
	applied("p1")
	if s.busy(k, time.Now()) {
		t.Fatal("a first applied plan must not hold the zone back")
	}
	applied("p2") // the very same changes again: the provider did not keep them
	if !s.busy(k, time.Now()) || s.flights[k].repeats != 1 {
		t.Fatalf("an identical plan after an applied one must back off (repeats %d)", s.flights[k].repeats)
	}
	if s.busy(k, time.Now().Add(10*time.Minute)) {
		t.Fatal("the back-off must end")
	}
	if _, ok := s.dirty["www.example.test"]; !ok {
		t.Fatal("the name must stay scheduled for after the back-off")
	}
}

// TestNoDeleteBeforeDesiredComplete: a name we own that nobody wants yet
// may only be missing because the desired stream is still being filled;
// it is deleted only once dedup has marked the stream complete.
func TestNoDeleteBeforeDesiredComplete(t *testing.T) {
	nc, js := startBus(t)
	ctx := context.Background()
	s := freshRun(t, js, Config{BatchChangeSize: 10})
	www := "www." + zone
	// Live: fed after the planner started watching (only a live
	// completeness mark counts).
	feedEvent := func(subject string, ev events.Event) { t.Helper(); feed(t, s, subject, ev) }
	feedEvent(events.ObservedSubject("p", www), &events.ObservedState{Provider: "p", Zone: zone, DNSName: www,
		Records: []events.Endpoint{rr(www, "A", 300, "192.0.2.1")}})
	feedEvent(events.ObservedSubject("p", "a-"+www), &events.ObservedState{Provider: "p", Zone: zone,
		DNSName: "a-" + www, Records: []events.Endpoint{rr("a-"+www, "TXT", 300, owned("me", ""))}})
	sub, err := nc.SubscribeSync(events.SubjectPlans + ".>")
	if err != nil {
		t.Fatal(err)
	}
	s.plan(ctx)
	if msg, err := sub.NextMsg(300 * time.Millisecond); err == nil {
		t.Fatalf("planned before the desired stream was complete: %s", msg.Subject)
	}
	feedEvent(events.DesiredCompleteSubject(), &events.DesiredComplete{Complete: true, Clusters: []string{"c1"}})
	s.plan(ctx)
	msg, err := sub.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatal("no plan once the desired stream was complete")
	}
	var plan events.Plan
	if err := events.Unmarshal(msg.Header, msg.Data, &plan); err != nil {
		t.Fatal(err)
	}
	if d := describe(plan.Changes); d != "delete A www\ndelete TXT a-www" {
		t.Fatalf("plan:\n%s", d)
	}
}

// TestHistoryIsNotWrittenBackBeforeComplete: a desired state read back
// from the stream at start may be older than the cluster (its object was
// deleted while zonestream was down): until the desired state is complete
// it is not planned, while a desired state published since start is.
func TestHistoryIsNotWrittenBackBeforeComplete(t *testing.T) {
	nc, js := startBus(t)
	zones(t, js, zone)
	wanted(t, js, rr("gone."+zone, "A", 0, "192.0.2.1"))
	sub := planSub(t, nc)
	runPlanner(t, js, Config{})
	wanted(t, js, rr("new."+zone, "A", 0, "192.0.2.2"))
	for _, line := range planLines(nextPlan(t, sub)) {
		if strings.Contains(line, "gone") {
			t.Fatalf("a desired state from history was planned before the desired state was complete: %s", line)
		}
	}
}
