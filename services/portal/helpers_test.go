package portal_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/portal"
	"github.com/zonestream/zonestream/services/portal/projection"
	"github.com/zonestream/zonestream/testenv/natsenv"
)

// bus is a real JetStream with the zonestream streams.
func bus(t *testing.T) jetstream.JetStream {
	t.Helper()
	s := natsenv.StartT(t)
	_, js := natsenv.Connect(t, s.ClientURL())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := events.EnsureStreams(ctx, js); err != nil {
		t.Fatal(err)
	}
	return js
}

// start runs a portal on js until the test ends and waits until it has
// caught up.
func start(t *testing.T, js jetstream.JetStream, cfg portal.Config) *portal.Portal {
	t.Helper()
	p, err := portal.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = p.Run(ctx, js) }()
	t.Cleanup(func() { cancel(); <-done })
	waitFor(t, "the portal to catch up", func() bool { return p.Ready() == nil })
	return p
}

// publish publishes ev and returns its event id, the causation of what it causes.
func publish(t *testing.T, js jetstream.JetStream, subject string, ev events.Event, cause string) string {
	t.Helper()
	msg, err := events.Message(subject, ev, cause)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.PublishMsg(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	return msg.Header.Get(events.HeaderEventID)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitStatus waits until name has status st and returns its view.
func waitStatus(t *testing.T, p *portal.Portal, name string, st projection.Status) projection.View {
	t.Helper()
	var v projection.View
	deadline := time.Now().Add(15 * time.Second)
	for {
		var ok bool
		v, ok = p.Projection().Get(name)
		if ok && v.Status == st {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: status %q (%s), want %q", name, v.Status, v.Reason, st)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var shopWeb = events.ObjectRef{Cluster: "prod", Source: "service", Namespace: "shop", Name: "web"}

func desired(name string, by events.ObjectRef, eps ...events.Endpoint) *events.DesiredState {
	return &events.DesiredState{DNSName: name, Endpoints: eps, Contributors: []events.ObjectRef{by}}
}

func a(name string, targets ...string) events.Endpoint {
	return events.NewEndpoint(name, events.RecordTypeA, 300, targets...)
}

func ownership(name, owner string) events.Endpoint {
	return events.NewEndpoint("a-"+name, events.RecordTypeTXT, 300,
		`"heritage=external-dns,external-dns/owner=`+owner+`,external-dns/resource=service/shop/web"`)
}

func observed(provider, zone, name string, records ...events.Endpoint) *events.ObservedState {
	return &events.ObservedState{Provider: provider, Zone: zone, DNSName: name, Records: records}
}
