package main

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/miekg/dns"

	corednsenv "github.com/zonestream/zonestream/testenv/coredns"
	"github.com/zonestream/zonestream/testenv/kube"
	"github.com/zonestream/zonestream/testenv/natsenv"
)

// corednsFlags is the command line for a CoreDNS served from etcd: the
// ExternalDNS flags for the planner, the etcd endpoint and zone for the
// applier.
func corednsFlags(s *corednsenv.Server, zone, owner string) (pipeline, applier []string) {
	return []string{
			"--provider=coredns", "--domain-filter=" + zone, "--txt-owner-id=" + owner, "--policy=sync", "--registry=txt",
		}, []string{
			"--coredns-etcd-urls=" + s.EtcdURL, "--coredns-zone=" + zone, "--coredns-prefix=" + s.Path + "/",
		}
}

// TestCoreDNSPipeline runs the four stages with the coredns provider over a
// real etcd and CoreDNS: Services become records CoreDNS answers, with
// their ownership TXT; a record zonestream owns, edited by hand in etcd, is
// put back after the next full listing; a record it does not own is never
// touched.
func TestCoreDNSPipeline(t *testing.T) {
	const n, interval = 3, 2 * time.Second
	zone, owner := "pipeline-coredns.test", "pipeline-coredns"
	from := 9000
	cluster := kube.StartT(t)
	srv := corednsenv.StartT(t, zone)
	manual := "manual." + zone
	if err := srv.Put(srv.Key(manual, ""), `{"host":"192.0.2.77","ttl":300}`); err != nil {
		t.Fatal(err)
	}
	bus := natsenv.StartT(t)
	flags, applierFlags := corednsFlags(srv, zone, owner)
	startStages(t, bus.ClientURL(), cluster, owner, flags, append(applierFlags, "--interval="+interval.String())...)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := createServices(ctx, cluster.Client, zone, from, from+n); err != nil {
		t.Fatal(err)
	}
	served := func() error {
		if wrong := wrongServices(srv, zone, owner, from, from+n); len(wrong) > 0 {
			return fmt.Errorf("%s", summarize(wrong))
		}
		return nil
	}
	waitUntil(t, "the Services' records", time.Minute, served)

	// Hand edit: every etcd entry of the owned A record now says 192.0.2.200.
	edited := fmt.Sprintf("svc-%d.%s", from, zone)
	keys, err := srv.Keys(srv.Key(edited, "") + "/")
	if err != nil || len(keys) == 0 {
		t.Fatalf("keys of %s: %v %v", edited, keys, err)
	}
	for k := range keys {
		if err := srv.Put(k, `{"host":"192.0.2.200","ttl":300,"targetstrip":1}`); err != nil {
			t.Fatal(err)
		}
	}
	if got := answersOf(srv, edited, dns.TypeA); !slices.Equal(got, []string{"192.0.2.200"}) &&
		!slices.Equal(got, []string{burstIP(from)}) {
		t.Fatalf("the hand edit did not take: %s A %v", edited, got)
	}
	edit := time.Now()
	waitUntil(t, "the hand-edited record repaired", time.Minute, served)
	t.Logf("%s repaired %s after the edit", edited, time.Since(edit).Round(time.Millisecond))

	// Several full listings later the unowned record is as planted, and
	// zonestream wrote no ownership record for it.
	time.Sleep(3 * interval)
	if got := answersOf(srv, manual, dns.TypeA); !slices.Equal(got, []string{"192.0.2.77"}) {
		t.Errorf("unowned %s A changed: %v", manual, got)
	}
	if v, _ := srv.Keys(srv.Key(manual, "")); v[srv.Key(manual, "")] != `{"host":"192.0.2.77","ttl":300}` || len(v) != 1 {
		t.Errorf("unowned entry changed in etcd: %v", v)
	}
	for _, txt := range []string{manual, "a-" + manual} {
		if got := answersOf(srv, txt, dns.TypeTXT); len(got) > 0 {
			t.Errorf("zonestream wrote %s TXT %v for a record it does not own", txt, got)
		}
	}
	if err := served(); err != nil {
		t.Errorf("after the repair: %v", err)
	}
}
