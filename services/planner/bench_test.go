package planner

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"testing"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/registry"
	"github.com/zonestream/zonestream/testenv/natsenv"
)

const benchZone = "bench.test"

// benchRun is a caught-up planner state holding n names, each wanted and
// already held (with its ownership) by provider "p": nothing to do.
func benchRun(b *testing.B, n int) *run {
	b.Helper()
	srv := natsenv.StartT(b)
	_, js := natsenv.Connect(b, srv.ClientURL())
	if err := events.EnsureStreams(context.Background(), js); err != nil {
		b.Fatal(err)
	}
	p, err := New(Config{Ownership: registry.Settings{OwnerID: "bench"}, Policy: "sync", Registry: "txt", BatchChangeSize: 1000},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	s := newRun(p)
	s.js = js
	s.zones["p"] = []string{benchZone}
	for i := range n {
		name := fmt.Sprintf("svc-%d.%s", i, benchZone)
		ip := fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)
		feed(b, s, events.DesiredSubject(name), &events.DesiredState{DNSName: name,
			Endpoints:    []events.Endpoint{events.NewEndpoint(name, "A", 0, ip)},
			Contributors: []events.ObjectRef{{Cluster: "c", Source: "service", Namespace: "ns", Name: fmt.Sprint("svc-", i)}}})
		feed(b, s, events.ObservedSubject("p", name), &events.ObservedState{Provider: "p", Zone: benchZone,
			DNSName: name, Records: []events.Endpoint{events.NewEndpoint(name, "A", 300, ip)}})
		owner := registry.Labels{Owner: "bench", Resource: fmt.Sprint("service/ns/svc-", i)}.Format()
		feed(b, s, events.ObservedSubject("p", "a-"+name), &events.ObservedState{Provider: "p", Zone: benchZone,
			DNSName: "a-" + name, Records: []events.Endpoint{events.NewEndpoint("a-"+name, "TXT", 300, owner)}})
	}
	return s
}

// BenchmarkPlanOneNameChange: one name's desired state changes among 100k
// names in place; the time to plan it and publish the plan.
func BenchmarkPlanOneNameChange(b *testing.B) {
	s := benchRun(b, 100_000)
	s.plan(context.Background()) // the start-up pass: nothing to do
	if len(s.flights) != 0 {
		b.Fatal("a zone in step planned changes")
	}
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		name := fmt.Sprintf("svc-%d.%s", i%100_000, benchZone)
		msg, _ := events.Message(events.DesiredSubject(name), &events.DesiredState{DNSName: name,
			Endpoints: []events.Endpoint{events.NewEndpoint(name, "A", 0, fmt.Sprint("192.0.2.", i%250+1))}}, "")
		s.flights = map[zoneKey]*flight{} // the previous plan's result came
		b.StartTimer()
		s.fold(context.Background(), events.Received{Subject: msg.Subject, Header: msg.Header, Data: msg.Data, Live: true})
		if !s.plannable() {
			b.Fatal("a changed name in a free zone is not plannable")
		}
		s.plan(context.Background())
	}
	b.StopTimer()
	if len(s.flights) != 1 {
		b.Fatalf("%d zones planned, want 1", len(s.flights))
	}
}

// BenchmarkPlanBusyZoneFlood: while a zone waits for a result, changes to
// 100k of its names arrive; deciding after each whether to plan must not
// scan every dirty name.
func BenchmarkPlanBusyZoneFlood(b *testing.B) {
	s := benchRun(b, 100_000)
	s.flights[zoneKey{"p", benchZone}] = &flight{plans: map[string]planned{"out": {}}}
	s.plannable() // take in the names loaded so far
	b.ResetTimer()
	for i := range b.N {
		s.mark(fmt.Sprintf("svc-%d.%s", i%100_000, benchZone), "")
		if s.plannable() {
			b.Fatal("a busy zone's name is plannable")
		}
	}
}

// BenchmarkFirstPlan: a planner meets 100k wanted names in an empty zone.
func BenchmarkFirstPlan(b *testing.B) {
	for range b.N {
		b.StopTimer()
		s := benchRun(b, 0)
		for i := range 100_000 {
			name := fmt.Sprintf("svc-%d.%s", i, benchZone)
			feed(b, s, events.DesiredSubject(name), &events.DesiredState{DNSName: name,
				Endpoints: []events.Endpoint{events.NewEndpoint(name, "A", 0, "192.0.2.1")}})
		}
		b.StartTimer()
		s.plan(context.Background())
		b.StopTimer()
		if f := s.flights[zoneKey{"p", benchZone}]; len(f.plans)+len(f.unsent) != 200 {
			n := len(f.plans) + len(f.unsent)
			b.Fatalf("%d plans for 200k changes, want 200 of 1000", n)
		}
	}
}

// BenchmarkMemoryPerName reports the planner's heap per name held (wanted,
// observed, and its ownership record).
func BenchmarkMemoryPerName(b *testing.B) {
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s := benchRun(b, 20_000)
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/20_000, "heap-bytes/name")
		runtime.KeepAlive(s)
	}
}

// BenchmarkFirstPlanDeclared is BenchmarkFirstPlan with the provider
// declared by a DNSProvider with a quota: every name routed, and counted
// against the quota (compare the two for routing's and the quota's cost).
func BenchmarkFirstPlanDeclared(b *testing.B) {
	for range b.N {
		b.StopTimer()
		s := benchRun(b, 0)
		delete(s.zones, "p")
		feed(b, s, events.ZonesSubject("p"), &events.ZoneList{Provider: "p", Zones: []string{benchZone},
			Scope: &events.ProviderScope{Declared: "ns/p", Namespaces: []string{events.AllNamespaces}, Quota: 200_000}})
		for i := range 100_000 {
			name := fmt.Sprintf("svc-%d.%s", i, benchZone)
			feed(b, s, events.DesiredSubject(name), &events.DesiredState{DNSName: name,
				Endpoints:    []events.Endpoint{events.NewEndpoint(name, "A", 0, "192.0.2.1")},
				Contributors: []events.ObjectRef{{Cluster: "c", Source: "service", Namespace: "ns", Name: "web"}}})
		}
		b.StartTimer()
		s.plan(context.Background())
		b.StopTimer()
		if f := s.flights[zoneKey{"p", benchZone}]; len(f.plans)+len(f.unsent) != 200 {
			n := len(f.plans) + len(f.unsent)
			b.Fatalf("%d plans for 200k changes, want 200 of 1000", n)
		}
	}
}
