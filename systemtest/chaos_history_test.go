package systemtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
)

// A long run leaves the bus full of what is no longer live: objects
// created, changed and deleted, each leaving its tombstone on the sources,
// desired and observed streams for a day. prefillHistory writes that
// history straight onto the bus before the stages start, so that a few
// trials measure a restart on the bus of a run hours long.
func prefillHistory(t *testing.T, url, cluster, zone, provider string, n int) {
	t.Helper()
	if n == 0 {
		return
	}
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(4096))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := events.EnsureStreams(ctx, js); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	publish := func(subject string, ev events.Event) {
		msg, err := events.Message(subject, ev, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := js.PublishMsgAsync(msg); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		obj := events.ObjectRef{Cluster: cluster, Source: "service", Namespace: "history", Name: fmt.Sprintf("h%d", i)}
		name := fmt.Sprintf("h%d.%s", i, zone)
		owner := "a-" + name
		ep := events.NewEndpoint(name, "A", 0, fmt.Sprintf("10.9.%d.%d", (i>>8)&255, i&255))
		txt := events.NewEndpoint(owner, "TXT", 0, `"heritage=external-dns,external-dns/owner=chaos"`)
		publish(obj.Subject(), &events.SourceState{Object: obj, Endpoints: []events.Endpoint{ep}})
		publish(obj.Subject(), &events.SourceState{Object: obj})
		publish(events.DesiredSubject(name), &events.DesiredState{DNSName: name, Endpoints: []events.Endpoint{ep}, Contributors: []events.ObjectRef{obj}})
		publish(events.DesiredSubject(name), &events.DesiredState{DNSName: name})
		publish(events.ObservedSubject(provider, name), &events.ObservedState{Provider: provider, Zone: zone, DNSName: name, Records: []events.Endpoint{ep}})
		publish(events.ObservedSubject(provider, owner), &events.ObservedState{Provider: provider, Zone: zone, DNSName: owner, Records: []events.Endpoint{txt}})
		publish(events.ObservedSubject(provider, name), &events.ObservedState{Provider: provider, Zone: zone, DNSName: name})
		publish(events.ObservedSubject(provider, owner), &events.ObservedState{Provider: provider, Zone: zone, DNSName: owner})
		if i%256 == 255 { // 8 messages an object: below the 4096 pending allowed
			select {
			case <-js.PublishAsyncComplete():
			case <-ctx.Done():
				t.Fatal("prefilling the history: ", ctx.Err())
			}
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-ctx.Done():
		t.Fatal("prefilling the history: ", ctx.Err())
	}
	t.Logf("history of %d objects created, changed and deleted on the bus in %s", n, time.Since(start).Round(time.Millisecond))
}
