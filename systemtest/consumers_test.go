package systemtest

import (
	"context"
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
)

// TestConsumersAreKnownOnlyToTheirMakers: NATS permissions cannot give
// an identity its own consumers only (a consumer's name is one subject
// token), so a reader could pull from or delete any consumer of a stream
// it reads whose name it knows. On the generated permissions a collector
// can neither list the consumers nor see them made, cannot touch the
// applier's durable, and the names the services' watches use are 128
// random bits, not a NUID.
func TestConsumersAreKnownOnlyToTheirMakers(t *testing.T) {
	b := startSecuredBus(t, []string{"a"}, []string{"inmemory"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// Dedup follows the desired state; the applier has its durable.
	dedup, _ := b.connectAs(t, events.DedupPermissions())
	for range 2 {
		if _, err := events.Watch(ctx, dedup, events.StreamDesired, []string{events.SubjectDesired + ".>"}, func(events.Received) {}); err != nil {
			t.Fatalf("dedup cannot watch the desired state: %v", err)
		}
	}
	applier, _ := b.connectAs(t, events.ApplierPermissions("inmemory"))
	durable := events.ApplierDurable("inmemory")
	if _, err := applier.CreateOrUpdateConsumer(ctx, events.StreamPlans, jetstream.ConsumerConfig{
		Durable: durable, FilterSubject: events.PlanFilter("inmemory"), AckPolicy: jetstream.AckExplicitPolicy,
	}); err != nil {
		t.Fatalf("the applier cannot make its durable: %v", err)
	}

	js, log := b.connectAs(t, events.CollectorPermissions("a"))
	desired, err := js.Stream(ctx, events.StreamDesired)
	if err != nil {
		t.Fatal(err)
	}
	refused(t, log, "publish", "$JS.API.CONSUMER.NAMES."+events.StreamDesired, func() error {
		names := desired.ConsumerNames(ctx)
		for range names.Name() {
		}
		return names.Err()
	})
	refused(t, log, "publish", "$JS.API.CONSUMER.LIST."+events.StreamDesired, func() error {
		infos := desired.ListConsumers(ctx)
		for range infos.Info() {
		}
		return infos.Err()
	})
	advisories := "$JS.EVENT.ADVISORY.CONSUMER.CREATED." + events.StreamDesired + ".*"
	refused(t, log, "subscribe", advisories, func() error {
		sub, err := js.Conn().SubscribeSync(advisories)
		if err != nil {
			return err
		}
		_, err = sub.NextMsg(2 * time.Second)
		if errors.Is(err, nats.ErrTimeout) {
			return nil // not refused
		}
		return err
	})
	for _, op := range []string{"INFO", "DELETE", "MSG.NEXT"} {
		subject := "$JS.API.CONSUMER." + op + "." + events.StreamPlans + "." + durable
		refused(t, log, "publish", subject, func() error {
			rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			if op == "MSG.NEXT" {
				_, err := js.Conn().RequestWithContext(rctx, subject, []byte(`{"batch":1}`))
				return err
			}
			if op == "DELETE" {
				return js.DeleteConsumer(rctx, events.StreamPlans, durable)
			}
			_, err := js.Consumer(rctx, events.StreamPlans, durable)
			return err
		})
	}

	// The watches' consumers, as the operator sees them: each a fresh
	// 128-bit name (26 characters of base32), then nats.go's serial.
	op, _ := b.connectAs(t, events.OperatorPermissions())
	st, err := op.Stream(ctx, events.StreamDesired)
	if err != nil {
		t.Fatal(err)
	}
	names := st.ConsumerNames(ctx)
	var got []string
	for n := range names.Name() {
		got = append(got, n)
	}
	if err := names.Err(); err != nil {
		t.Fatal(err)
	}
	secret := regexp.MustCompile(`^[A-Z2-7]{26}_[0-9]+$`)
	prefixes := map[string]bool{}
	for _, n := range got {
		if !secret.MatchString(n) {
			t.Errorf("consumer %q is not named by 128 random bits", n)
			continue
		}
		prefixes[n[:26]] = true
	}
	if len(got) != 2 || len(prefixes) != 2 {
		t.Errorf("the two watches made consumers %v, want two of different names", got)
	}
	if _, err := op.Consumer(ctx, events.StreamPlans, durable); err != nil {
		t.Errorf("the applier's durable is gone: %v", err)
	}
}
