package dedup_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/dedup"
	"github.com/zonestream/zonestream/testenv/natsenv"
)

// TestUndecodableObjectIsUnknownNotGone: garbage as an object's last
// message, read at a restart, says nothing of what the object wants: the
// names it held keep their published state until it speaks again.
func TestUndecodableObjectIsUnknownNotGone(t *testing.T) {
	b := newBus(t)
	ctx := context.Background()
	_, stop := startDedup(t, b.js)
	b.publishSource(t, "web", events.NewEndpoint("web.example.com", "A", 0, "192.0.2.1"))
	b.waitFor(t, "web", func(ds []events.DesiredState) bool { _, ok := last(ds, "web.example.com"); return ok })
	stop()

	ref := events.ObjectRef{Cluster: "c1", Source: "service", Namespace: "default", Name: "web"}
	if _, err := b.js.PublishMsg(ctx, &nats.Msg{Subject: ref.Subject(), Data: []byte("not msgpack")}); err != nil {
		t.Fatal(err)
	}
	before := b.count()
	startDedup(t, b.js)
	b.publishSource(t, "other", events.NewEndpoint("other.example.com", "A", 0, "192.0.2.5"))
	b.waitFor(t, "dedup working", func(ds []events.DesiredState) bool { _, ok := last(ds, "other.example.com"); return ok })
	if d, _ := last(b.desired, "web.example.com"); len(d.Endpoints) != 1 {
		t.Fatalf("garbage read at a restart deleted web.example.com: %+v", d)
	}
	if n := b.count(); n != before+1 {
		t.Fatalf("%d desired states published, want only other.example.com's", n-before)
	}
	// The object speaks again: its name follows it.
	b.publishSource(t, "web", events.NewEndpoint("web.example.com", "A", 0, "192.0.2.9"))
	b.waitFor(t, "web's new address", func(ds []events.DesiredState) bool {
		d, _ := last(ds, "web.example.com")
		return len(d.Endpoints) == 1 && d.Endpoints[0].Targets[0] == "192.0.2.9"
	})
}

// TestIdentityComesFromTheSubject: a message on one object's subject that
// claims to be another (a dev cluster's collector claiming prod's crd) is
// rejected and dead-lettered; it outranks nobody.
func TestIdentityComesFromTheSubject(t *testing.T) {
	b := newBus(t)
	ctx := context.Background()
	startDedupWith(t, b.js, dedup.Config{SourcePriority: []string{"crd", "service"}})
	prod := events.ObjectRef{Cluster: "prod", Source: "service", Namespace: "web", Name: "www"}
	b.publishObject(t, prod, events.NewEndpoint("www.example.com", "A", 0, "192.0.2.1"))
	b.waitFor(t, "prod's record", func(ds []events.DesiredState) bool { _, ok := last(ds, "www.example.com"); return ok })

	dlq, err := b.js.OrderedConsumer(ctx, events.StreamDeadLetter, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	forged := &events.SourceState{Object: events.ObjectRef{Cluster: "prod", Source: "crd", Namespace: "web", Name: "www"},
		Endpoints: []events.Endpoint{events.NewEndpoint("www.example.com", "A", 0, "203.0.113.66")}}
	devSubject := events.SourceSubject("dev", "service", "web", "x")
	if _, _, err := events.Publish(ctx, b.js, devSubject, forged, ""); err != nil {
		t.Fatal(err)
	}
	msg, err := dlq.Next(jetstream.FetchMaxWait(10 * time.Second))
	if err != nil {
		t.Fatalf("forged message not dead-lettered: %v", err)
	}
	if msg.Headers().Get(events.HeaderOriginalSubject) != devSubject {
		t.Fatalf("dead letter from %s", msg.Headers().Get(events.HeaderOriginalSubject))
	}
	b.publishSource(t, "other", events.NewEndpoint("other.example.com", "A", 0, "192.0.2.5"))
	b.waitFor(t, "dedup still working", func(ds []events.DesiredState) bool { _, ok := last(ds, "other.example.com"); return ok })
	if d, _ := last(b.desired, "www.example.com"); len(d.Endpoints) != 1 || d.Endpoints[0].Targets[0] != "192.0.2.1" {
		t.Fatalf("a forged identity changed www.example.com: %+v", d)
	}
}

// TestOneOversizedNameBlocksNoOther: a desired state too large for the bus
// is reported and keeps its last published state; every other name, and
// the completeness mark, still go out. Thousands of losers at one name are
// listed up to a bound and counted beyond it.
func TestOneOversizedNameBlocksNoOther(t *testing.T) {
	b := newBus(t, natsenv.WithMaxPayload(32<<10))
	targets := make([]string, 4000)
	for i := range targets {
		targets[i] = fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)
	}
	for c := range 3 {
		ref := events.ObjectRef{Cluster: fmt.Sprintf("c%d", c), Source: "service", Namespace: "default", Name: "big"}
		// Each cluster's share fits; united they do not.
		b.publishObject(t, ref, events.NewEndpoint("big.example.com", "A", 0, targets[c*1300:(c+1)*1300]...))
	}
	for i := range 300 {
		// Each its own TTL, so that none are united.
		b.publishSource(t, fmt.Sprintf("loser%03d", i), events.NewEndpoint("crowded.example.com", "A", int64(i+1), fmt.Sprintf("192.0.2.%d", i%250+1), "192.0.2.251"))
	}
	b.publishSource(t, "after", events.NewEndpoint("zz.example.com", "A", 0, "192.0.2.7"))
	startDedup(t, b.js) // after the objects: it sees them all at once
	for c := range 3 {
		b.announce(t, fmt.Sprintf("c%d", c), "r1", events.PhaseSynced, "service")
	}
	b.waitFor(t, "names after the oversized one", func(ds []events.DesiredState) bool {
		_, ok := last(ds, "zz.example.com")
		return ok
	})
	b.waitMark(t, "the complete mark despite the oversized name", true)
	if _, ok := last(b.desired, "big.example.com"); ok {
		t.Fatal("an oversized desired state was published")
	}
	d, ok := last(b.desired, "crowded.example.com")
	if !ok || len(d.Losers) != events.MaxLosers || len(d.Losers)+d.LosersOmitted != 299 {
		t.Fatalf("crowded name: %d losers listed, %d omitted; want %d and %d", len(d.Losers), d.LosersOmitted, events.MaxLosers, 299-events.MaxLosers)
	}
}

// TestLostDesiredStreamIsPublishedAgain: the desired stream is purged under
// a running dedup. Before it says complete again, every wanted name is back
// on the stream, so a planner never reads an empty stream as complete.
func TestLostDesiredStreamIsPublishedAgain(t *testing.T) {
	b := newBus(t)
	ctx := context.Background()
	startDedupWith(t, b.js, dedup.Config{Heartbeat: 100 * time.Millisecond})
	b.publishSource(t, "web", events.NewEndpoint("web.example.com", "A", 0, "192.0.2.1"))
	b.announce(t, "c1", "r1", events.PhaseSynced, "service")
	b.waitMark(t, "complete", true)
	st, err := b.js.Stream(ctx, events.StreamDesired)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Purge(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		m, err := st.GetLastMsgForSubject(ctx, events.DesiredCompleteSubject())
		if err == nil {
			if _, err := st.GetLastMsgForSubject(ctx, events.DesiredSubject("web.example.com")); err != nil || m.Sequence == 0 {
				t.Fatalf("a completeness mark on the purged stream before web.example.com: %v", err)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("dedup never published again after the desired stream was purged")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
