package coredns_test

import (
	"context"
	"errors"
	"flag"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/coredns"
	"github.com/zonestream/zonestream/services/applier/provider/providertest"
	corednsenv "github.com/zonestream/zonestream/testenv/coredns"
)

func newProvider(t *testing.T, s *corednsenv.Server, mod func(*coredns.Config)) *coredns.Provider {
	t.Helper()
	cfg := coredns.Config{
		EtcdURLs: []string{s.EtcdURL}, Zones: s.Zones,
		RetryConfig: provider.RetryConfig{Timeout: 2 * time.Second, RetryBackoff: 10 * time.Millisecond},
	}
	if mod != nil {
		mod(&cfg)
	}
	p, err := coredns.New(cfg, provider.Options{DefaultTTL: 300})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func ep(name, typ string, ttl int64, targets ...string) *events.Endpoint {
	e := events.NewEndpoint(name, typ, ttl, targets...)
	return &e
}

func answers(t *testing.T, s *corednsenv.Server, name string, qtype uint16) []string {
	t.Helper()
	return providertest.Answers(t, s, name, qtype)
}

// TestExternalDNSEntries: records as ExternalDNS writes them (random ids,
// the owner TXT in the text of a host entry) and as written by hand
// (no id) are read, and changing them leaves the other records of a
// shared entry in place.
func TestExternalDNSEntries(t *testing.T) {
	s := corednsenv.StartT(t, "example.org")
	p := newProvider(t, s, nil)
	ctx := context.Background()
	owner := "heritage=external-dns,external-dns/owner=default"
	plant := map[string]string{
		s.Key("web.example.org", "1a2b3c4d"):     `{"host":"192.0.2.10","text":"` + owner + `","ttl":60,"targetstrip":1}`,
		s.Key("web.example.org", "5e6f7a8b"):     `{"host":"192.0.2.11","ttl":60,"targetstrip":1}`,
		s.Key("a-web.example.org", "0badcafe"):   `{"text":"` + owner + `","targetstrip":1}`,
		s.Key("hand.example.org", ""):            `{"host":"192.0.2.20"}`,
		s.Key("grouped.example.org", "00000001"): `{"host":"grouped.example.net","targetstrip":1,"group":"g1"}`,
		s.Key("broken.example.org", "00000002"):  `not json`,
	}
	for k, v := range plant {
		if err := s.Put(k, v); err != nil {
			t.Fatal(err)
		}
	}
	eps, err := p.Records(ctx, "example.org")
	if err != nil {
		t.Fatal(err)
	}
	if a := providertest.Find(eps, "web.example.org", "A"); a == nil || a.RecordTTL != 60 || !slices.Equal(a.Targets, []string{"192.0.2.10", "192.0.2.11"}) {
		t.Fatalf("web A: %+v", a)
	}
	if txt := providertest.Find(eps, "web.example.org", "TXT"); txt == nil || !slices.Equal(txt.Targets, []string{owner}) {
		t.Fatalf("web TXT (in a host entry): %+v", txt)
	}
	if txt := providertest.Find(eps, "a-web.example.org", "TXT"); txt == nil || !slices.Equal(txt.Targets, []string{owner}) {
		t.Fatalf("a-web TXT: %+v", txt)
	}
	if a := providertest.Find(eps, "hand.example.org", "A"); a == nil || !slices.Equal(a.Targets, []string{"192.0.2.20"}) {
		t.Fatalf("hand-written A: %+v", a)
	}
	g := providertest.Find(eps, "grouped.example.org", "CNAME")
	if g == nil || len(g.ProviderSpecific) != 1 || g.ProviderSpecific[0] != (events.ProviderSpecificProperty{Name: coredns.GroupProperty, Value: "g1"}) {
		t.Fatalf("grouped: %+v", g)
	}
	if len(eps) != 5 {
		t.Fatalf("the broken entry was listed, or one is missing: %+v", eps)
	}

	// Updating web's A moves the owner text out of the shared entry into
	// a key of its own: both are still served.
	if err := p.Apply(ctx, "example.org", []events.Change{
		{Old: providertest.Find(eps, "web.example.org", "A"), New: ep("web.example.org", "A", 0, "192.0.2.12")},
	}); err != nil {
		t.Fatal(err)
	}
	if got := answers(t, s, "web.example.org", dns.TypeA); !slices.Equal(got, []string{"192.0.2.12"}) {
		t.Fatalf("web A: %v", got)
	}
	// CoreDNS serves the text of an entry with an IP host only as an A:
	// once split, the owner TXT is served too.
	if got := answers(t, s, "web.example.org", dns.TypeTXT); !slices.Equal(got, []string{owner}) {
		t.Fatalf("web TXT: %v", got)
	}
	after, err := p.Records(ctx, "example.org")
	if err != nil {
		t.Fatal(err)
	}
	if txt := providertest.Find(after, "web.example.org", "TXT"); txt == nil || txt.RecordTTL != 60 {
		t.Fatalf("web TXT after: %+v", txt)
	}
	keys, _ := s.Keys(s.Key("web.example.org", ""))
	if v := keys[s.Key("web.example.org", "1a2b3c4d")]; v == "" || strings.Contains(v, "host") {
		t.Fatalf("the shared entry should keep its text only: %v", keys)
	}
	// Untouched: the hand-written record, the group, the broken entry.
	if got := answers(t, s, "hand.example.org", dns.TypeA); !slices.Equal(got, []string{"192.0.2.20"}) {
		t.Fatalf("hand: %v", got)
	}
	if keys, _ := s.Keys(s.Key("broken.example.org", "")); len(keys) != 1 {
		t.Fatalf("broken entry: %v", keys)
	}
	// Deleting the hand-written record removes its key.
	if err := p.Apply(ctx, "example.org", []events.Change{{Old: ep("hand.example.org", "A", 0, "192.0.2.20")}}); err != nil {
		t.Fatal(err)
	}
	if got := answers(t, s, "hand.example.org", dns.TypeA); len(got) != 0 {
		t.Fatalf("hand after delete: %v", got)
	}
}

// TestBatchWithInvalidChange: one change the layout cannot hold rejects the
// batch as permanent before anything is written, so the applier can split
// it; the valid changes then go through alone.
func TestBatchWithInvalidChange(t *testing.T) {
	s := corednsenv.StartT(t, "example.org")
	p := provider.Checked(newProvider(t, s, nil))
	ctx := context.Background()
	good := events.Change{New: ep("good.example.org", "A", 0, "192.0.2.8")}
	for name, bad := range map[string]events.Change{
		"bad IP":         {New: ep("bad.example.org", "A", 0, "not-an-ip")},
		"IPv6 as A":      {New: ep("bad.example.org", "A", 0, "2001:db8::1")},
		"two CNAMEs":     {New: ep("bad.example.org", "CNAME", 0, "a.example.net", "b.example.net")},
		"unsupported MX": {New: ep("bad.example.org", "MX", 0, "10 mail.example.org")},
		"out of zone":    {New: ep("www.example.net", "A", 0, "192.0.2.1")},
		"slash in name":  {New: ep("a/b.example.org", "A", 0, "192.0.2.1")},
	} {
		err := p.Apply(ctx, "example.org", []events.Change{good, bad})
		if !errors.Is(err, provider.ErrPermanent) || errors.Is(err, provider.ErrStale) {
			t.Fatalf("%s: want a permanent error, got %v", name, err)
		}
		if got := answers(t, s, "good.example.org", dns.TypeA); len(got) != 0 {
			t.Fatalf("%s: batch partly applied: %v", name, got)
		}
	}
	if err := p.Apply(ctx, "example.org", []events.Change{good}); err != nil {
		t.Fatal(err)
	}
	if got := answers(t, s, "good.example.org", dns.TypeA); !slices.Equal(got, []string{"192.0.2.8"}) {
		t.Fatalf("good: %v", got)
	}
}

// TestLargePlanInSeveralTransactions: a plan larger than one transaction
// may hold is written in order, in several.
func TestLargePlanInSeveralTransactions(t *testing.T) {
	s := corednsenv.StartT(t, "example.org")
	p := newProvider(t, s, func(c *coredns.Config) { c.MaxTxnOps = 4 })
	ctx := context.Background()
	var cs []events.Change
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"} {
		cs = append(cs, events.Change{New: ep(n+".example.org", "A", 0, "192.0.2.1")})
	}
	cs = append(cs,
		events.Change{Old: ep("a.example.org", "A", 0, "192.0.2.1"), New: ep("a.example.org", "A", 0, "192.0.2.2")})
	if err := p.Apply(ctx, "example.org", cs); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"b", "e", "j"} {
		if got := answers(t, s, n+".example.org", dns.TypeA); !slices.Equal(got, []string{"192.0.2.1"}) {
			t.Fatalf("%s: %v", n, got)
		}
	}
	if got := answers(t, s, "a.example.org", dns.TypeA); !slices.Equal(got, []string{"192.0.2.2"}) {
		t.Fatalf("a: %v", got)
	}
	// One RRset too large for a transaction: permanent.
	err := p.Apply(ctx, "example.org", []events.Change{{New: ep("big.example.org", "A", 0, "192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4", "192.0.2.5")}})
	if !errors.Is(err, provider.ErrPermanent) {
		t.Fatalf("oversized change: %v", err)
	}
	// A later transaction going stale reports the prefix applied.
	err = p.Apply(ctx, "example.org", []events.Change{
		{New: ep("k.example.org", "A", 0, "192.0.2.1")},
		{New: ep("l.example.org", "A", 0, "192.0.2.1")},
		{New: ep("m.example.org", "A", 0, "192.0.2.1")},
		{New: ep("n.example.org", "A", 0, "192.0.2.1")},
		{New: ep("o.example.org", "A", 0, "192.0.2.1")},
		{Old: ep("k.example.org", "A", 0, "192.0.2.9")},
	})
	if !errors.Is(err, provider.ErrStale) {
		t.Fatalf("want stale, got %v", err)
	}
	if n := provider.AppliedCount(err); n != 0 {
		// All preconditions are checked before the first transaction.
		t.Fatalf("applied %d before a stale precondition", n)
	}
	if got := answers(t, s, "k.example.org", dns.TypeA); len(got) != 0 {
		t.Fatalf("k: %v", got)
	}
}

