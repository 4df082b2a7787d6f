package externaldns_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/externaldns"
	"github.com/zonestream/zonestream/services/applier/provider/providertest"
	"github.com/zonestream/zonestream/testenv/cloudflare"
)

// proxiedKey is ExternalDNS' provider-specific property (and annotation)
// that asks Cloudflare to proxy a record.
const proxiedKey = "cloudflare/proxied" // ExternalDNS v0.23's name

// startCloudflare starts the fake of Cloudflare's API and points
// cloudflare-go at it as an ExternalDNS user's pod would reach
// Cloudflare: the token in CF_API_TOKEN, and the SDK's own
// CLOUDFLARE_BASE_URL, as ExternalDNS has no flag for the API's address.
func startCloudflare(t *testing.T, zones ...string) *cloudflare.Server {
	t.Helper()
	s := cloudflare.StartT(t, zones...)
	t.Setenv("CLOUDFLARE_BASE_URL", s.URL)
	t.Setenv("CF_API_TOKEN", s.Token)
	return s
}

// held is what the fake holds in zone, as "name type content ttl" and
// " proxied" when it is.
func held(s *cloudflare.Server, zone string) []string {
	var out []string
	for _, r := range s.Records(zone) {
		line := r.Name + " " + r.Type + " " + r.Content + " " + strconv.Itoa(r.TTL)
		if r.Proxied {
			line += " proxied"
		}
		out = append(out, line)
	}
	return out
}

// writes are the requests that would change the fake.
func writes(s *cloudflare.Server) []string {
	var out []string
	for _, r := range s.Requests() {
		if !strings.HasPrefix(r, "GET ") {
			out = append(out, r)
		}
	}
	return out
}

