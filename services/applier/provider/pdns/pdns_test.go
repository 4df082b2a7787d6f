package pdns_test

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
	"github.com/zonestream/zonestream/services/applier/provider/pdns"
	pdnsenv "github.com/zonestream/zonestream/testenv/pdns"
)

func newProvider(t *testing.T, s *pdnsenv.Server, mod func(*pdns.Config)) *pdns.Provider {
	t.Helper()
	cfg := pdns.Config{
		Server: s.APIURL, APIKey: s.APIKey, ServerID: pdnsenv.ServerID,
		FullListingEvery: 10, // the flag's default
		RetryConfig:      provider.RetryConfig{Timeout: 2 * time.Second, RetryBackoff: 10 * time.Millisecond},
	}
	if mod != nil {
		mod(&cfg)
	}
	p, err := pdns.New(cfg, provider.Options{DefaultTTL: 300})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func ep(name, typ string, ttl int64, targets ...string) *events.Endpoint {
	e := events.NewEndpoint(name, typ, ttl, targets...)
	return &e
}

// TestChangesInOrder: several changes to one RRset in one plan apply in
// order, as one PATCH entry.
func TestChangesInOrder(t *testing.T) {
	s := pdnsenv.StartT(t, "example.org")
	p := newProvider(t, s, nil)
	ctx := context.Background()
	changes := []events.Change{
		{New: ep("seq.example.org", "A", 0, "192.0.2.1")},
		{Old: ep("seq.example.org", "A", 0, "192.0.2.1"), New: ep("seq.example.org", "A", 0, "192.0.2.2")},
		{Old: ep("seq.example.org", "A", 0, "192.0.2.2")},
		{New: ep("seq.example.org", "A", 0, "192.0.2.3")},
	}
	if err := p.Apply(ctx, "example.org", changes); err != nil {
		t.Fatal(err)
	}
	if got := providertest.Answers(t, s, "seq.example.org", dns.TypeA); !slices.Equal(got, []string{"192.0.2.3"}) {
		t.Fatalf("seq: %v", got)
	}
	// A precondition that only a previous change of the batch breaks.
	bad := []events.Change{
		{Old: ep("seq.example.org", "A", 0, "192.0.2.3"), New: ep("seq.example.org", "A", 0, "192.0.2.4")},
		{Old: ep("seq.example.org", "A", 0, "192.0.2.3")},
	}
	if err := p.Apply(ctx, "example.org", bad); !errors.Is(err, provider.ErrStale) {
		t.Fatalf("want ErrStale, got %v", err)
	}
	if got := providertest.Answers(t, s, "seq.example.org", dns.TypeA); !slices.Equal(got, []string{"192.0.2.3"}) {
		t.Fatalf("seq after stale: %v", got)
	}
}

func TestPermanentErrors(t *testing.T) {
	s := pdnsenv.StartT(t, "example.org")
	p := provider.Checked(newProvider(t, s, nil))
	ctx := context.Background()
	if err := p.Apply(ctx, "example.org", []events.Change{{New: ep("host.example.org", "A", 0, "192.0.2.1")}}); err != nil {
		t.Fatal(err)
	}
	for name, changes := range map[string][]events.Change{
		"CNAME beside A": {
			{New: ep("good.example.org", "A", 0, "192.0.2.8")},
			{New: ep("host.example.org", "CNAME", 0, "elsewhere.example.net")},
		},
		"bad IP": {
			{New: ep("good.example.org", "A", 0, "192.0.2.8")},
			{New: ep("bad.example.org", "A", 0, "not-an-ip")},
		},
		"out of zone": {
			{New: ep("www.example.net", "A", 0, "192.0.2.1")},
		},
	} {
		err := p.Apply(ctx, "example.org", changes)
		if !errors.Is(err, provider.ErrPermanent) || errors.Is(err, provider.ErrStale) {
			t.Fatalf("%s: want a permanent error, got %v", name, err)
		}
		t.Logf("%s: %v", name, err)
		// One PATCH: the good change of the batch is not applied either.
		if got := providertest.Answers(t, s, "good.example.org", dns.TypeA); len(got) != 0 {
			t.Fatalf("%s: batch partly applied: %v", name, got)
		}
	}
	if got := providertest.Answers(t, s, "host.example.org", dns.TypeA); !slices.Equal(got, []string{"192.0.2.1"}) {
		t.Fatalf("host: %v", got)
	}
	// A zone PowerDNS does not have.
	if err := p.Apply(ctx, "nothere.org", []events.Change{{New: ep("www.nothere.org", "A", 0, "192.0.2.1")}}); !errors.Is(err, provider.ErrPermanent) {
		t.Fatalf("unknown zone: %v", err)
	}
	if _, err := p.Records(ctx, "nothere.org"); err == nil {
		t.Fatal("listing an unknown zone succeeded")
	}

	// A wrong API key: permanent, for reads and writes, without retrying.
	wrong := newProvider(t, s, func(c *pdns.Config) { c.APIKey = "wrong"; c.RetryBackoff = time.Second })
	start := time.Now()
	err := wrong.Apply(ctx, "example.org", []events.Change{{New: ep("x.example.org", "A", 0, "192.0.2.1")}})
	if !errors.Is(err, provider.ErrPermanent) || !strings.Contains(err.Error(), "401") {
		t.Fatalf("wrong key: %v", err)
	}
	if _, err := wrong.Zones(ctx); !errors.Is(err, provider.ErrPermanent) {
		t.Fatalf("wrong key, zones: %v", err)
	}
	if _, err := wrong.Records(ctx, "example.org"); !errors.Is(err, provider.ErrPermanent) {
		t.Fatalf("wrong key, records: %v", err)
	}
	if time.Since(start) > time.Second {
		t.Fatalf("a permanent error was retried: %s", time.Since(start))
	}
	if got := providertest.Answers(t, s, "x.example.org", dns.TypeA); len(got) != 0 {
		t.Fatalf("wrong key wrote: %v", got)
	}
	// A wrong server id.
	wrongID := newProvider(t, s, func(c *pdns.Config) { c.ServerID = "elsewhere" })
	if _, err := wrongID.Zones(ctx); !errors.Is(err, provider.ErrPermanent) {
		t.Fatalf("wrong server id: %v", err)
	}
}

func TestTXTContent(t *testing.T) {
	for _, v := range []string{"", "plain", `a"b\c`, strings.Repeat("y", 600), "caf\u00e9\x00\xff", "  spaces  "} {
		c := pdns.QuoteTXT(v)
		if got := pdns.ParseTXT(c); got != v {
			t.Errorf("round trip %q -> %s -> %q", v, c, got)
		}
		for _, part := range strings.Split(c, `" "`) {
			if len(pdns.ParseTXT(`"`+strings.Trim(part, `"`)+`"`)) > 255 {
				t.Errorf("%q: a character-string longer than 255 bytes", v)
			}
		}
	}
	for content, want := range map[string]string{
		`"a" "b"`:                       "ab",
		`"a\"b\\c" "second"`:            `a"b\csecond`,
		`"\065\066" C`:                  "ABC",
		`unquoted words`:                "unquotedwords",
		`"caf` + "\u00e9" + ` \009tab"`: "caf\u00e9 \ttab",
	} {
		if got := pdns.ParseTXT(content); got != want {
			t.Errorf("ParseTXT(%s) = %q, want %q", content, got, want)
		}
	}
	if got := pdns.Content("MX", "10 mail.example.org"); got != "10 mail.example.org." {
		t.Errorf("MX content %q", got)
	}
	if got := pdns.Content("CNAME", "WWW.Example.org"); got != "www.example.org." {
		t.Errorf("CNAME content %q", got)
	}
}

func TestConfigValidation(t *testing.T) {
	t.Setenv(pdns.APIKeyEnv, "")
	for name, cfg := range map[string]pdns.Config{
		"no key":     {Server: "http://127.0.0.1:8081"},
		"bad scheme": {Server: "ftp://127.0.0.1", APIKey: "k"},
		"no host":    {Server: "http://", APIKey: "k"},
	} {
		if _, err := pdns.New(cfg, provider.Options{}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	t.Setenv(pdns.APIKeyEnv, "from-env")
	cfg := pdns.Config{}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if cfg.Server != "http://localhost:8081" || cfg.ServerID != "localhost" || cfg.APIKey != "from-env" || cfg.Retries != 3 {
		t.Fatalf("defaults: %+v", cfg)
	}
}
