package systemtest

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zonestream/zonestream/cmd/zonestream/cli"
	"github.com/zonestream/zonestream/testenv/walkthrough"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kube"
	"github.com/zonestream/zonestream/testenv/natsenv"
)

var (
	haChanges      = flag.Int("ha.changes", 1000, "Services created in TestTwoReplicasOfEveryStageSurviveTheLeadersKill")
	haDefaultLease = flag.Bool("ha.default-lease", false, "TestTwoReplicasOfEveryStageSurviveTheLeadersKill with the default lease timing (15s, 10s, 2s) rather than 2s, 1.5s, 250ms")
)

// TestTwoReplicasOfEveryStageSurviveTheLeadersKill runs two replicas of
// every stage as separate processes over one NATS, and SIGKILLs the leader
// of each stage, all four at once, a third of the way into a burst of
// Services. The standbys take over once the leases lapse; BIND ends exactly
// as the Services ask, no plan deletes a wanted record and no plan fails.
func TestTwoReplicasOfEveryStageSurviveTheLeadersKill(t *testing.T) {
	const zone, owner, clusterName = "ha.test", "ha", "ha"
	n := *haChanges
	cluster := kube.StartT(t)
	ns := bind.StartT(t, zone)
	if err := walkthrough.Plant(ns, zone, "legacy."+zone+". 300 IN A 192.0.2.99"); err != nil {
		t.Fatal(err)
	}
	bus := natsenv.StartT(t)
	tap := tapPlans(t, bus.ClientURL())
	results := tapResults(t, bus.ClientURL())
	var replicas [2]*pipeline
	for r := range replicas {
		extra := map[string][]string{}
		for _, def := range cli.Stages() {
			name := def.Name
			extra[name] = []string{fmt.Sprintf("--leader-elect-identity=%s-%d", name, r)}
			if *haDefaultLease {
				extra[name] = append(extra[name], defaultLease...)
			}
		}
		replicas[r] = startStagesWith(t, bus.ClientURL(), cluster, clusterName, rfc2136Flags(ns, zone, owner), extra, "--interval=5s")
	}
	leases := map[string]string{
		"collector": events.CollectorLease(clusterName, events.CollectorID([]string{"service"}, "")),
		"dedup":     events.DedupLease(), "planner": events.PlannerLease(), "applier": events.ApplierLease("rfc2136"),
	}
	_, js := natsenv.Connect(t, bus.ClientURL())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	holders := func() map[string]string {
		out := map[string]string{}
		for st, key := range leases {
			out[st] = leaseHolder(ctx, js, key)
		}
		return out
	}
	waitUntil(t, "a leader for every stage", time.Minute, func() error {
		for st, h := range holders() {
			if h == "" {
				return fmt.Errorf("%s has no leader", st)
			}
		}
		return nil
	})
	if err := createServices(ctx, cluster.Client, zone, 0, n/3); err != nil {
		t.Fatal(err)
	}

	// Kill every stage's leader at once, mid-burst, and go on creating.
	killed := holders()
	// Until then each standby stood by: its stage never ran.
	for st, h := range killed {
		standby := replicas[1-int(h[len(h)-1]-'0')].stage(st)
		if log := standby.log.String(); strings.Contains(log, "acquired the lease") || !strings.Contains(log, "standing by") {
			t.Fatalf("the %s standby did not stand by:\n%s", st, lastBytes([]byte(log), 2048))
		}
	}
	killAt := time.Now()
	for st, h := range killed {
		r := int(h[len(h)-1] - '0')
		replicas[r].stage(st).kill()
	}
	t.Logf("killed (SIGKILL) the leaders %v after %d of %d Services", killed, n/3, n)
	takeover := make(chan string, len(leases))
	var took sync.Map
	for st, key := range leases {
		go func() {
			for ctx.Err() == nil {
				if h := leaseHolder(ctx, js, key); h != "" && h != killed[st] {
					took.Store(st, time.Since(killAt))
					takeover <- st
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	if err := createServices(ctx, cluster.Client, zone, n/3, n); err != nil {
		t.Fatal(err)
	}
	for range leases {
		select {
		case <-takeover:
		case <-time.After(time.Minute):
			t.Fatal("a stage's standby did not take over within a minute")
		}
	}
	converged := waitZone(t, ns, zone, burstZone(zone, owner, n), 3*time.Minute)
	var figures []string
	for _, st := range []string{"collector", "dedup", "planner", "applier"} {
		d, _ := took.Load(st)
		figures = append(figures, fmt.Sprintf("%s %s", st, d.(time.Duration).Round(time.Millisecond)))
	}
	timing := "lease 2s, renew deadline 1.5s, retry 250ms"
	if *haDefaultLease {
		timing = "lease 15s, renew deadline 10s, retry 2s"
	}
	t.Logf("standbys took over after the kill: %s (%s)", strings.Join(figures, ", "), timing)
	t.Logf("%d Services converged in BIND %s after the kill (%s after the last was created)",
		n, time.Since(killAt).Round(time.Millisecond), converged.Round(time.Millisecond))

	if d := tap.deletedWanted(svcRange(0, n)); len(d) > 0 {
		t.Fatalf("plans deleted wanted records: %v", head(d))
	}
	if c := results.counts(); c[events.ResultFailed] > 0 {
		t.Fatalf("plans failed: %v", c)
	} else {
		t.Logf("plan results: %v", c)
	}
	// Each survivor took its stage over once; each stage had one leader at a time.
	for st, h := range killed {
		survivor := replicas[1-int(h[len(h)-1]-'0')].stage(st)
		if got := strings.Count(survivor.log.String(), "acquired the lease"); got != 1 {
			t.Errorf("the surviving %s acquired its lease %d times, want once", st, got)
		}
	}
}

// leaseHolder is who holds the lease key ("" when no one does: never
// written, gone, or released on a clean stop).
func leaseHolder(ctx context.Context, js jetstream.JetStream, key string) string {
	kv, err := js.KeyValue(ctx, events.BucketLeases)
	if err != nil {
		return ""
	}
	e, err := kv.Get(ctx, key)
	if err != nil {
		return ""
	}
	var rec struct {
		Holder   string
		Released bool
	}
	if json.Unmarshal(e.Value(), &rec) != nil || rec.Released {
		return ""
	}
	return rec.Holder
}

// resultTap counts the results of plans by status.
type resultTap struct {
	mu sync.Mutex
	by map[events.ResultStatus]int
}

func tapResults(t *testing.T, url string) *resultTap {
	t.Helper()
	nc, _ := natsenv.Connect(t, url)
	tap := &resultTap{by: map[events.ResultStatus]int{}}
	_, err := nc.Subscribe(events.SubjectResults+".>", func(m *nats.Msg) {
		var r events.Result
		if err := events.Unmarshal(m.Header, m.Data, &r); err != nil {
			t.Errorf("undecodable result: %v", err)
			return
		}
		tap.mu.Lock()
		tap.by[r.Status]++
		tap.mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	return tap
}

func (r *resultTap) counts() map[events.ResultStatus]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[events.ResultStatus]int{}
	for k, v := range r.by {
		out[k] = v
	}
	return out
}
