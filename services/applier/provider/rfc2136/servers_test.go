package rfc2136_test

import (
	"context"
	"flag"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/rfc2136"
	"github.com/zonestream/zonestream/testenv/bind"
)

// Several --rfc2136-host, as ExternalDNS takes them: transfers and updates
// go to the first server that answers. BIND listens on 127.0.0.1 only, so
// 127.0.0.2 at its port is a server that does not answer.
func TestSeveralHostsTheFirstThatAnswers(t *testing.T) {
	s := bind.StartT(t, "example.org")
	ctx := context.Background()
	for _, hosts := range [][]string{{"127.0.0.2", s.Host}, {s.Host, "127.0.0.2"}} {
		p := provider.Checked(newProvider(t, s, func(c *rfc2136.Config) { c.Host, c.Hosts = "", hosts }))
		name := strings.ReplaceAll(hosts[0], ".", "-") + ".example.org"
		if err := p.Apply(ctx, "example.org", []events.Change{{New: ep(name, "A", 0, "192.0.2.30")}}); err != nil {
			t.Fatalf("hosts %v: update: %v", hosts, err)
		}
		if rrs, err := s.Query(name, dns.TypeA); err != nil || len(rrs) != 1 {
			t.Fatalf("hosts %v: BIND holds %v (%v)", hosts, rrs, err)
		}
		eps, err := p.Records(ctx, "example.org")
		if err != nil || !containsName(eps, name) {
			t.Fatalf("hosts %v: transfer: %v, %d records", hosts, err, len(eps))
		}
	}
	// No server answers: the transfer fails, naming the last one asked.
	p := newProvider(t, s, func(c *rfc2136.Config) { c.Host, c.Hosts = "", []string{"127.0.0.2", "127.0.0.3"} })
	if _, err := p.Records(ctx, "example.org"); err == nil || !strings.Contains(err.Error(), "127.0.0.3") {
		t.Fatalf("no server answers: %v", err)
	}
}

// The flag takes the hosts repeated, as ExternalDNS' (kingpin Strings).
func TestHostFlagRepeated(t *testing.T) {
	var c rfc2136.Config
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	c.RegisterFlags(fs)
	if err := fs.Parse([]string{"--rfc2136-host=ns1.example.org", "--rfc2136-host", "ns2.example.org"}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.Hosts, " "); got != "ns1.example.org ns2.example.org" {
		t.Fatalf("hosts %q", got)
	}
}

func containsName(eps []events.Endpoint, name string) bool {
	for _, e := range eps {
		if e.DNSName == name {
			return true
		}
	}
	return false
}
