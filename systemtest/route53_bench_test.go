//go:build externaldns

package systemtest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/zonestream/zonestream/testenv/kube"
)

// BenchmarkRoute53 measures the all-in-one built with -tags externaldns
// against Route53 as moto emulates it, on loopback: one Service change
// until Route53 holds it (median of 10), and 1000 new Services until
// Route53 holds them all, with the change batches ExternalDNS' aws
// provider sent (ChangeResourceRecordSets calls, counted by a proxy in
// front of moto). moto answers in microseconds and never throttles: these
// are zonestream's and the provider code's times, not AWS'.
//
//	go test -tags externaldns -run '^$' -bench Route53 -benchtime=1x ./systemtest
func BenchmarkRoute53(b *testing.B) {
	const zone = "bench.test"
	for range b.N {
		cluster := kube.StartT(b)
		r53 := route53WithBatches(b)
		zoneID := r53.CreateZone(b, zone)
		startProcess(b, "zonestream", "--kubeconfig="+cluster.Kubeconfig, "--source=service",
			"--nats-listen=127.0.0.1:0", "--data-dir="+b.TempDir(), "--metrics-address=127.0.0.1:0",
			"--provider=aws", "--aws-zone-type=public", "--domain-filter="+zone,
			"--txt-owner-id=bench", "--policy=sync", "--registry=txt", "--interval=1m")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		services := cluster.Client.CoreV1().Services("default")
		holds := func(what string, limit time.Duration, ok func([]string) bool) {
			waitUntil(b, what, limit, func() error {
				got, err := r53.RecordSets(ctx, zoneID)
				if err == nil && !ok(got) {
					err = fmt.Errorf("%d record sets", len(got))
				}
				return err
			})
		}

		annotations := map[string]string{"external-dns.alpha.kubernetes.io/hostname": "web." + zone}
		if err := setLoadBalancer(ctx, services, "web", annotations, "192.0.2.1"); err != nil {
			b.Fatal(err)
		}
		holds("web", time.Minute, func(got []string) bool { return slices.Contains(got, "web."+zone+" A 192.0.2.1") })
		var took []time.Duration
		for i := range 10 {
			ip := fmt.Sprintf("192.0.2.%d", 10+i)
			start := time.Now()
			if err := setLoadBalancer(ctx, services, "web", nil, ip); err != nil {
				b.Fatal(err)
			}
			holds("web's change", time.Minute, func(got []string) bool { return slices.Contains(got, "web."+zone+" A "+ip) })
			took = append(took, time.Since(start))
		}
		slices.Sort(took)
		b.ReportMetric(float64((took[4]+took[5])/2)/float64(time.Millisecond), "change-median-ms")

		const n = 1000
		before := len(r53.Batches())
		start := time.Now()
		for i := range n {
			name := fmt.Sprintf("svc-%04d", i)
			ann := map[string]string{"external-dns.alpha.kubernetes.io/hostname": name + "." + zone}
			if err := setLoadBalancer(ctx, services, name, ann, fmt.Sprintf("10.1.%d.%d", i/250, i%250+1)); err != nil {
				b.Fatal(err)
			}
		}
		created := time.Since(start)
		// Each Service: an A and its ownership TXT; web: the same two.
		holds("1000 Services", 5*time.Minute, func(got []string) bool { return len(got) >= 2*n+2 })
		b.ReportMetric(created.Seconds(), "services-created-s")
		b.ReportMetric(time.Since(start).Seconds(), "services-in-route53-s")
		b.ReportMetric(float64(len(r53.Batches())-before), "batches")
		cancel()
	}
}
