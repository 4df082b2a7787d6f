package systemtest

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kube"
)

// TestNodePortSRV follows a NodePort Service to BIND: an A record per node
// address and an SRV record per node port, each with its ownership, and
// then silence: a resync of what BIND holds must not look like a change.
func TestNodePortSRV(t *testing.T) {
	const zone = "np.test"
	cluster := kube.StartT(t)
	ns := bind.StartT(t, zone)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for i, ip := range []string{"192.0.2.31", "192.0.2.32"} {
		node, err := cluster.Client.CoreV1().Nodes().Create(ctx, &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%d", i)}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: ip},
			{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.0.0.%d", i+1)}}
		if _, err := cluster.Client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	svc, err := cluster.Client.CoreV1().Services("default").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "game", Namespace: "default",
			Annotations: map[string]string{"external-dns.alpha.kubernetes.io/hostname": "game." + zone}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Selector: map[string]string{"app": "game"},
			Ports: []corev1.ServicePort{{Name: "play", Port: 7777, Protocol: corev1.ProtocolUDP}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nodePort := svc.Spec.Ports[0].NodePort

	args := append([]string{"--kubeconfig=" + cluster.Kubeconfig, "--source=service",
		"--managed-record-types=A,AAAA,CNAME,SRV", "--interval=1s",
		"--nats-listen=127.0.0.1:0", "--data-dir=" + t.TempDir(), "--metrics-address=127.0.0.1:0"},
		rfc2136Flags(ns, zone, "np")...)
	p := startProcess(t, "zonestream", args...)

	owner := "heritage=external-dns,external-dns/owner=np,external-dns/resource=service/default/game"
	want := sorted([]string{
		"@ NS ns." + zone, "ns A 127.0.0.1",
		"game A 192.0.2.31", "game A 192.0.2.32", "a-game TXT " + owner,
		fmt.Sprintf("_game._udp.game SRV 0 50 %d game.%s", nodePort, zone), "srv-_game._udp.game TXT " + owner,
	})
	waitZone(t, ns, zone, want, time.Minute)

	planned := func() int {
		p.mu.Lock()
		defer p.mu.Unlock()
		return bytes.Count(p.log.Bytes(), []byte("msg=planned"))
	}
	before := planned()
	time.Sleep(3 * time.Second) // three full re-listings of the zone
	if after := planned(); after != before {
		t.Fatalf("%d plans after the zone matched: what BIND holds is not read back as what was wanted\n%s",
			after-before, strings.Join(zoneContents(t, ns, zone), "\n"))
	}
}
