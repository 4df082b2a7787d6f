package dedup_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/dedup"
	"github.com/zonestream/zonestream/testenv/natsenv"
)

type bus struct {
	js jetstream.JetStream
	mu sync.Mutex
	// every desired event published, in order
	desired []events.DesiredState
	// marks are the completeness marks, in order; completes counts those
	// saying complete, and desiredAtComplete how many desired events came
	// before the last of them.
	marks                        []events.DesiredComplete
	completes, desiredAtComplete int
}

func newBus(t *testing.T, options ...natsenv.Option) *bus {
	s := natsenv.StartT(t, options...)
	_, js := natsenv.Connect(t, s.ClientURL())
	if err := events.EnsureStreams(context.Background(), js); err != nil {
		t.Fatal(err)
	}
	b := &bus{js: js}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cons, err := js.OrderedConsumer(ctx, events.StreamDesired, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		if events.IsMarker(m.Subject()) {
			var c events.DesiredComplete
			if err := events.Unmarshal(m.Headers(), m.Data(), &c); err != nil {
				t.Error(err)
				return
			}
			b.mu.Lock()
			b.marks = append(b.marks, c)
			if c.Complete {
				b.completes++
				b.desiredAtComplete = len(b.desired)
			}
			b.mu.Unlock()
			return
		}
		var d events.DesiredState
		if err := events.Unmarshal(m.Headers(), m.Data(), &d); err != nil {
			t.Error(err)
			return
		}
		b.mu.Lock()
		b.desired = append(b.desired, d)
		b.mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cc.Stop)
	return b
}

func (b *bus) publishSource(t *testing.T, name string, eps ...events.Endpoint) {
	t.Helper()
	b.publishObject(t, events.ObjectRef{Cluster: "c1", Source: "service", Namespace: "default", Name: name}, eps...)
}

func (b *bus) publishObject(t *testing.T, ref events.ObjectRef, eps ...events.Endpoint) {
	t.Helper()
	if _, _, err := events.Publish(context.Background(), b.js, ref.Subject(), &events.SourceState{Object: ref, Endpoints: eps}, ""); err != nil {
		t.Fatal(err)
	}
}

func (b *bus) count() int { b.mu.Lock(); defer b.mu.Unlock(); return len(b.desired) }

// waitFor waits until fn is true of the published desired events.
func (b *bus) waitFor(t *testing.T, what string, fn func([]events.DesiredState) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b.mu.Lock()
		ok := fn(b.desired)
		b.mu.Unlock()
		if ok {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s; published: %+v", what, b.desired)
}

func last(ds []events.DesiredState, name string) (events.DesiredState, bool) {
	for i := len(ds) - 1; i >= 0; i-- {
		if ds[i].DNSName == name {
			return ds[i], true
		}
	}
	return events.DesiredState{}, false
}

func startDedup(t *testing.T, js jetstream.JetStream) (*dedup.Dedup, context.CancelFunc) {
	t.Helper()
	return startDedupWith(t, js, dedup.Config{})
}

func startDedupWith(t *testing.T, js jetstream.JetStream, cfg dedup.Config) (*dedup.Dedup, context.CancelFunc) {
	t.Helper()
	d, err := dedup.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = d.Run(ctx, js) }()
	stop := func() { cancel(); <-done }
	t.Cleanup(stop)
	deadline := time.Now().Add(10 * time.Second)
	for d.Ready() != nil {
		if time.Now().After(deadline) {
			t.Fatal("dedup never caught up")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return d, stop
}

func TestDedupTieBreakTombstoneAndQuietRestart(t *testing.T) {
	b := newBus(t)
	a1 := events.NewEndpoint("www.example.com", "A", 0, "192.0.2.1")
	a2 := events.NewEndpoint("www.example.com", "A", 60, "192.0.2.2") // another TTL: not united
	b.publishSource(t, "two", a2)
	b.publishSource(t, "one", a1)

	_, stop := startDedup(t, b.js)
	b.waitFor(t, "the lower target alone", func(ds []events.DesiredState) bool {
		d, ok := last(ds, "www.example.com")
		return ok && len(d.Endpoints) == 1 && slices.Equal(d.Endpoints[0].Targets, []string{"192.0.2.1"}) &&
			len(d.Contributors) == 1 && len(d.Losers) == 1 && d.Losers[0].Object.Name == "two"
	})
	if n := b.count(); n != 1 {
		t.Fatalf("replaying two objects published %d desired events, want 1 (nothing before catching up)", n)
	}

	// A restart with nothing changed publishes nothing.
	stop()
	_, stop = startDedup(t, b.js)
	time.Sleep(300 * time.Millisecond)
	if n := b.count(); n != 1 {
		t.Fatalf("restart published %d new events for unchanged names", n-1)
	}

	// The winner goes while dedup is down: the restart hands its record
	// to the other object, in one event.
	stop()
	b.publishSource(t, "one") // tombstone
	_, stop = startDedup(t, b.js)
	b.waitFor(t, "the other object's target", func(ds []events.DesiredState) bool {
		d, _ := last(ds, "www.example.com")
		return len(d.Endpoints) == 1 && slices.Equal(d.Endpoints[0].Targets, []string{"192.0.2.2"}) && len(d.Losers) == 0
	})
	if n := b.count(); n != 2 {
		t.Fatalf("%d desired events, want 2", n)
	}

	// The last object goes: a tombstone for the name.
	b.publishSource(t, "two")
	b.waitFor(t, "tombstone", func(ds []events.DesiredState) bool {
		d, _ := last(ds, "www.example.com")
		return len(d.Endpoints) == 0
	})
	stop()
}

func TestDedupParksGarbageAndKeepsState(t *testing.T) {
	b := newBus(t)
	ctx := context.Background()
	b.publishSource(t, "web", events.NewEndpoint("web.example.com", "A", 0, "192.0.2.1"))
	startDedup(t, b.js)
	b.waitFor(t, "web", func(ds []events.DesiredState) bool { _, ok := last(ds, "web.example.com"); return ok })

	dlq, err := b.js.OrderedConsumer(ctx, events.StreamDeadLetter, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	// Garbage on the same object's subject must not be taken as a tombstone.
	ref := events.ObjectRef{Cluster: "c1", Source: "service", Namespace: "default", Name: "web"}
	if _, err := b.js.PublishMsg(ctx, &nats.Msg{Subject: ref.Subject(), Data: []byte("not msgpack")}); err != nil {
		t.Fatal(err)
	}
	msg, err := dlq.Next(jetstream.FetchMaxWait(10 * time.Second))
	if err != nil {
		t.Fatalf("no dead letter: %v", err)
	}
	if msg.Headers().Get(events.HeaderOriginalSubject) != ref.Subject() || msg.Headers().Get(events.HeaderError) == "" {
		t.Fatalf("dead letter lacks its origin and reason: %v", msg.Headers())
	}
	b.publishSource(t, "other", events.NewEndpoint("other.example.com", "A", 0, "192.0.2.5"))
	b.waitFor(t, "dedup still working", func(ds []events.DesiredState) bool { _, ok := last(ds, "other.example.com"); return ok })
	if d, _ := last(b.desired, "web.example.com"); len(d.Endpoints) != 1 {
		t.Fatalf("garbage deleted web.example.com: %+v", d)
	}
}
