package systemtest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
)

// TestDeclaredApplierCredentials runs the configuration nats-config
// --dnsproviders generates in a real nats-server and does, with the
// identity applier-dnsproviders, what the applier of a declared provider
// (team-a/dns) does: publish its zone list and read it back, take its
// plans through its durable and ack them, take its lease, hear its adjust
// requests. What the other stages do is refused: desired state, plans,
// objects, the planner's lease.
func TestDeclaredApplierCredentials(t *testing.T) {
	b := startSecuredBus(t, []string{"a"}, []string{"inmemory"}, "--dnsproviders")
	p := events.DeclaredApplierPermissions()
	if p.Identity != "applier-dnsproviders" {
		t.Fatalf("identity %q", p.Identity)
	}
	js, log := b.connectAs(t, p)
	ctx := context.Background()
	provider := events.DeclaredProvider("team-a", "dns")

	zones := events.ZonesSubject(provider)
	zl := &events.ZoneList{Provider: provider, Zones: []string{"a.example.com"},
		Scope: &events.ProviderScope{Declared: provider, Namespaces: []string{"team-a"}}}
	if _, _, err := events.Publish(ctx, js, zones, zl, ""); err != nil {
		t.Fatalf("cannot publish team-a/dns' zone list: %v", err)
	}
	if h, err := events.LastHashes(ctx, js, events.StreamObserved, zones); err != nil || len(h) != 1 {
		t.Fatalf("cannot read team-a/dns' zone list back: %v %v", h, err)
	}

	// Its adjust requests reach it; the planner sends one.
	adjust, err := js.Conn().SubscribeSync(events.AdjustSubject(provider))
	if err != nil {
		t.Fatal(err)
	}
	if err := js.Conn().Flush(); err != nil {
		t.Fatal(err)
	}
	planner, _ := b.connectAs(t, events.PlannerPermissions())
	if err := planner.Conn().Publish(events.AdjustSubject(provider), []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if _, err := adjust.NextMsg(5 * time.Second); err != nil {
		t.Fatalf("team-a/dns' adjust request did not come: %v", err)
	}

	// The planner's plan for team-a/dns, taken through its durable, acked.
	const zone = "a.example.com"
	if _, _, err := events.Publish(ctx, planner, events.PlanSubject(provider, zone),
		&events.Plan{ID: "p1", Provider: provider, Zone: zone}, ""); err != nil {
		t.Fatalf("the planner cannot publish a plan: %v", err)
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, events.StreamPlans, jetstream.ConsumerConfig{
		Durable: events.ApplierDurable(provider), FilterSubject: events.PlanFilter(provider), AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatalf("cannot make team-a/dns' durable: %v", err)
	}
	batch, err := cons.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var got int
	for m := range batch.Messages() {
		got++
		if err := m.DoubleAck(ctx); err != nil {
			t.Fatalf("cannot ack the plan: %v", err)
		}
	}
	if got != 1 || batch.Error() != nil {
		t.Fatalf("took %d plans: %v", got, batch.Error())
	}

	leases, err := js.KeyValue(ctx, events.BucketLeases)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leases.Create(ctx, events.ApplierLease(provider), []byte("{}")); err != nil {
		t.Fatalf("cannot take team-a/dns' lease: %v", err)
	}

	for _, c := range []struct {
		subject string
		ev      events.Event
	}{
		{events.DesiredSubject("web.a.example.com"), &events.DesiredState{DNSName: "web.a.example.com"}},
		{events.PlanSubject(provider, zone), &events.Plan{ID: "forged", Provider: provider, Zone: zone}},
		{events.SourceSubject("a", "service", "team-a", "web"), sourceEvent("a")},
	} {
		err := refused(t, log, "publish", c.subject, func() error {
			_, _, err := events.Publish(ctx, js, c.subject, c.ev, "")
			return err
		})
		if !errors.Is(err, events.ErrPermissionDenied) {
			t.Errorf("publishing on %s fails with %v, want a permission error", c.subject, err)
		}
	}
	refused(t, log, "publish", events.LeaseSubject(events.PlannerLease()), func() error {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		_, err := leases.Create(cctx, events.PlannerLease(), []byte("{}"))
		return err
	})
}
