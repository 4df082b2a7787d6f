package planner

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/zonestream/zonestream/events"
)

func TestRepeatedAppliedPlanBacksOff(t *testing.T) {
	p, err := New(Config{TXTOwnerID: "me", Policy: "sync", Registry: "txt", BatchChangeSize: 10},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	s := newState(p)
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
		if err := s.applyResult(events.Received{Subject: msg.Subject, Header: msg.Header, Data: msg.Data}); err != nil {
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
