package systemtest

import (
	"context"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kube"
)

// TestObjectsOfOneSourceAreUnited: as ExternalDNS' sources merge their
// endpoints (MergeEndpoints), the hostNetwork Pods of a DaemonSet under one
// hostname give one A record with every Pod's address, and two Services
// with one hostname give one A record with both load balancers'. A Pod that
// goes takes only its own address with it.
func TestObjectsOfOneSourceAreUnited(t *testing.T) {
	const zone = "united.test"
	cluster := kube.StartT(t)
	ns := bind.StartT(t, zone)
	args := []string{"--kubeconfig=" + cluster.Kubeconfig, "--source=service", "--source=pod",
		"--nats-listen=127.0.0.1:0", "--data-dir=" + t.TempDir(), "--metrics-address=127.0.0.1:0", "--interval=2s"}
	startProcess(t, "zonestream", append(args, rfc2136Flags(ns, zone, "united")...)...)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pods := cluster.Client.CoreV1().Pods("default")
	for i, ip := range []string{"192.0.2.11", "192.0.2.12", "192.0.2.13"} {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "agent-" + string(rune('a'+i)), Namespace: "default",
				Labels:      map[string]string{"app": "agent"},
				Annotations: map[string]string{"external-dns.alpha.kubernetes.io/internal-hostname": "agents." + zone}},
			Spec: corev1.PodSpec{HostNetwork: true, NodeName: "node-" + string(rune('a'+i)),
				Containers: []corev1.Container{{Name: "agent", Image: "agent"}}},
		}
		created, err := pods.Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		created.Status.PodIP, created.Status.PodIPs = ip, []corev1.PodIP{{IP: ip}}
		created.Status.HostIP = ip
		if _, err := pods.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	services := cluster.Client.CoreV1().Services("default")
	hostname := map[string]string{"external-dns.alpha.kubernetes.io/hostname": "web." + zone}
	for name, ip := range map[string]string{"web-eu": "198.51.100.4", "web-us": "198.51.100.5"} {
		if err := setLoadBalancer(ctx, services, name, hostname, ip); err != nil {
			t.Fatal(err)
		}
	}

	waitForRecords(t, ns, "agents."+zone, dns.TypeA, []string{"192.0.2.11", "192.0.2.12", "192.0.2.13"})
	waitForRecords(t, ns, "web."+zone, dns.TypeA, []string{"198.51.100.4", "198.51.100.5"})

	// One Pod of the DaemonSet goes: its address alone goes with it.
	now := int64(0) // no kubelet here to finish a graceful deletion
	if err := pods.Delete(ctx, "agent-b", metav1.DeleteOptions{GracePeriodSeconds: &now}); err != nil {
		t.Fatal(err)
	}
	waitForRecords(t, ns, "agents."+zone, dns.TypeA, []string{"192.0.2.11", "192.0.2.13"})

	// Both Services go: the record and its ownership go too.
	for _, name := range []string{"web-eu", "web-us"} {
		if err := services.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitForRecords(t, ns, "web."+zone, dns.TypeA, nil)
	waitForRecords(t, ns, "a-web."+zone, dns.TypeTXT, nil)
}
