package applier_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/leader"
	"github.com/zonestream/zonestream/services/applier"
	"github.com/zonestream/zonestream/stage"
	"github.com/zonestream/zonestream/testenv/bind"
)

// TestPlanAppliedButNotAckedIsHarmlessToTheNextLeader: the leading
// applier takes a plan, writes it to BIND and dies before acking it. The
// standby takes the lease over and gets the plan again, at once rather
// than after the ack wait: its changes are
// checked against what BIND holds (RFC 2136 prerequisites), so it is
// reported stale and BIND keeps what the plan wrote, once; the next plan,
// computed from that, applies.
func TestPlanAppliedButNotAckedIsHarmlessToTheNextLeader(t *testing.T) {
	s := bind.StartT(t, zone)
	js := bus(t)
	cfg := rfcConfig(s, time.Hour)
	// Far beyond the test's wait: the next leader takes the plan over at
	// once, not after the ack wait.
	cfg.AckWait = time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	first := &events.Plan{ID: "p1", Provider: "rfc2136", Zone: zone, Changes: []events.Change{
		{New: ep("www."+zone, "A", "192.0.2.1")},
		{New: ep("a-www."+zone, "TXT", "heritage=external-dns,external-dns/owner=ha")},
	}}
	sendPlan(t, js, first)

	// The leader that dies: it takes the plan from the applier's durable
	// consumer, writes it, and never acks.
	cons, err := js.CreateOrUpdateConsumer(ctx, events.StreamPlans, jetstream.ConsumerConfig{
		Durable: events.ApplierDurable("rfc2136"), FilterSubject: events.PlanFilter("rfc2136"),
		AckPolicy: jetstream.AckExplicitPolicy, DeliverPolicy: jetstream.DeliverAllPolicy,
		MaxAckPending: 1, AckWait: cfg.AckWait, MaxDeliver: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var taken events.Plan
	for msg := range batch.Messages() {
		if err := events.Unmarshal(msg.Headers(), msg.Data(), &taken); err != nil {
			t.Fatal(err)
		}
	}
	if taken.ID != first.ID {
		t.Fatalf("the dying leader took plan %q, want %q", taken.ID, first.ID)
	}
	prov, err := applier.NewProvider(cfg, logger())
	if err != nil {
		t.Fatal(err)
	}
	if err := prov.Apply(ctx, zone, taken.Changes); err != nil {
		t.Fatal(err)
	}
	died := time.Now()

	// The standby, an elected replica, takes over and gets the plan again.
	standby, err := applier.New(cfg, logger())
	if err != nil {
		t.Fatal(err)
	}
	timing := leader.Config{Identity: "standby", LeaseDuration: 1500 * time.Millisecond, RenewDeadline: time.Second, RetryPeriod: 200 * time.Millisecond}
	svc, err := stage.Election{Enabled: true, Config: timing}.Elected(standby, logger())
	if err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- svc.Run(rctx, js) }()
	defer func() { stop(); <-done }()

	res, _ := waitResult(t, js, first.ID)
	if res.Status != events.ResultStale || res.Applied != 0 {
		t.Fatalf("the plan applied again by the next leader: %s, %d applied (%s); want stale, none", res.Status, res.Applied, res.Error)
	}
	t.Logf("the plan came back to the next leader %s after the first died; reported %s: %s",
		time.Since(died).Round(time.Millisecond), res.Status, res.Error)
	if got := aTargets(t, s, "www."+zone); !slices.Equal(got, []string{"192.0.2.1"}) {
		t.Fatalf("BIND holds %v at www, want what the plan wrote once", got)
	}

	// The next plan, computed from what BIND holds, applies.
	next := &events.Plan{ID: "p2", Provider: "rfc2136", Zone: zone, Changes: []events.Change{
		{Old: ep("www."+zone, "A", "192.0.2.1"), New: ep("www."+zone, "A", "192.0.2.2")},
	}}
	sendPlan(t, js, next)
	if res, _ := waitResult(t, js, next.ID); res.Status != events.ResultApplied {
		t.Fatalf("the next plan: %s (%s)", res.Status, res.Error)
	}
	if got := aTargets(t, s, "www."+zone); !slices.Equal(got, []string{"192.0.2.2"}) {
		t.Fatalf("BIND holds %v at www, want 192.0.2.2", got)
	}
}

func aTargets(t *testing.T, s *bind.Server, name string) []string {
	t.Helper()
	rrs, err := s.Query(name, dns.TypeA)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, rr := range rrs {
		if a, ok := rr.(*dns.A); ok {
			out = append(out, a.A.String())
		}
	}
	slices.Sort(out)
	return out
}

// TestAppliersOfTwoServersNeverShareAConsumer: two BIND servers driven by
// the same provider, each applier under its own --provider-name and in
// two replicas. Each name has its own durable consumer and its own lease,
// so each server's plans reach its own applier, and each has one leader.
func TestAppliersOfTwoServersNeverShareAConsumer(t *testing.T) {
	js := bus(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	servers := map[string]*bind.Server{"bind-a": bind.StartT(t, "a.test"), "bind-b": bind.StartT(t, "b.test")}
	zones := map[string]string{"bind-a": "a.test", "bind-b": "b.test"}
	timing := leader.Config{Identity: "replica", LeaseDuration: 1500 * time.Millisecond, RenewDeadline: time.Second, RetryPeriod: 200 * time.Millisecond}
	for name, s := range servers {
		cfg := rfcConfig(s, time.Hour)
		cfg.Name, cfg.RFC2136.Zones = name, []string{zones[name]}
		for i := range 2 {
			a, err := applier.New(cfg, logger())
			if err != nil {
				t.Fatal(err)
			}
			replica := timing
			replica.Identity = fmt.Sprintf("%s-%d", name, i) // one per live replica
			svc, err := stage.Election{Enabled: true, Config: replica}.Elected(a, logger())
			if err != nil {
				t.Fatal(err)
			}
			rctx, stop := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() { done <- svc.Run(rctx, js) }()
			t.Cleanup(func() { stop(); <-done })
		}
	}
	for name, z := range zones {
		plan := &events.Plan{ID: "plan-" + name, Provider: name, Zone: z, Changes: []events.Change{{New: ep("www."+z, "A", "192.0.2.7")}}}
		msg, err := events.Message(events.PlanSubject(name, z), plan, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := js.PublishMsg(ctx, msg); err != nil {
			t.Fatal(err)
		}
	}
	for name, z := range zones {
		waitFor(t, "the result of "+name+"'s plan", func() bool {
			raw := lastMsg(t, js, events.StreamResults, events.ResultSubject(name, z))
			var res events.Result
			return raw != nil && events.Unmarshal(raw.Header, raw.Data, &res) == nil && res.PlanID == "plan-"+name &&
				res.Status == events.ResultApplied
		})
		if got := aTargets(t, servers[name], "www."+z); !slices.Equal(got, []string{"192.0.2.7"}) {
			t.Fatalf("%s holds %v at www.%s", name, got, z)
		}
	}
	plans, err := js.Stream(ctx, events.StreamPlans)
	if err != nil {
		t.Fatal(err)
	}
	var durables []string
	names := plans.ConsumerNames(ctx)
	for name := range names.Name() {
		durables = append(durables, name)
	}
	if names.Err() != nil {
		t.Fatal(names.Err())
	}
	slices.Sort(durables)
	if want := []string{events.ApplierDurable("bind-a"), events.ApplierDurable("bind-b")}; !slices.Equal(durables, want) {
		t.Fatalf("durable consumers on %s: %v, want %v", events.StreamPlans, durables, want)
	}
	kv, err := js.KeyValue(ctx, events.BucketLeases)
	if err != nil {
		t.Fatal(err)
	}
	for name := range zones {
		if _, err := kv.Get(ctx, events.ApplierLease(name)); err != nil {
			t.Fatalf("no lease for %s: %v", name, err)
		}
	}
}