func TestConfig(t *testing.T) {
	t.Setenv(coredns.EnvURLs, "http://10.0.0.1:2379,http://10.0.0.2:2379")
	t.Setenv(coredns.EnvUsername, "env-user")
	t.Setenv(coredns.EnvTLSInsecure, "")
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	var c coredns.Config
	c.RegisterFlags(fs)
	if err := fs.Parse([]string{"--coredns-zone=Example.org.", "--coredns-zone=example.net", "--coredns-etcd-username=flag-user", "--coredns-prefix=/dns"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.EtcdURLs, []string{"http://10.0.0.1:2379", "http://10.0.0.2:2379"}) || c.Username != "flag-user" ||
		c.Prefix != "/dns/" || !slices.Equal(c.Zones, []string{"example.org", "example.net"}) || c.MaxTxnOps != 128 {
		t.Fatalf("config: %+v", c)
	}
	// A flag wins over the environment.
	c = coredns.Config{EtcdURLs: []string{"http://127.0.0.1:1"}, Zones: []string{"example.org"}}
	if err := c.Validate(); err != nil || !slices.Equal(c.EtcdURLs, []string{"http://127.0.0.1:1"}) || c.Prefix != "/skydns/" || c.Username != "env-user" {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	for name, bad := range map[string]coredns.Config{
		"no zone":       {},
		"bad url":       {EtcdURLs: []string{"localhost:2379"}, Zones: []string{"example.org"}},
		"mixed schemes": {EtcdURLs: []string{"http://a:1", "https://b:1"}, Zones: []string{"example.org"}},
		"cert only":     {CertFile: "c.pem", Zones: []string{"example.org"}},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestBackAtOnceAfterOutage: once etcd is back, the next call reaches it,
// however long gRPC's reconnect backoff has grown during the outage (here
// past 10 s, while the call's retries span well under a second); and a
// client left in transient failure longer than the redial time (here 4 s)
// is replaced by a fresh one, which the call after the outage uses.
func TestBackAtOnceAfterOutage(t *testing.T) {
	t.Cleanup(coredns.SetRedialAfter(4 * time.Second))
	s := corednsenv.StartT(t, "example.org")
	p := newProvider(t, s, nil)
	ctx := context.Background()
	if _, err := p.Records(ctx, "example.org"); err != nil {
		t.Fatal(err)
	}
	redials := coredns.Redials()
	if err := s.Halt(); err != nil {
		t.Fatal(err)
	}
	// gRPC's attempts come at about 1, 2.6, 5.2, 9.3 and 15.8 s: the etcd
	// restarted after 10 s waits for the last one unless the call asks.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		began := time.Now()
		if _, err := p.Records(ctx, "example.org"); err == nil {
			t.Fatal("listing succeeded with etcd halted")
		} else if took := time.Since(began); took > 5*time.Second {
			t.Fatalf("a listing with etcd halted took %s to fail: %v", took, err)
		}
		time.Sleep(time.Second)
	}
	if got := coredns.Redials() - redials; got < 1 {
		t.Errorf("no fresh client after 10 s in transient failure (redial time 4 s)")
	}
	if err := s.RestartEtcd(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Records(ctx, "example.org"); err != nil {
		t.Fatalf("first call after etcd came back: %v", err)
	}
}
