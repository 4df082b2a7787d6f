package systemtest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/zonestream/zonestream/cmd/zonestream/cli"
	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/testenv/natsenv"
)

// explainBenchEvents is how many events the streams hold in
// BenchmarkExplain: 10^6.
const explainBenchEvents = 1_000_000

// BenchmarkExplain measures `zonestream explain NAME` (what the bus says
// about one name, and its history) with 10^6 events in the streams: 100k
// names in 100 zones, each with 3 states of its object, 3 desired states,
// 3 observed states and a result of the plan that wrote it.
func BenchmarkExplain(b *testing.B) {
	s := natsenv.StartT(b)
	js := asyncPublisher(b, s.ClientURL())
	ctx := context.Background()
	if err := events.EnsureStreams(ctx, js); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	target := fillStreams(b, js, explainBenchEvents/10)
	b.Logf("%d events published in %s", explainBenchEvents, time.Since(start).Round(time.Second))
	var stored uint64
	for _, name := range []string{events.StreamSources, events.StreamDesired, events.StreamObserved, events.StreamResults} {
		st, err := js.Stream(ctx, name)
		if err != nil {
			b.Fatal(err)
		}
		stored += st.CachedInfo().State.Msgs
	}
	if stored < explainBenchEvents {
		b.Fatalf("the streams hold %d events, want %d", stored, explainBenchEvents)
	}
	for b.Loop() {
		ex, err := cli.ExplainName(ctx, js, target)
		if err != nil {
			b.Fatal(err)
		}
		if len(ex.History) != 10 {
			var got []string
			for _, e := range ex.History {
				got = append(got, e.Label()+" "+e.Time.Format(time.StampNano)+" "+e.Causation)
			}
			b.Fatalf("history of %s: %d entries, want 10:\n%s", target, len(ex.History), strings.Join(got, "\n"))
		}
	}
	b.ReportMetric(float64(stored), "events")
}

// fillStreams publishes names*10 events and returns a name from the
// middle. Publishes are asynchronous, a bounded window at a time.
func fillStreams(b *testing.B, js jetstream.JetStream, names int) string {
	const provider, zones = "bind", 100
	zoneOf := func(i int) string { return fmt.Sprintf("z%d.bench.test", i%zones) }
	var all []string
	for i := range zones {
		all = append(all, zoneOf(i))
	}
	pub := func(subject string, ev events.Event, cause string) string {
		msg, err := events.Message(subject, ev, cause)
		if err != nil {
			b.Fatal(err)
		}
		msg.Header.Del(nats.MsgIdHdr) // a million ids would only fill the server's duplicate window
		if _, err := js.PublishMsgAsync(msg, jetstream.WithStallWait(time.Minute)); err != nil {
			b.Fatal(err)
		}
		return msg.Header.Get(events.HeaderEventID)
	}
	pub(events.ZonesSubject(provider), &events.ZoneList{Provider: provider, Zones: all}, "")
	for version := range 3 {
		for i := range names {
			zone := zoneOf(i)
			name := fmt.Sprintf("svc-%d.%s", i, zone)
			obj := events.ObjectRef{Cluster: "prod", Source: "service", Namespace: "default", Name: fmt.Sprintf("svc-%d", i)}
			ep := events.NewEndpoint(name, events.RecordTypeA, 300, fmt.Sprintf("10.%d.%d.%d", version, i>>8&255, i&255))
			src := pub(obj.Subject(), &events.SourceState{Object: obj, Endpoints: []events.Endpoint{ep}}, "")
			pub(events.DesiredSubject(name), &events.DesiredState{DNSName: name, Endpoints: []events.Endpoint{ep},
				Contributors: []events.ObjectRef{obj}}, src)
			plan := nuid.Next()
			pub(events.ObservedSubject(provider, name), &events.ObservedState{Provider: provider, Zone: zone, DNSName: name,
				Records: []events.Endpoint{ep}}, plan)
			if version == 2 {
				pub(events.ResultSubject(provider, zone), &events.Result{PlanID: "p" + plan, Provider: provider, Zone: zone,
					Status: events.ResultApplied, Applied: 1}, plan)
			}
		}
	}
	awaitPublishes(b, js)
	return fmt.Sprintf("svc-%d.%s", names/2, zoneOf(names/2))
}
