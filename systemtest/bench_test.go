package systemtest

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kube"
)

// benchStack starts the all-in-one binary against a fresh cluster and BIND.
func benchStack(b *testing.B, zone string) (*kube.Cluster, *bind.Server) {
	cluster := kube.StartT(b)
	ns := bind.StartT(b, zone)
	args := append([]string{"--kubeconfig=" + cluster.Kubeconfig, "--source=service",
		"--nats-listen=127.0.0.1:0", "--data-dir=" + b.TempDir(), "--metrics-address=127.0.0.1:0", "--log-level=warn"},
		rfc2136Flags(ns, zone, "bench")...)
	startProcess(b, "zonestream", args...)
	return cluster, ns
}

// BenchmarkStatusToRecord measures, per iteration, the time from a
// Service's load-balancer status update to BIND answering the new address
// (run with -benchtime=20x for the median of 20).
func BenchmarkStatusToRecord(b *testing.B) {
	const zone = "bench.test"
	cluster, ns := benchStack(b, zone)
	ctx := context.Background()
	if err := createServices(ctx, cluster.Client, zone, 0, 1); err != nil {
		b.Fatal(err)
	}
	waitZone(b, ns, zone, []string{"@ NS ns." + zone, "a-svc-0 TXT heritage=external-dns,external-dns/owner=bench,external-dns/resource=service/default/svc-0",
		"ns A 127.0.0.1", "svc-0 A " + burstIP(0)}, time.Minute)
	var took []time.Duration
	b.ResetTimer()
	for i := range b.N {
		ip := fmt.Sprintf("192.0.2.%d", i%250+1)
		start, err := setServiceIP(ctx, cluster.Client, "svc-0", ip)
		if err != nil {
			b.Fatal(err)
		}
		took = append(took, awaitAnswer(b, ns, "svc-0."+zone, ip, start, 30*time.Second))
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(took[len(took)*9/10].Microseconds())/1000, "p90-ms")
	b.ReportMetric(float64(took[len(took)-1].Microseconds())/1000, "max-ms")
}

// BenchmarkConverge measures the time from creating N Services (with their
// status) to BIND holding exactly their records.
func BenchmarkConverge(b *testing.B) {
	for _, n := range []int{100, 500} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				zone := "converge.test"
				cluster, ns := benchStack(b, zone)
				ctx := context.Background()
				b.StartTimer()
				start := time.Now()
				if err := createServices(ctx, cluster.Client, zone, 0, n); err != nil {
					b.Fatal(err)
				}
				created := time.Since(start)
				want := burstZone(zone, "bench", n)
				want = slices.DeleteFunc(want, func(s string) bool { return s == "legacy A 192.0.2.99" })
				waitZone(b, ns, zone, want, 3*time.Minute)
				b.ReportMetric(time.Since(start).Seconds(), "converge-s")
				b.ReportMetric(created.Seconds(), "create-s")
			}
		})
	}
}

// setServiceIP gives Service name (in default) the load balancer address
// ip, and says when the status update was sent.
func setServiceIP(ctx context.Context, kc kubernetes.Interface, name, ip string) (time.Time, error) {
	svc, err := kc.CoreV1().Services("default").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return time.Time{}, err
	}
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: ip}}
	sent := time.Now()
	_, err = kc.CoreV1().Services("default").UpdateStatus(ctx, svc, metav1.UpdateOptions{})
	return sent, err
}

// awaitAnswer queries BIND for fqdn's A record until it answers ip alone,
// and says how long that took since start (limit at most).
func awaitAnswer(b *testing.B, ns *bind.Server, fqdn, ip string, start time.Time, limit time.Duration) time.Duration {
	b.Helper()
	for {
		rrs, err := ns.Query(fqdn, dns.TypeA)
		if err == nil && len(rrs) == 1 && rrs[0].(*dns.A).A.String() == ip {
			return time.Since(start)
		}
		if time.Since(start) > limit {
			b.Fatalf("BIND never answered %s for %s", ip, fqdn)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
