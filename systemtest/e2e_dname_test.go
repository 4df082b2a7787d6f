package systemtest

import (
	"context"
	"testing"
	"time"

	"github.com/miekg/dns"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kube"
)

// TestDNAMEEndToEnd: a DNSEndpoint asking for a DNAME record (ExternalDNS
// v0.22's DNAME), with DNAME among --managed-record-types, becomes a DNAME
// in BIND with its ownership record ("dname-" as ExternalDNS names it), and
// both go when the DNSEndpoint does.
func TestDNAMEEndToEnd(t *testing.T) {
	const zone = "dname.test"
	cluster := kube.StartT(t, "../deploy/crds")
	ns := bind.StartT(t, zone)
	args := []string{"--kubeconfig=" + cluster.Kubeconfig, "--source=crd",
		"--nats-listen=127.0.0.1:0", "--data-dir=" + t.TempDir(), "--metrics-address=127.0.0.1:0", "--interval=2s",
		"--managed-record-types=A", "--managed-record-types=DNAME"}
	startProcess(t, "zonestream", append(args, rfc2136Flags(ns, zone, "dname")...)...)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dyn, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "externaldns.k8s.io/v1alpha1", "kind": "DNSEndpoint",
		"metadata": map[string]any{"name": "old", "namespace": "default"},
		"spec": map[string]any{"endpoints": []any{map[string]any{
			"dnsName": "old." + zone, "recordType": "DNAME", "targets": []any{"new.example.org"}}}},
	}}
	if _, err := dyn.Resource(dnsEndpoints).Namespace("default").Create(ctx, u, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForDNAME(t, ns, "old."+zone, "new.example.org.")
	waitForRecords(t, ns, "dname-old."+zone, dns.TypeTXT,
		[]string{"heritage=external-dns,external-dns/owner=dname,external-dns/resource=crd/default/old"})

	if err := dyn.Resource(dnsEndpoints).Namespace("default").Delete(ctx, "old", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForDNAME(t, ns, "old."+zone, "")
	waitForRecords(t, ns, "dname-old."+zone, dns.TypeTXT, nil)
}

// waitForDNAME waits until BIND's DNAME at name is target ("" for none).
func waitForDNAME(t *testing.T, s *bind.Server, name, target string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		rrs, err := s.Query(name, dns.TypeDNAME)
		got := ""
		for _, rr := range rrs {
			if d, ok := rr.(*dns.DNAME); ok && d.Header().Name == dns.Fqdn(name) {
				got = d.Target
			}
		}
		if err == nil && got == target {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("BIND's DNAME at %s is %q (%v), want %q", name, got, err, target)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
