package systemtest

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/zonestream/zonestream/cmd/zonestream/cli"
	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/testenv/kube"
	"github.com/zonestream/zonestream/testenv/natsenv"
	"github.com/zonestream/zonestream/testenv/walkthrough"

	"github.com/zonestream/zonestream/testenv/bind"
)

// noDeleteLimits turns the planner's mass-delete guard off, for tests
// whose Services come and go by the hundred.
var noDeleteLimits = []string{"--max-deletes=0", "--max-deletes-percent=0"}

// TestWrongFilterWipeIsHeldUntilApproved: the collector is restarted with
// a label filter no Service matches, so the pipeline decides that every
// record it owns is unwanted. With the planner's default limits the
// zone's deletes are held: BIND keeps every record, `zonestream plans`
// shows the hold with its changes, each Service gets a DeleteHeld Event,
// and `zonestream plans approve ID` lets the deletes through.
//
// (A wrong --namespace needs no guard: a collector watching another
// namespace leaves the objects of the old one watched by nobody, and dedup
// allows no delete at all then: README, Safety.)
func TestWrongFilterWipeIsHeldUntilApproved(t *testing.T) {
	const zone, owner = "guard.test", "guard"
	cluster := kube.StartT(t)
	ns := bind.StartT(t, zone)
	if err := walkthrough.Plant(ns, zone, "legacy."+zone+". 300 IN A 192.0.2.99"); err != nil {
		t.Fatal(err)
	}
	bus := natsenv.StartT(t)
	tap := tapPlans(t, bus.ClientURL())
	p := startStages(t, bus.ClientURL(), cluster, "guard", rfc2136Flags(ns, zone, owner), "--interval=2s")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if err := createServices(ctx, cluster.Client, zone, 0, 20); err != nil {
		t.Fatal(err)
	}
	all := zoneOf(zone, owner, svcRange(0, 20))
	waitZone(t, ns, zone, all, time.Minute)

	collector := p.stage("collector")
	collector.kill()
	// Events are written only as asked, as in ExternalDNS.
	startProcess(t, "collector --label-filter=team=nobody",
		append(slices.Clone(collector.args), "--label-filter=team=nobody", "--events-emit=DeleteHeld")...)

	_, js := natsenv.Connect(t, bus.ClientURL())
	var held events.HeldDeletes
	waitUntil(t, "the planner to hold the zone's deletes", 2*time.Minute, func() error {
		hs, err := cli.ReadHeld(ctx, js)
		if err != nil {
			return err
		}
		if len(hs) != 1 || hs[0].Deletes != 20 {
			return fmt.Errorf("held: %+v", hs)
		}
		held = hs[0]
		return nil
	})
	for _, name := range svcRange(0, 20) {
		if rrs, err := ns.Query(name+"."+zone, dns.TypeA); err != nil || len(rrs) != 1 {
			t.Fatalf("with the deletes held, BIND must still answer %s: %v %v", name, rrs, err)
		}
	}
	if got := zoneContents(t, ns, zone); !slices.Equal(got, all) {
		t.Fatalf("with the deletes held, BIND changed: %v", got)
	}
	if d := tap.deletedWanted(svcRange(0, 20)); len(d) > 0 {
		t.Fatalf("a plan deleted held records: %v", head(d))
	}

	out := zonestreamCommand(t, "plans", "--nats-url="+bus.ClientURL())
	for _, want := range []string{"held " + held.ID + "  rfc2136 " + zone + ": 20 deletes of 20 owned record sets",
		"  - svc-0." + zone + " A " + burstIP(0), "  - a-svc-0." + zone + " TXT heritage=external-dns"} {
		if !strings.Contains(out, want) {
			t.Fatalf("zonestream plans does not show %q:\n%s", want, out)
		}
	}
	svc, err := cluster.Client.CoreV1().Services("default").Get(ctx, "svc-7", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "a DeleteHeld Event on svc-7", time.Minute, func() error {
		list, err := cluster.Client.EventsV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.Regarding.UID == svc.UID && e.Type == "Warning" && e.Reason == "DeleteHeld" && strings.Contains(e.Note, held.ID) {
				return nil
			}
		}
		return fmt.Errorf("%d events, none DeleteHeld on svc-7", len(list.Items))
	})

	if out := zonestreamCommand(t, "plans", "approve", "--nats-url="+bus.ClientURL(), "--by=test", held.ID); !strings.Contains(out, "approved "+held.ID) {
		t.Fatalf("zonestream plans approve: %s", out)
	}
	waitZone(t, ns, zone, zoneOf(zone, owner, nil), time.Minute)
	waitUntil(t, "the hold to be cleared", 30*time.Second, func() error {
		if hs, err := cli.ReadHeld(ctx, js); err != nil || len(hs) > 0 {
			return fmt.Errorf("held: %+v %v", hs, err)
		}
		return nil
	})
}

// zonestreamCommand runs the zonestream binary with args and returns its
// output; it fails the test if the command fails.
func zonestreamCommand(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, binary, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("zonestream %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestPacedWipeIsHeld: 15 of 20 Services deleted one every 20 ms, as a
// helm uninstall or an Argo CD prune spreads a wipe, against BIND, which
// applies each delete in milliseconds. Each planning pass sees one or two
// deletes; the guard counts them over its window, so no more go than the
// default limits let one burst through (6 of 20: over 30% is held), and
// the rest is held in BIND until an operator approves.
func TestPacedWipeIsHeld(t *testing.T) {
	const zone, owner = "paced.test", "paced"
	cluster := kube.StartT(t)
	ns := bind.StartT(t, zone)
	if err := walkthrough.Plant(ns, zone, "legacy."+zone+". 300 IN A 192.0.2.99"); err != nil {
		t.Fatal(err)
	}
	bus := natsenv.StartT(t)
	startStages(t, bus.ClientURL(), cluster, "paced", rfc2136Flags(ns, zone, owner), "--interval=2s")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := createServices(ctx, cluster.Client, zone, 0, 20); err != nil {
		t.Fatal(err)
	}
	waitZone(t, ns, zone, zoneOf(zone, owner, svcRange(0, 20)), time.Minute)

	for _, name := range svcRange(0, 15) {
		if err := cluster.Client.CoreV1().Services("default").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	_, js := natsenv.Connect(t, bus.ClientURL())
	var held events.HeldDeletes
	waitUntil(t, "the planner to hold the rest of the wipe", time.Minute, func() error {
		hs, err := cli.ReadHeld(ctx, js)
		if err != nil {
			return err
		}
		if len(hs) != 1 || hs[0].Deletes+hs[0].Recent != 15 {
			return fmt.Errorf("held: %+v", hs)
		}
		held = hs[0]
		return nil
	})
	if held.Recent > 6 || held.Deletes < 9 {
		t.Fatalf("%d deleted within the window, %d held: over 30%% of 20 went", held.Recent, held.Deletes)
	}
	time.Sleep(3 * time.Second) // a delete let through would be in BIND by now
	kept := 0
	for _, name := range svcRange(0, 15) {
		if rrs, err := ns.Query(name+"."+zone, dns.TypeA); err == nil && len(rrs) == 1 {
			kept++
		}
	}
	if kept != held.Deletes {
		t.Fatalf("BIND keeps %d of the 15 deleted Services' records, want the %d held", kept, held.Deletes)
	}
	t.Logf("paced wipe: %d deleted within the window, %d held", held.Recent, held.Deletes)
}
