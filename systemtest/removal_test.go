package systemtest

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"

	"github.com/zonestream/zonestream/cmd/zonestream/cli"
)

// TestNoIdentityRemovesWhatOthersWrote: under the generated permissions,
// cluster a's collector publishes its own object, then its own lease, with
// "Nats-Rollup: all" (nats-server checks no permission on that header):
// both are refused, and cluster b's object and mark, a's own last state
// and the dedup, planner and applier leases are all still there.
func TestNoIdentityRemovesWhatOthersWrote(t *testing.T) {
	b := startSecuredBus(t, []string{"a", "b"}, []string{"inmemory"})
	ctx := context.Background()
	clusterB, other := b.withObjectOfB(t)
	mark := events.CollectorSubject("b", "service")
	if _, _, err := events.Publish(ctx, clusterB, mark, &events.CollectorState{CollectorRef: events.CollectorRef{Cluster: "b", Collector: "service"}}, ""); err != nil {
		t.Fatal(err)
	}
	leases := map[string]events.Permissions{events.DedupLease(): events.DedupPermissions(),
		events.PlannerLease(): events.PlannerPermissions(), events.ApplierLease("inmemory"): events.ApplierPermissions("inmemory")}
	for key, p := range leases {
		js, _ := b.connectAs(t, p)
		kv, err := js.KeyValue(ctx, events.BucketLeases)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := kv.Create(ctx, key, []byte("{}")); err != nil {
			t.Fatalf("%s cannot take its lease: %v", p.Identity, err)
		}
	}

	a, _ := b.connectAs(t, events.CollectorPermissions("a"))
	own := events.SourceSubject("a", "service", "default", "web")
	if _, _, err := events.Publish(ctx, a, own, sourceEvent("a"), ""); err != nil {
		t.Fatal(err)
	}
	rollup := func(subject string, data []byte) error {
		msg := nats.NewMsg(subject)
		msg.Data = data
		msg.Header.Set(jetstream.MsgRollup, jetstream.MsgRollupAll)
		_, err := a.PublishMsg(ctx, msg)
		return err
	}
	forged, err := events.Message(own, sourceEvent("a"), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := rollup(own, forged.Data); err == nil {
		t.Error("a rollup on a's own object was accepted")
	}
	if err := rollup("$KV."+events.BucketLeases+"."+events.CollectorLease("a", "service"), []byte("{}")); err == nil {
		t.Error("a rollup on a's own lease was accepted")
	}

	op, _ := b.connectAs(t, events.OperatorPermissions())
	sources, err := op.Stream(ctx, events.StreamSources)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{other, mark, own} {
		if _, err := sources.GetLastMsgForSubject(ctx, s); err != nil {
			t.Errorf("%s is gone: %v", s, err)
		}
	}
	kv, err := op.KeyValue(ctx, events.BucketLeases)
	if err != nil {
		t.Fatal(err)
	}
	for key := range leases {
		if _, err := kv.Get(ctx, key); err != nil {
			t.Errorf("lease %s is gone: %v", key, err)
		}
	}
}

// TestFullStreamRefusesAnIdentityAndKeepsLiveState: cluster a's collector
// fills ZS_SOURCES (its bound lowered by the operator, as a disk filled
// by one identity would): its next new object is refused with
// ErrStreamFull, and no state of a or b is dropped to make room.
func TestFullStreamRefusesAnIdentityAndKeepsLiveState(t *testing.T) {
	b := startSecuredBus(t, []string{"a", "b"}, []string{"inmemory"})
	ctx := context.Background()
	clusterB, other := b.withObjectOfB(t)
	op, _ := b.connectAs(t, events.OperatorPermissions())
	sources, err := op.Stream(ctx, events.StreamSources)
	if err != nil {
		t.Fatal(err)
	}
	const bound = 4
	cfg := sources.CachedInfo().Config
	cfg.MaxMsgs = bound
	if _, err := op.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}

	a, _ := b.connectAs(t, events.CollectorPermissions("a"))
	var mine []string
	for i := 0; ; i++ {
		if i > bound {
			t.Fatalf("%d objects stored in a stream bounded to %d", i, bound)
		}
		ev := sourceEvent("a")
		ev.Object.Name = "web-" + string(rune('a'+i))
		_, _, err := events.Publish(ctx, a, ev.Object.Subject(), ev, "")
		if errors.Is(err, events.ErrStreamFull) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		mine = append(mine, ev.Object.Subject())
	}
	if len(mine) != bound-1 {
		t.Errorf("a stored %d objects beside b's before the stream was full, want %d", len(mine), bound-1)
	}
	for _, s := range append(mine, other) {
		if _, err := sources.GetLastMsgForSubject(ctx, s); err != nil {
			t.Errorf("%s was dropped: %v", s, err)
		}
	}
	// A new state of an object the stream holds still replaces the old.
	if _, _, err := events.Publish(ctx, clusterB, other, sourceEvent("b"), ""); err != nil {
		t.Errorf("b cannot update its object in the full stream: %v", err)
	}
}

// TestMonitoringStaysOnLoopback: the monitoring port nats-config enables
// has no authentication, so by default it listens on loopback only.
func TestMonitoringStaysOnLoopback(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "nats.conf")
	conf, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer conf.Close()
	if err := cli.NatsConfigCommand([]string{"--out-dir=" + dir, "--cluster=a", "--provider=inmemory"}, conf, io.Discard); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if opts.HTTPHost != "127.0.0.1" || opts.HTTPPort != 8222 {
		t.Errorf("monitoring listens on %s:%d, want 127.0.0.1:8222", opts.HTTPHost, opts.HTTPPort)
	}
}

// withObjectOfB connects as cluster b's collector and publishes one of its
// objects: what cluster a must not be able to remove.
func (b *securedBus) withObjectOfB(t *testing.T) (jetstream.JetStream, string) {
	t.Helper()
	js, _ := b.connectAs(t, events.CollectorPermissions("b"))
	subject := events.SourceSubject("b", "service", "default", "web")
	if _, _, err := events.Publish(context.Background(), js, subject, sourceEvent("b"), ""); err != nil {
		t.Fatal(err)
	}
	return js, subject
}
