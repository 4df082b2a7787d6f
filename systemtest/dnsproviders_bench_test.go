package systemtest

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kube"
	"github.com/zonestream/zonestream/testenv/loopback"
)

// The objects that declare DNS providers (zonestream.io/v1alpha1).
var (
	dnsProviders        = schema.GroupVersionResource{Group: "zonestream.io", Version: "v1alpha1", Resource: "dnsproviders"}
	clusterDNSProviders = schema.GroupVersionResource{Group: "zonestream.io", Version: "v1alpha1", Resource: "clusterdnsproviders"}
)

// idleDeclared is how many DNSProviders BenchmarkIdleDeclaredProviders
// declares at once.
const idleDeclared = 20

// BenchmarkIdleDeclaredProviders is what a declared provider costs: the
// all-in-one with --dnsproviders and none declared, at rest, then with 20
// DNSProviders (rfc2136, each its own zone of one BIND, each with one
// record, --interval=1m), at rest. It reports the process's CPU-seconds per
// idle minute and RSS each time, and the mean time from a DNSProvider's
// creation to its first record answered by BIND (a DNSEndpoint waiting for
// it). Not in the test command: about nine minutes.
func BenchmarkIdleDeclaredProviders(b *testing.B) {
	for range b.N {
		benchIdleDeclared(b)
	}
}

func benchIdleDeclared(b *testing.B) {
	b.StopTimer()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	zones := make([]string, idleDeclared)
	for i := range zones {
		zones[i] = fmt.Sprintf("team%d.idle.test", i)
	}
	cluster := kube.StartT(b, "../deploy/crds")
	ns := bind.StartT(b, zones...)
	dyn, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		b.Fatal(err)
	}
	p := startProcess(b, "zonestream", "--kubeconfig="+cluster.Kubeconfig, "--source=crd", "--interval=1m", "--dnsproviders",
		"--nats-listen=127.0.0.1:0", "--data-dir="+b.TempDir(), "--metrics-address="+loopback.Addr(b), "--log-level=warn")
	pid := p.cmd.Process.Pid
	time.Sleep(idleSettle)
	before := cpuSeconds(b, pid)
	time.Sleep(2 * time.Minute)
	b.ReportMetric((cpuSeconds(b, pid)-before)/2, "idle-cpu-s/min-none")
	b.ReportMetric(statusMiB(b, pid, "VmRSS"), "rss-MiB-none")

	var toFirst time.Duration
	for i, zone := range zones {
		team := fmt.Sprintf("team%d", i)
		if _, err := cluster.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: team}},
			metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		if _, err := cluster.Client.CoreV1().Secrets(team).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "dns"},
			StringData: map[string]string{"rfc2136-tsig-secret": ns.Secret}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		ep := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "externaldns.k8s.io/v1alpha1", "kind": "DNSEndpoint",
			"metadata": map[string]any{"name": "www", "namespace": team},
			"spec": map[string]any{"endpoints": []any{map[string]any{
				"dnsName": "www." + zone, "recordType": "A", "targets": []any{"192.0.2.7"}}}},
		}}
		if _, err := dyn.Resource(dnsEndpoints).Namespace(team).Create(ctx, ep, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		dp := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "zonestream.io/v1alpha1", "kind": "DNSProvider",
			"metadata": map[string]any{"name": "dns", "namespace": team},
			"spec": map[string]any{
				"provider": "rfc2136",
				"settings": map[string]any{"rfc2136-host": "127.0.0.1", "rfc2136-port": strconv.Itoa(ns.Port), "rfc2136-zone": zone,
					"rfc2136-tsig-keyname": ns.KeyName, "rfc2136-tsig-secret-alg": ns.Algorithm, "rfc2136-tsig-axfr": "true"},
				"credentials": map[string]any{"secretRef": map[string]any{"name": "dns"}},
			}}}
		created := time.Now()
		if _, err := dyn.Resource(dnsProviders).Namespace(team).Create(ctx, dp, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		for {
			if rrs, err := ns.Query("www."+zone, dns.TypeA); err == nil && len(rrs) == 1 {
				break
			}
			if ctx.Err() != nil {
				b.Fatalf("www.%s never answered", zone)
			}
			time.Sleep(10 * time.Millisecond)
		}
		toFirst += time.Since(created)
	}
	b.ReportMetric(toFirst.Seconds()*1000/idleDeclared, "ms-creation-to-first-record")

	time.Sleep(idleSettle)
	before = cpuSeconds(b, pid)
	b.StartTimer()
	time.Sleep(2 * time.Minute)
	b.StopTimer()
	b.ReportMetric((cpuSeconds(b, pid)-before)/2, fmt.Sprintf("idle-cpu-s/min-%d", idleDeclared))
	b.ReportMetric(statusMiB(b, pid, "VmRSS"), fmt.Sprintf("rss-MiB-%d", idleDeclared))
}
