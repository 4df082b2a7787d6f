package planner

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/registry"
	"github.com/zonestream/zonestream/testenv/natsenv"
)

// TestReplayGivesTheSamePlans replays one set of streams, in two different
// orders, into two fresh planners: the plans they publish must be the same,
// change for change.
func TestReplayGivesTheSamePlans(t *testing.T) {
	srv := natsenv.StartT(t)
	nc, js := natsenv.Connect(t, srv.ClientURL())
	ctx := context.Background()
	if err := events.EnsureStreams(ctx, js); err != nil {
		t.Fatal(err)
	}
	type input struct {
		subject string
		ev      events.Event
	}
	var inputs []input
	for i := range 300 {
		name := fmt.Sprintf("svc-%d.%s", i, zone)
		if i%3 != 0 { // wanted
			inputs = append(inputs, input{events.DesiredSubject(name), &events.DesiredState{DNSName: name,
				Endpoints:    []events.Endpoint{events.NewEndpoint(name, "A", 0, fmt.Sprintf("192.0.2.%d", i%250+1))},
				Contributors: []events.ObjectRef{{Cluster: "c", Source: "service", Namespace: "ns", Name: fmt.Sprint(i)}}}})
		}
		if i%2 == 0 { // held, and ours
			inputs = append(inputs,
				input{events.ObservedSubject("p", name), &events.ObservedState{Provider: "p", Zone: zone, DNSName: name,
					Records: []events.Endpoint{events.NewEndpoint(name, "A", 300, "198.51.100.1")}}},
				input{events.ObservedSubject("p", "a-"+name), &events.ObservedState{Provider: "p", Zone: zone,
					DNSName: "a-" + name, Records: []events.Endpoint{events.NewEndpoint("a-"+name, "TXT", 300, owned("me", ""))}}})
		}
	}
	inputs = append(inputs, input{events.DesiredCompleteSubject(), &events.DesiredComplete{Complete: true, Clusters: []string{"c"}}})

	planOnce := func(order []input) []string {
		t.Helper()
		p, err := New(Config{Ownership: registry.Settings{OwnerID: "me"}, Policy: "sync", Registry: "txt", BatchChangeSize: 50},
			slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		s := newRun(p)
		s.js = js
		s.zones["p"] = []string{zone}
		for i, in := range order {
			msg, err := events.Message(in.subject, in.ev, "")
			if err != nil {
				t.Fatal(err)
			}
			// Live: the completeness mark counts only when it comes after
			// the planner started watching.
			s.fold(ctx, events.Received{Subject: in.subject, Header: msg.Header, Data: msg.Data, Seq: uint64(i + 1), Live: true})
		}
		sub, err := nc.SubscribeSync(events.SubjectPlans + ".>")
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Unsubscribe()
		s.plan(ctx)
		var plans []string
		for {
			msg, err := sub.NextMsg(500 * time.Millisecond)
			if err != nil {
				break
			}
			var plan events.Plan
			if err := events.Unmarshal(msg.Header, msg.Data, &plan); err != nil {
				t.Fatal(err)
			}
			plans = append(plans, describe(plan.Changes))
		}
		return plans
	}
	first := planOnce(inputs)
	reversed := slices.Clone(inputs[:len(inputs)-1])
	slices.Reverse(reversed)
	second := planOnce(append(reversed, inputs[len(inputs)-1]))
	if len(first) == 0 {
		t.Fatal("nothing planned: the test plans nothing to compare")
	}
	if !slices.ContainsFunc(first, func(p string) bool { return strings.Contains(p, "delete A") }) {
		t.Fatal("no delete planned: the completeness mark was not taken, deletes are not compared")
	}
	if !slices.Equal(first, second) {
		t.Fatalf("the same streams gave different plans:\n%d plans vs %d", len(first), len(second))
	}
}
