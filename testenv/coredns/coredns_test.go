package coredns_test

import (
	"context"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/testenv/coredns"
)

// TestHaltRestart stops etcd under a running CoreDNS and starts it again:
// no answer from it nor write to it in between, then the same port with
// every record kept, served by CoreDNS again.
func TestHaltRestart(t *testing.T) {
	s := coredns.StartT(t)
	if err := s.Put(s.Key("kept.example.org", ""), `{"host":"192.0.2.8","ttl":120}`); err != nil {
		t.Fatal(err)
	}
	url := s.EtcdURL
	if err := s.Halt(); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Query("kept.example.org", dns.TypeA); err == nil {
		t.Fatalf("CoreDNS answered from a halted etcd: %v", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := s.Etcd.Put(ctx, s.Key("x.example.org", ""), `{"host":"192.0.2.9"}`); err == nil {
		t.Fatal("a halted etcd took a write")
	}
	if err := s.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Restart(context.Background()); err == nil {
		t.Fatal("Restart of a running etcd accepted")
	}
	got, err := s.Query("kept.example.org", dns.TypeA)
	if err != nil || len(got) != 1 || got[0].(*dns.A).A.String() != "192.0.2.8" || s.EtcdURL != url {
		t.Fatalf("after restart at %s (was %s): %v %v", s.EtcdURL, url, got, err)
	}
	if err := s.Put(s.Key("x.example.org", ""), `{"host":"192.0.2.9"}`); err != nil {
		t.Fatalf("write after restart: %v", err)
	}
}
