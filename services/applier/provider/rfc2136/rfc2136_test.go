package rfc2136_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zonestream/zonestream/services/applier/provider/providertest"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/rfc2136"
	"github.com/zonestream/zonestream/testenv/bind"
)

func newProvider(t *testing.T, s *bind.Server, mod func(*rfc2136.Config)) *rfc2136.Provider {
	t.Helper()
	cfg := rfc2136.Config{
		Host: s.Host, Port: s.Port, Zones: s.Zones,
		TSIGKeyName: s.KeyName, TSIGSecret: s.Secret, TSIGSecretAlg: s.Algorithm,
		TSIGAXFR: true, BatchChangeSize: 50,
		RetryConfig: provider.RetryConfig{Timeout: 2 * time.Second, RetryBackoff: 10 * time.Millisecond},
	}
	if mod != nil {
		mod(&cfg)
	}
	p, err := rfc2136.New(cfg, provider.Options{DefaultTTL: 300})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func ep(name, typ string, ttl int64, targets ...string) *events.Endpoint {
	e := events.NewEndpoint(name, typ, ttl, targets...)
	return &e
}

func TestBatchesAndPermanentErrors(t *testing.T) {
	s := bind.StartT(t, "example.org")
	p := provider.Checked(newProvider(t, s, func(c *rfc2136.Config) { c.BatchChangeSize = 2; c.MinTTL = 60 * time.Second }))
	ctx := context.Background()
	var changes []events.Change
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		changes = append(changes, events.Change{New: ep(n+".example.org", "A", 5, "192.0.2.10")})
	}
	if err := p.Apply(ctx, "example.org", changes); err != nil {
		t.Fatal(err)
	}
	rrs, err := s.Query("e.example.org", dns.TypeA)
	if err != nil || len(rrs) != 1 || rrs[0].Header().Ttl != 60 {
		t.Fatalf("min TTL not applied: %v %v", rrs, err)
	}
	// A bad target is rejected before anything is sent.
	err = p.Apply(ctx, "example.org", []events.Change{{New: ep("bad.example.org", "A", 0, "not-an-ip")}})
	if !errors.Is(err, provider.ErrPermanent) {
		t.Fatalf("bad target: %v", err)
	}
	// Out of zone.
	err = p.Apply(ctx, "example.org", []events.Change{{New: ep("www.example.net", "A", 0, "192.0.2.1")}})
	if !errors.Is(err, provider.ErrPermanent) {
		t.Fatalf("out of zone: %v", err)
	}
	// Unsigned updates are refused by BIND: permanent, no retry.
	insecure := newProvider(t, s, func(c *rfc2136.Config) { c.Insecure = true; c.TSIGAXFR = false })
	err = insecure.Apply(ctx, "example.org", []events.Change{{New: ep("x.example.org", "A", 0, "192.0.2.1")}})
	if !errors.Is(err, provider.ErrPermanent) || !strings.Contains(err.Error(), "REFUSED") {
		t.Fatalf("unsigned update: %v", err)
	}
	// A wrong key is a permanent error too.
	wrong := newProvider(t, s, func(c *rfc2136.Config) { c.TSIGSecret = "d3Jvbmcgc2VjcmV0IHdyb25nIHNlY3JldA==" })
	err = wrong.Apply(ctx, "example.org", []events.Change{{New: ep("x.example.org", "A", 0, "192.0.2.1")}})
	if !errors.Is(err, provider.ErrPermanent) {
		t.Fatalf("wrong key: %v", err)
	}
	if _, err := wrong.Records(ctx, "example.org"); err == nil {
		t.Fatal("AXFR with a wrong key succeeded")
	}
	// Unsigned AXFR is refused too.
	if _, err := insecure.Records(ctx, "example.org"); err == nil {
		t.Fatal("unsigned AXFR succeeded")
	}
	// A second batch going stale after the first applied reports a partial apply.
	mixed := []events.Change{
		{New: ep("f.example.org", "A", 0, "192.0.2.11")},
		{New: ep("g.example.org", "A", 0, "192.0.2.11")},
		{New: ep("a.example.org", "A", 0, "192.0.2.11")}, // exists: stale
	}
	err = p.Apply(ctx, "example.org", mixed)
	if !errors.Is(err, provider.ErrStale) || provider.AppliedCount(err) != 2 {
		t.Fatalf("mixed: %v (applied %d)", err, provider.AppliedCount(err))
	}
}

func TestConfigValidation(t *testing.T) {
	for name, cfg := range map[string]rfc2136.Config{
		"no host":     {Zones: []string{"example.org"}, Insecure: true},
		"no zone":     {Host: "127.0.0.1", Insecure: true},
		"no key":      {Host: "127.0.0.1", Zones: []string{"example.org"}},
		"bad alg":     {Host: "127.0.0.1", Zones: []string{"example.org"}, TSIGKeyName: "k", TSIGSecret: "c2VjcmV0", TSIGSecretAlg: "hmac-foo"},
		"bad secret":  {Host: "127.0.0.1", Zones: []string{"example.org"}, TSIGKeyName: "k", TSIGSecret: "!!"},
		"axfr no key": {Host: "127.0.0.1", Zones: []string{"example.org"}, Insecure: true, TSIGAXFR: true},
	} {
		cfg.BatchChangeSize = 50
		if _, err := rfc2136.New(cfg, provider.Options{}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	for _, alg := range []string{"hmac-md5", "hmac-sha1", "hmac-sha224", "hmac-sha256", "hmac-sha384", "hmac-sha512"} {
		cfg := rfc2136.Config{Host: "127.0.0.1", Zones: []string{"example.org"}, TSIGKeyName: "k", TSIGSecret: "c2VjcmV0", TSIGSecretAlg: alg, BatchChangeSize: 1}
		if _, err := rfc2136.New(cfg, provider.Options{}); err != nil {
			t.Errorf("%s: %v", alg, err)
		}
	}
}

func TestTSIGAlgorithms(t *testing.T) {
	for _, alg := range []string{"hmac-md5", "hmac-sha1", "hmac-sha512"} {
		t.Run(alg, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			s, err := bind.Start(ctx, bind.Options{Zones: []string{"example.org"}, Algorithm: alg})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Stop()
			p := newProvider(t, s, nil)
			if err := p.Apply(ctx, "example.org", []events.Change{{New: ep("www.example.org", "A", 0, "192.0.2.1")}}); err != nil {
				t.Fatal(err)
			}
			eps, err := p.Records(ctx, "example.org")
			if err != nil {
				t.Fatal(err)
			}
			if providertest.Find(eps, "www.example.org", "A") == nil {
				t.Fatalf("not listed: %+v", eps)
			}
			if got := providertest.Answers(t, s, "www.example.org", dns.TypeA); !slices.Equal(got, []string{"192.0.2.1"}) {
				t.Fatalf("A: %v", got)
			}
		})
	}
}
