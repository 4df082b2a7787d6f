package systemtest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kube"
	"github.com/zonestream/zonestream/testenv/walkthrough"
)

// TestPTRAndSeveralHostsEndToEnd runs the all-in-one binary with an
// ExternalDNS v0.22 command line against a real kube-apiserver and BIND
// serving a zone and its reverse zone: a Service annotated record-type: ptr
// gets its PTR record (and the ownership record beside it) and loses it
// when deleted. Of the two --rfc2136-host, the last never answers (BIND
// listens on 127.0.0.1 only): the hosts are a list asked from the first,
// not one flag the last occurrence overrides. (Failing over from a host
// that does not answer: the rfc2136 provider's
// TestSeveralHostsTheFirstThatAnswers.)
func TestPTRAndSeveralHostsEndToEnd(t *testing.T) {
	const zone, reverse = "e2e.test", "2.0.192.in-addr.arpa"
	cluster := kube.StartT(t)
	ns := bind.StartT(t, zone, reverse)
	args := []string{"--kubeconfig=" + cluster.Kubeconfig, "--source=service",
		"--nats-listen=127.0.0.1:0", "--data-dir=" + t.TempDir(), "--metrics-address=127.0.0.1:0", "--interval=2s"}
	args = append(args, rfc2136Flags(ns, zone, "e2e")...) // --rfc2136-host=127.0.0.1
	args = append(args, "--rfc2136-host=127.0.0.2", "--rfc2136-zone="+reverse, "--domain-filter="+reverse,
		"--managed-record-types=A", "--managed-record-types=AAAA", "--managed-record-types=CNAME", "--managed-record-types=PTR")
	startProcess(t, "zonestream", args...)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	w := walkthrough.Walk{Ctx: ctx, Kube: cluster.Client, DNS: ns, Zone: zone}
	if err := w.Create("web", map[string]string{"hostname": "web." + zone, "record-type": "ptr"}, "192.0.2.10"); err != nil {
		t.Fatal(err)
	}
	ptrName := "10." + reverse
	waitForRecords(t, ns, ptrName, dns.TypePTR, []string{"web." + zone + "."})
	waitForRecords(t, ns, "ptr-"+ptrName, dns.TypeTXT,
		[]string{"heritage=external-dns,external-dns/owner=e2e,external-dns/resource=service/default/web"})
	if err := w.Remove("web"); err != nil {
		t.Fatal(err)
	}
	waitForRecords(t, ns, ptrName, dns.TypePTR, nil)
	waitForRecords(t, ns, "ptr-"+ptrName, dns.TypeTXT, nil)
}

// waitForRecords waits until BIND answers name/qtype with exactly want, in
// any order (A addresses, PTR and CNAME targets, TXT first strings),
// nothing for an empty want.
func waitForRecords(t *testing.T, s *bind.Server, name string, qtype uint16, want []string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var got []string
	for {
		rrs, err := s.Query(name, qtype)
		got = got[:0]
		for _, rr := range rrs {
			switch r := rr.(type) {
			case *dns.A:
				got = append(got, r.A.String())
			case *dns.PTR:
				got = append(got, r.Ptr)
			case *dns.TXT:
				got = append(got, fmt.Sprint(r.Txt[0]))
			case *dns.CNAME:
				got = append(got, r.Target)
			case *dns.AAAA:
				got = append(got, r.AAAA.String())
			}
		}
		slices.Sort(got)
		if err == nil && slices.Equal(got, slices.Sorted(slices.Values(want))) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("BIND answers %s %s with %q (%v), want %q", name, dns.TypeToString[qtype], got, err, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