// ExternalDNS' cloudflare provider, built from the flags an ExternalDNS
// user passes, creates, updates and deletes records in (a fake of)
// Cloudflare through the adapter, reading them back page by page.
func TestCloudflareOnFake(t *testing.T) {
	s := startCloudflare(t, "example.org", "example.net")
	ctx := context.Background()
	p := provider.Checked(newAdapter(t, []string{"--provider=cloudflare", "--domain-filter=example.org",
		"--cloudflare-dns-records-per-page=2"}))
	zones, err := p.Zones(ctx)
	if err != nil || !slices.Equal(zones, []string{"example.org"}) {
		t.Fatalf("zones %v %v", zones, err)
	}
	owner := "heritage=external-dns,external-dns/owner=default,external-dns/resource=service/default/web"
	quoted := `"` + owner + `"`
	if err := p.Apply(ctx, "example.org", []events.Change{
		{New: ep("web.example.org", "A", 120, "192.0.2.1", "192.0.2.2")},
		{New: ep("a-web.example.org", "TXT", 0, owner)},
		{New: ep("web.example.org", "AAAA", 0, "2001:db8::1")},
		{New: ep("aaaa-web.example.org", "TXT", 0, owner)},
		{New: ep("www.example.org", "CNAME", 0, "web.example.org")},
		{New: ep("cname-www.example.org", "TXT", 0, owner)},
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"a-web.example.org TXT " + quoted + " 300",
		"aaaa-web.example.org TXT " + quoted + " 300",
		"cname-www.example.org TXT " + quoted + " 300",
		"web.example.org A 192.0.2.1 120",
		"web.example.org A 192.0.2.2 120",
		"web.example.org AAAA 2001:db8::1 300",
		"www.example.org CNAME web.example.org 300",
	}
	if got := held(s, "example.org"); !slices.Equal(got, want) {
		t.Fatalf("after create:\n%q\nwant\n%q", got, want)
	}
	batch := "POST /zones/" + s.ZoneID("example.org") + "/dns_records/batch"
	if got := writes(s); !slices.Equal(got, []string{batch}) {
		t.Fatalf("writes %q, want one batch", got)
	}
	eps, err := p.Records(ctx, "example.org")
	if err != nil {
		t.Fatal(err)
	}
	a := providertest.Find(eps, "web.example.org", "A")
	if a == nil || a.RecordTTL != 120 || !slices.Equal(a.Targets, []string{"192.0.2.1", "192.0.2.2"}) {
		t.Fatalf("listed A: %+v", a)
	}
	if txt := providertest.Find(eps, "a-web.example.org", "TXT"); txt == nil || !slices.Equal(txt.Targets, []string{owner}) {
		t.Fatalf("listed TXT: %+v", txt)
	}
	if len(eps) != len(want)-1 {
		t.Fatalf("listed %d RRsets: %+v", len(eps), eps)
	}
	// --cloudflare-dns-records-per-page=2: seven records, four pages.
	page4 := "GET /zones/" + s.ZoneID("example.org") + "/dns_records?page=4&per_page=2"
	if !slices.Contains(s.Requests(), page4) {
		t.Fatalf("no %q in %q", page4, s.Requests())
	}

	// A plan computed before someone changed the A is refused, and
	// writes nothing.
	if err := p.Apply(ctx, "example.org", []events.Change{
		{Old: ep("web.example.org", "A", 0, "192.0.2.9"), New: ep("web.example.org", "A", 0, "192.0.2.10")},
	}); !errors.Is(err, provider.ErrStale) {
		t.Fatalf("stale plan: %v", err)
	}

	// One A target kept with a new TTL, one replaced; the CNAME and its
	// ownership record deleted.
	if err := p.Apply(ctx, "example.org", []events.Change{
		{Old: a, New: ep("web.example.org", "A", 60, "192.0.2.2", "192.0.2.3")},
		{Old: ep("www.example.org", "CNAME", 0, "web.example.org")},
		{Old: ep("cname-www.example.org", "TXT", 0, owner)},
	}); err != nil {
		t.Fatal(err)
	}
	want = []string{
		"a-web.example.org TXT " + quoted + " 300",
		"aaaa-web.example.org TXT " + quoted + " 300",
		"web.example.org A 192.0.2.2 60",
		"web.example.org A 192.0.2.3 60",
		"web.example.org AAAA 2001:db8::1 300",
	}
	if got := held(s, "example.org"); !slices.Equal(got, want) {
		t.Fatalf("after update and delete:\n%q\nwant\n%q", got, want)
	}
	if got := held(s, "example.net"); len(got) != 0 {
		t.Fatalf("example.net written: %q", got)
	}
}

// A batch Cloudflare refuses (here for a CNAME beside an A) is rolled back
// and replayed one call at a time, as ExternalDNS' provider does: the
// other changes land through single deletes, updates and creates, and the
// refused one is a transient error.
func TestCloudflareBatchFallback(t *testing.T) {
	s := startCloudflare(t, "example.org")
	ctx := context.Background()
	p := provider.Checked(newAdapter(t, []string{"--provider=cloudflare", "--domain-filter=example.org"},
		externaldns.WithRetry(provider.RetryConfig{Retries: 1, RetryBackoff: time.Millisecond})))
	if _, err := p.Zones(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(ctx, "example.org", []events.Change{
		{New: ep("web.example.org", "A", 120, "192.0.2.1", "192.0.2.2")},
		{New: ep("old.example.org", "TXT", 0, "gone soon")},
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Set("taken.example.org", "A", 300, "192.0.2.50"); err != nil {
		t.Fatal(err)
	}
	err := p.Apply(ctx, "example.org", []events.Change{
		{Old: ep("web.example.org", "A", 120, "192.0.2.1", "192.0.2.2"), New: ep("web.example.org", "A", 60, "192.0.2.2", "192.0.2.3")},
		{Old: ep("old.example.org", "TXT", 0, "gone soon")},
		{New: ep("taken.example.org", "CNAME", 0, "web.example.org")},
	})
	if err == nil || errors.Is(err, provider.ErrPermanent) {
		t.Fatalf("apply with a refused CNAME: %v", err)
	}
	want := []string{"taken.example.org A 192.0.2.50 300", "web.example.org A 192.0.2.2 60", "web.example.org A 192.0.2.3 60"}
	if got := held(s, "example.org"); !slices.Equal(got, want) {
		t.Fatalf("held %q, want %q", got, want)
	}
	var methods []string
	for _, w := range writes(s) {
		m, path, _ := strings.Cut(w, " ")
		if !strings.HasSuffix(path, "/batch") {
			methods = append(methods, m)
		}
	}
	if !slices.Equal(methods, []string{"DELETE", "DELETE", "PUT", "POST", "POST"}) {
		t.Fatalf("single calls after the refused batch: %q", writes(s))
	}
}

// The cloudflare-proxied provider-specific property reaches Cloudflare
// and is listed back; --cloudflare-proxied proxies what does not say,
// and never a TXT.
func TestCloudflareProxied(t *testing.T) {
	ctx := context.Background()
	proxied := func(e *events.Endpoint, v string) *events.Endpoint {
		e.ProviderSpecific = append(e.ProviderSpecific, events.ProviderSpecificProperty{Name: proxiedKey, Value: v})
		return e
	}
	t.Run("property", func(t *testing.T) {
		s := startCloudflare(t, "example.org")
		p := provider.Checked(newAdapter(t, []string{"--provider=cloudflare", "--domain-filter=example.org"}))
		if _, err := p.Zones(ctx); err != nil {
			t.Fatal(err)
		}
		if err := p.Apply(ctx, "example.org", []events.Change{
			{New: proxied(ep("web.example.org", "A", 0, "192.0.2.1"), "true")},
			{New: ep("direct.example.org", "A", 0, "192.0.2.2")},
		}); err != nil {
			t.Fatal(err)
		}
		want := []string{"direct.example.org A 192.0.2.2 300", "web.example.org A 192.0.2.1 300 proxied"}
		if got := held(s, "example.org"); !slices.Equal(got, want) {
			t.Fatalf("held %q, want %q", got, want)
		}
		eps, err := p.Records(ctx, "example.org")
		if err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]string{"web.example.org": "true", "direct.example.org": "false"} {
			e := providertest.Find(eps, name, "A")
			if e == nil || !slices.Contains(e.ProviderSpecific, events.ProviderSpecificProperty{Name: proxiedKey, Value: want}) {
				t.Fatalf("listed %s: %+v, want %s=%s", name, e, proxiedKey, want)
			}
		}
	})
	t.Run("flag", func(t *testing.T) {
		s := startCloudflare(t, "example.org")
		p := provider.Checked(newAdapter(t, []string{"--provider=cloudflare", "--domain-filter=example.org",
			"--cloudflare-proxied"}))
		if _, err := p.Zones(ctx); err != nil {
			t.Fatal(err)
		}
		if err := p.Apply(ctx, "example.org", []events.Change{
			{New: ep("web.example.org", "A", 0, "192.0.2.1")},
			{New: ep("a-web.example.org", "TXT", 0, "heritage=external-dns")},
			{New: proxied(ep("direct.example.org", "A", 0, "192.0.2.2"), "false")},
		}); err != nil {
			t.Fatal(err)
		}
		want := []string{`a-web.example.org TXT "heritage=external-dns" 300`,
			"direct.example.org A 192.0.2.2 300", "web.example.org A 192.0.2.1 300 proxied"}
		if got := held(s, "example.org"); !slices.Equal(got, want) {
			t.Fatalf("held %q, want %q", got, want)
		}
	})
}

// A token Cloudflare refuses (wrong, or without permission to edit) is a
// clear error, transient as every running provider's, and nothing is
// written; CF_API_TOKEN=file:/path reads the token from a mounted file.
func TestCloudflareCredentials(t *testing.T) {
	ctx := context.Background()
	args := []string{"--provider=cloudflare", "--domain-filter=example.org"}
	create := []events.Change{{New: ep("web.example.org", "A", 0, "192.0.2.1")}}
	t.Run("wrong token", func(t *testing.T) {
		s := startCloudflare(t, "example.org")
		t.Setenv("CF_API_TOKEN", "not-"+s.Token)
		p := provider.Checked(newAdapter(t, args, externaldns.WithRetry(provider.RetryConfig{Retries: 1, RetryBackoff: time.Millisecond})))
		if _, err := p.Zones(ctx); err != nil {
			t.Fatal(err)
		}
		_, err := p.Records(ctx, "example.org")
		if err == nil || errors.Is(err, provider.ErrPermanent) || !strings.Contains(err.Error(), "403") ||
			!strings.Contains(err.Error(), "Authentication error") {
			t.Fatalf("listing with a wrong token: %v", err)
		}
		if err := p.Apply(ctx, "example.org", create); err == nil {
			t.Fatal("apply with a wrong token succeeded")
		}
		if got := writes(s); len(got) != 0 || len(s.Records("example.org")) != 0 {
			t.Fatalf("written with a wrong token: %q %q", got, held(s, "example.org"))
		}
	})
	t.Run("read-only token", func(t *testing.T) {
		s := startCloudflare(t, "example.org")
		t.Setenv("CF_API_TOKEN", s.ReadToken)
		p := provider.Checked(newAdapter(t, args, externaldns.WithRetry(provider.RetryConfig{Retries: 1, RetryBackoff: time.Millisecond})))
		if _, err := p.Zones(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Records(ctx, "example.org"); err != nil {
			t.Fatalf("listing with a read-only token: %v", err)
		}
		err := p.Apply(ctx, "example.org", create)
		if err == nil || errors.Is(err, provider.ErrPermanent) {
			t.Fatalf("apply with a read-only token: %v", err)
		}
		if len(writes(s)) == 0 || len(s.Records("example.org")) != 0 {
			t.Fatalf("with a read-only token: tried %q, held %q", writes(s), held(s, "example.org"))
		}
	})
	t.Run("token file", func(t *testing.T) {
		s := startCloudflare(t, "example.org")
		f := filepath.Join(t.TempDir(), "token")
		if err := os.WriteFile(f, []byte(s.Token+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("CF_API_TOKEN", "file:"+f)
		p := provider.Checked(newAdapter(t, args))
		if _, err := p.Zones(ctx); err != nil {
			t.Fatal(err)
		}
		if err := p.Apply(ctx, "example.org", create); err != nil {
			t.Fatal(err)
		}
		if got := held(s, "example.org"); !slices.Equal(got, []string{"web.example.org A 192.0.2.1 300"}) {
			t.Fatalf("held %q", got)
		}
	})
}

// cloudflareServer is the fake as the conformance suite drives it:
// records planted behind the provider's back are written as the
// dashboard writes them (a TXT quoted).
type cloudflareServer struct{ *cloudflare.Server }

func (s cloudflareServer) Plant(name, typ string, ttl int, value string) error {
	if typ == "TXT" {
		value = strconv.Quote(value)
	}
	return s.Set(name, typ, ttl, value)
}

// ExternalDNS' cloudflare provider, through the adapter, passes the
// conformance suite against the fake. Cloudflare lists no apex NS (its
// own name servers are not records of the zone), and the zones are
// --domain-filter's, so those checks do not apply.
func TestConformanceCloudflare(t *testing.T) {
	providertest.Run(t, func(t *testing.T, tune func(*provider.RetryConfig)) (provider.Provider, providertest.Server) {
		s := startCloudflare(t, "example.org", "example.net")
		r := provider.RetryConfig{RetryBackoff: 10 * time.Millisecond}
		if tune != nil {
			tune(&r)
		}
		p := newAdapter(t, []string{"--provider=cloudflare", "--domain-filter=example.org", "--domain-filter=example.net"},
			externaldns.WithRetry(r))
		return p, cloudflareServer{s}
	}, providertest.Options{UpdateKeepsTTL: true,
		// cloudflare-go v7 retries a refused connection up to 10 times,
		// up to 30 s apart: the call's deadline ends it.
		OutageTimeout: time.Second})
}

// With --zone-id-filter the provider reads each zone by its id instead of
// listing the account's zones.
func TestCloudflareZoneIDFilter(t *testing.T) {
	s := startCloudflare(t, "example.org", "example.net")
	ctx := context.Background()
	id := s.ZoneID("example.org")
	p := provider.Checked(newAdapter(t, []string{"--provider=cloudflare", "--domain-filter=example.org", "--zone-id-filter=" + id}))
	if _, err := p.Zones(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(ctx, "example.org", []events.Change{{New: ep("web.example.org", "A", 0, "192.0.2.1")}}); err != nil {
		t.Fatal(err)
	}
	if eps, err := p.Records(ctx, "example.org"); err != nil || providertest.Find(eps, "web.example.org", "A") == nil {
		t.Fatalf("listed %+v %v", eps, err)
	}
	reqs := s.Requests()
	if !slices.Contains(reqs, "GET /zones/"+id) || slices.ContainsFunc(reqs, func(r string) bool { return strings.HasPrefix(r, "GET /zones?") || r == "GET /zones" }) {
		t.Fatalf("requests %q: want the zone read by id, no zone list", reqs)
	}
}
