package systemtest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zonestream/zonestream/cmd/zonestream/cli"
	"github.com/zonestream/zonestream/testenv/loopback"
	"github.com/zonestream/zonestream/testenv/walkthrough"

	"github.com/nats-io/nats-server/v2/server"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kube"
	"github.com/zonestream/zonestream/testenv/natsenv"
)

// TestTwoClustersOneBus: two real clusters, a collector each, feed one
// dedup, planner and applier. Cluster a's collector talks to the bus
// directly; cluster b's through a NATS leaf node of its own, the topology
// for remote clusters (README). Names of both converge; a name both want
// is served by both (--cluster-policy=merge); cluster b falls silent and
// its records stay; once b is retired its records go and a's stay.
func TestTwoClustersOneBus(t *testing.T) {
	const zone, owner = "multi.test", "multi"
	a, b := kube.StartT(t), kube.StartT(t)
	ns := bind.StartT(t, zone)
	if err := walkthrough.Plant(ns, zone, "legacy."+zone+". 300 IN A 192.0.2.99"); err != nil {
		t.Fatal(err)
	}
	leafPort, err := loopback.Port(false)
	if err != nil {
		t.Fatal(err)
	}
	bus := natsenv.StartT(t, func(o *server.Options) {
		o.JetStreamDomain, o.LeafNode.Host, o.LeafNode.Port = "hub", "127.0.0.1", leafPort
	})
	leaf := startLeaf(t, fmt.Sprintf("nats-leaf://127.0.0.1:%d", leafPort))
	startStages(t, bus.ClientURL(), a, "a", rfc2136Flags(ns, zone, owner), "--interval=2s")
	collectorB := startProcess(t, "collector-b", "collector", "--nats-url="+leaf.ClientURL(), "--nats-js-domain=hub", "--metrics-address=127.0.0.1:0",
		"--kubeconfig="+b.Kubeconfig, "--source=service", "--cluster-name=b", "--heartbeat-interval=1s")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	lb := func(c *kube.Cluster, name, host, ip string) {
		t.Helper()
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Annotations: map[string]string{
				"external-dns.alpha.kubernetes.io/hostname": host + "." + zone}},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 80}}},
		}
		created, err := c.Client.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		created.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: ip}}
		if _, err := c.Client.CoreV1().Services("default").UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	lb(a, "app", "app-a", "192.0.2.1")
	lb(b, "app", "app-b", "192.0.2.2")
	lb(a, "web", "www", "192.0.2.10")
	lb(b, "web", "www", "192.0.2.20")
	txt := func(host, res string) string {
		return "a-" + host + " TXT heritage=external-dns,external-dns/owner=" + owner + ",external-dns/resource=" + res
	}
	base := []string{"@ NS ns." + zone, "ns A 127.0.0.1", "legacy A 192.0.2.99"}
	both := sorted(append(slices.Clone(base),
		"app-a A 192.0.2.1", txt("app-a", "service/default/app"),
		"app-b A 192.0.2.2", txt("app-b", "service/default/app"),
		// Wanted by both clusters: served by both, owned by no single object.
		"www A 192.0.2.10", "www A 192.0.2.20", strings.TrimSuffix(txt("www", ""), ",external-dns/resource=")))
	start := time.Now()
	took := waitZone(t, ns, zone, both, time.Minute)
	t.Logf("two clusters converged %s after the last Service", took)

	// b falls silent: its records stay, and so does everything else.
	collectorB.kill()
	lb(a, "new", "new-a", "192.0.2.3")
	time.Sleep(5 * time.Second) // well past b's lease (3s)
	got := zoneContents(t, ns, zone)
	for _, r := range both {
		if _, ok := slices.BinarySearch(got, r); !ok {
			t.Fatalf("with cluster b silent, %q went from BIND", r)
		}
	}

	// b is retired: its records go, a's stay (www keeps a's address only).
	_, js := natsenv.Connect(t, bus.ClientURL())
	if _, err := cli.RetireCluster(ctx, js, "b", false, time.Now()); err != nil {
		t.Fatal(err)
	}
	onlyA := sorted(append(slices.Clone(base),
		"app-a A 192.0.2.1", txt("app-a", "service/default/app"),
		"new-a A 192.0.2.3", txt("new-a", "service/default/new"),
		"www A 192.0.2.10", txt("www", "service/default/web")))
	waitZone(t, ns, zone, onlyA, time.Minute)
	t.Logf("b retired; a alone %s after the start", time.Since(start).Round(time.Millisecond))
}

// startLeaf runs a NATS leaf node without JetStream of its own, connected
// to the hub at remote: its clients reach the hub's streams through the
// hub's JetStream domain.
func startLeaf(t *testing.T, remote string) *server.Server {
	t.Helper()
	u, err := url.Parse(remote)
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.NewServer(&server.Options{ServerName: "leaf", Host: "127.0.0.1", Port: server.RANDOM_PORT,
		NoSigs: true, NoLog: true, LeafNode: server.LeafNodeOpts{Remotes: []*server.RemoteLeafOpts{{URLs: []*url.URL{u}}}}})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	waitUntil(t, "the leaf node connected to the hub", 20*time.Second, func() error {
		if s.NumLeafNodes() == 0 {
			return errors.New("not connected")
		}
		return nil
	})
	return s
}
