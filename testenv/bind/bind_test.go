package bind_test

import (
	"context"
	"testing"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/testenv/bind"
)

func TestUpdateAndQuery(t *testing.T) {
	s := bind.StartT(t, "example.org", "example.net")
	if s.Port == 0 || s.Addr == "" || s.Secret == "" {
		t.Fatalf("server not described: %+v", s)
	}
	for _, z := range s.Zones {
		rrs, err := s.Query(z, dns.TypeSOA)
		if err != nil || len(rrs) != 1 {
			t.Fatalf("SOA %s: %v %v", z, rrs, err)
		}
	}
	rr, err := dns.NewRR("planted.example.org. 120 IN A 192.0.2.7")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update("example.org", []dns.RR{rr}, nil); err != nil {
		t.Fatal(err)
	}
	// A second signed message: a fresh exchange each time.
	txt, _ := dns.NewRR(`planted.example.org. 120 IN TXT "hello world"`)
	if err := s.Update("example.org", []dns.RR{txt}, nil); err != nil {
		t.Fatal(err)
	}
	got, err := s.Query("planted.example.org", dns.TypeA)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].(*dns.A).A.String() != "192.0.2.7" || got[0].Header().Ttl != 120 {
		t.Fatalf("got %v", got)
	}
	if err := s.Update("example.org", nil, []dns.RR{rr}); err != nil {
		t.Fatal(err)
	}
	got, err = s.Query("planted.example.org", dns.TypeA)
	if err != nil || len(got) != 0 {
		t.Fatalf("after remove: %v %v", got, err)
	}
	got, err = s.Query("nowhere.example.org", dns.TypeA)
	if err != nil || len(got) != 0 {
		t.Fatalf("NXDOMAIN: %v %v", got, err)
	}
}

func TestUnsignedUpdateRefused(t *testing.T) {
	s := bind.StartT(t)
	m := new(dns.Msg)
	m.SetUpdate("example.org.")
	rr, _ := dns.NewRR("x.example.org. 60 IN A 192.0.2.1")
	m.Insert([]dns.RR{rr})
	r, err := dns.Exchange(m, s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if r.Rcode != dns.RcodeRefused {
		t.Fatalf("unsigned update: %s", dns.RcodeToString[r.Rcode])
	}
}

// TestHaltRestart stops named and starts it again: down in between, then
// the same port with every update kept.
func TestHaltRestart(t *testing.T) {
	s := bind.StartT(t)
	rr, _ := dns.NewRR("kept.example.org. 120 IN A 192.0.2.8")
	if err := s.Update("example.org", []dns.RR{rr}, nil); err != nil {
		t.Fatal(err)
	}
	port := s.Port
	if err := s.Halt(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Query("kept.example.org", dns.TypeA); err == nil {
		t.Fatal("a halted named answered")
	}
	if err := s.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Restart(context.Background()); err == nil {
		t.Fatal("Restart of a running named accepted")
	}
	got, err := s.Query("kept.example.org", dns.TypeA)
	if err != nil || len(got) != 1 || got[0].(*dns.A).A.String() != "192.0.2.8" || s.Port != port {
		t.Fatalf("after restart on port %d (was %d): %v %v", s.Port, port, got, err)
	}
}
