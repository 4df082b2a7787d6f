package externaldns_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/externaldns"
	"github.com/zonestream/zonestream/services/applier/provider/providertest"
	"github.com/zonestream/zonestream/services/applier/provider/rfc2136"
	"github.com/zonestream/zonestream/testenv/bind"
)

// rfc2136Args is the command line an ExternalDNS user gives its rfc2136
// provider for s.
func rfc2136Args(s *bind.Server) []string {
	args := []string{"--provider=rfc2136",
		"--rfc2136-host=" + s.Host, fmt.Sprintf("--rfc2136-port=%d", s.Port),
		"--rfc2136-tsig-keyname=" + s.KeyName, "--rfc2136-tsig-secret=" + s.Secret,
		"--rfc2136-tsig-secret-alg=" + s.Algorithm, "--rfc2136-tsig-axfr"}
	for _, z := range s.Zones {
		args = append(args, "--rfc2136-zone="+z, "--domain-filter="+z)
	}
	return args
}

func newAdapter(t *testing.T, args []string, with ...externaldns.Option) provider.Provider {
	t.Helper()
	p, err := externaldns.New(context.Background(), args, provider.Options{DefaultTTL: 300}, with...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// ExternalDNS' own rfc2136 provider, through the adapter, passes the
// conformance suite every provider passes, against the real BIND the
// native rfc2136 provider is tested on.
func TestConformanceRFC2136(t *testing.T) {
	providertest.Run(t, func(t *testing.T, tune func(*provider.RetryConfig)) (provider.Provider, providertest.Server) {
		s := bind.StartT(t, "example.org", "example.net")
		r := provider.RetryConfig{RetryBackoff: 10 * time.Millisecond}
		if tune != nil {
			tune(&r)
		}
		return newAdapter(t, rfc2136Args(s), externaldns.WithRetry(r)), providertest.BIND{Server: s}
	}, providertest.Options{ApexNS: true, UpdateKeepsTTL: true,
		// ExternalDNS' rfc2136 lists each character-string of a TXT
		// record as a target of its own, so values stay under 255
		// bytes here; the escapes are those of the default.
		TXT: []string{`"quoted" \back`, "tab\there, caf\u00e9, \"q\" \\ \x01"}})
}

// The same changes through ExternalDNS' rfc2136 provider and through the
// native one leave the same records in two BINDs, as the native provider
// reads them back.
func TestSameRecordsAsNativeRFC2136(t *testing.T) {
	ctx := context.Background()
	viaED, viaNative := bind.StartT(t, "example.org"), bind.StartT(t, "example.org")
	native := func(s *bind.Server) provider.Provider {
		p, err := rfc2136.New(rfc2136.Config{Host: s.Host, Port: s.Port, Zones: s.Zones,
			TSIGKeyName: s.KeyName, TSIGSecret: s.Secret, TSIGSecretAlg: s.Algorithm, TSIGAXFR: true,
			BatchChangeSize: 50}, provider.Options{DefaultTTL: 300})
		if err != nil {
			t.Fatal(err)
		}
		return provider.Checked(p)
	}
	ed, nat := provider.Checked(newAdapter(t, rfc2136Args(viaED))), native(viaNative)
	for _, p := range []provider.Provider{ed, nat} {
		if zones, err := p.Zones(ctx); err != nil || !reflect.DeepEqual(zones, []string{"example.org"}) {
			t.Fatalf("zones %v %v", zones, err)
		}
	}
	owner := "heritage=external-dns,external-dns/owner=default,external-dns/resource=service/default/web"
	steps := [][]events.Change{
		{
			{New: ep("web.example.org", "A", 120, "192.0.2.1", "192.0.2.2")},
			{New: ep("web.example.org", "AAAA", 0, "2001:db8::1")},
			{New: ep("a-web.example.org", "TXT", 0, owner)},
			{New: ep("aaaa-web.example.org", "TXT", 0, owner)},
			{New: ep("www.example.org", "CNAME", 60, "web.example.org")},
			{New: ep("cname-www.example.org", "TXT", 0, owner)},
		},
		{
			{Old: ep("web.example.org", "A", 120, "192.0.2.1", "192.0.2.2"), New: ep("web.example.org", "A", 120, "192.0.2.3")},
			{Old: ep("www.example.org", "CNAME", 60, "web.example.org"), New: ep("www.example.org", "CNAME", 60, "other.example.net")},
		},
		{
			{Old: ep("web.example.org", "AAAA", 0, "2001:db8::1")},
			{Old: ep("aaaa-web.example.org", "TXT", 0, owner)},
		},
	}
	for i, step := range steps {
		for _, p := range []provider.Provider{ed, nat} {
			if err := p.Apply(ctx, "example.org", step); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
		}
		// Read both servers with the native provider: the same reader,
		// so a difference is one of the servers' contents.
		got, err := native(viaED).Records(ctx, "example.org")
		if err != nil {
			t.Fatal(err)
		}
		want, err := native(viaNative).Records(ctx, "example.org")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(withoutNS(got), withoutNS(want)) {
			t.Fatalf("step %d: through ExternalDNS' rfc2136:\n%+v\nnative:\n%+v", i, got, want)
		}
	}
}

// withoutNS drops the apex NS, whose target names each BIND's own host.
func withoutNS(eps []events.Endpoint) []events.Endpoint {
	var out []events.Endpoint
	for _, e := range eps {
		if e.RecordType != "NS" {
			out = append(out, e)
		}
	}
	return out
}

func ep(name, typ string, ttl int64, targets ...string) *events.Endpoint {
	e := events.NewEndpoint(name, typ, ttl, targets...)
	return &e
}
