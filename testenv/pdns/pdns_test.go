package pdns_test

import (
	"context"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/testenv/pdns"
)

func TestPlantAndQuery(t *testing.T) {
	s := pdns.StartT(t, "example.org", "example.net")
	if s.DNSPort == 0 || s.APIPort == 0 || s.APIKey == "" || !strings.HasPrefix(s.APIURL, "http://127.0.0.1:") {
		t.Fatalf("server not described: %+v", s)
	}
	if s.Version == "" {
		t.Fatal("no version reported by the API")
	}
	t.Logf("PowerDNS %s, DNS %s, API %s", s.Version, s.DNSAddr, s.APIURL)
	for _, z := range s.Zones {
		rrs, err := s.Query(z, dns.TypeSOA)
		if err != nil || len(rrs) != 1 {
			t.Fatalf("SOA %s: %v %v", z, rrs, err)
		}
	}
	if err := s.Plant("example.org", "planted.example.org", "A", 120, "192.0.2.7"); err != nil {
		t.Fatal(err)
	}
	if err := s.Plant("example.org", "planted.example.org", "TXT", 120, `"hello world"`); err != nil {
		t.Fatal(err)
	}
	got, err := s.Query("planted.example.org", dns.TypeA)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].(*dns.A).A.String() != "192.0.2.7" || got[0].Header().Ttl != 120 {
		t.Fatalf("got %v", got)
	}
	txt, err := s.Query("planted.example.org", dns.TypeTXT)
	if err != nil || len(txt) != 1 || txt[0].(*dns.TXT).Txt[0] != "hello world" {
		t.Fatalf("TXT: %v %v", txt, err)
	}
	if err := s.Remove("example.org", "planted.example.org", "A"); err != nil {
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
	// A bad record is refused by the API.
	if err := s.Plant("example.org", "bad.example.org", "A", 60, "not-an-ip"); err == nil || !strings.Contains(err.Error(), "422") {
		t.Fatalf("bad record: %v", err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Query("example.org", dns.TypeSOA); err == nil {
		t.Fatal("stopped server still answers")
	}
}

// TestHaltRestart stops pdns_server and starts it again: down in between,
// then the same ports with the database kept.
func TestHaltRestart(t *testing.T) {
	s := pdns.StartT(t)
	if err := s.Plant("example.org", "kept.example.org", "A", 120, "192.0.2.8"); err != nil {
		t.Fatal(err)
	}
	dnsPort, apiPort := s.DNSPort, s.APIPort
	if err := s.Halt(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Query("kept.example.org", dns.TypeA); err == nil {
		t.Fatal("a halted pdns_server answered")
	}
	if err := s.Plant("example.org", "x.example.org", "A", 120, "192.0.2.9"); err == nil {
		t.Fatal("the API of a halted pdns_server answered")
	}
	if err := s.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, err := s.Query("kept.example.org", dns.TypeA)
	if err != nil || len(got) != 1 || got[0].(*dns.A).A.String() != "192.0.2.8" ||
		s.DNSPort != dnsPort || s.APIPort != apiPort {
		t.Fatalf("after restart: %v %v", got, err)
	}
	if err := s.Plant("example.org", "x.example.org", "A", 120, "192.0.2.9"); err != nil {
		t.Fatalf("API after restart: %v", err)
	}
}
