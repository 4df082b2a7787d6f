package providertest

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
)

// Server is the real server behind a provider under test.
type Server interface {
	Querier
	// Plant replaces name's RRset of type typ with value, behind the
	// provider's back, as an operator would.
	Plant(name, typ string, ttl int, value string) error
	// Remove deletes name's RRset of type typ behind the provider's back.
	Remove(name, typ string) error
	// Stop takes the server down: the provider's calls must then fail
	// transiently.
	Stop() error
}

// Setup starts a real server serving example.org and example.net and
// builds the provider under test against it; tune, when set, changes the
// provider's retry settings.
type Setup func(t *testing.T, tune func(*provider.RetryConfig)) (provider.Provider, Server)

// Options say what a server cannot do like the others, and add checks of
// its own.
type Options struct {
	// OwnerName is where the lifecycle writes its ownership TXT (default
	// www.example.org, beside the A).
	OwnerName string
	// TXT are the values of long.example.org's TXT RRset (default: one of
	// 300 bytes with quotes and a backslash, one with a tab, UTF-8, a
	// control byte, quotes and a backslash).
	TXT []string
	// CNAMETarget is alias.example.org's target (default www.example.org).
	CNAMETarget string
	// ApexNS says the zone's apex NS RRset is listed (servers with real
	// zones; etcd has none).
	ApexNS bool
	// UpdateKeepsTTL says an update without a TTL keeps the record's
	// (the webhook, as ExternalDNS' plan does) rather than taking
	// --default-ttl.
	UpdateKeepsTTL bool
	// ZonesFromServer says Zones asks the server (and fails while it is
	// down) rather than answering from flags.
	ZonesFromServer bool
	// OutageTimeout bounds one exchange while the server is down (default
	// the provider's); OutageLimit bounds the failing Apply (default 5s).
	OutageTimeout, OutageLimit time.Duration
	// AfterCreate and AfterDelete check what the server holds in its own
	// terms (CoreDNS' etcd keys).
	AfterCreate, AfterDelete func(t *testing.T, s Server)
}

func (o Options) withDefaults() Options {
	if o.OwnerName == "" {
		o.OwnerName = "www.example.org"
	}
	if o.TXT == nil {
		o.TXT = []string{strings.Repeat("x", 300) + `"quoted" \back`, "tab\there, caf\u00e9, \"q\" \\ \x01"}
	}
	if o.CNAMETarget == "" {
		o.CNAMETarget = "www.example.org"
	}
	if o.OutageLimit == 0 {
		o.OutageLimit = 5 * time.Second
	}
	return o
}

// Run is the conformance suite every provider with a real server passes,
// each case against a fresh server from setup: Lifecycle, StaleAfterOutOfBandChange,
// UnreachableServerIsTransient. The provider is called through
// provider.Checked, as the applier calls it.
func Run(t *testing.T, setup Setup, o Options) {
	o = o.withDefaults()
	checked := func(t *testing.T, tune func(*provider.RetryConfig)) (provider.Provider, Server) {
		p, s := setup(t, tune)
		return provider.Checked(p), s
	}
	t.Run("Lifecycle", func(t *testing.T) {
		p, s := checked(t, nil)
		lifecycle(t, p, s, o)
	})
	// Someone changes a record behind the planner's back; the plan
	// computed before is rejected and changes nothing.
	t.Run("StaleAfterOutOfBandChange", func(t *testing.T) {
		p, s := checked(t, nil)
		StaleAfterOutOfBandChange(t, p, s, func() {
			if err := s.Plant("web.example.org", "A", 60, "192.0.2.77"); err != nil {
				t.Fatal(err)
			}
			if err := s.Plant("txt.example.org", "TXT", 60, "planted"); err != nil {
				t.Fatal(err)
			}
		})
	})
	t.Run("UnreachableServerIsTransient", func(t *testing.T) {
		p, s := checked(t, func(r *provider.RetryConfig) {
			r.Retries = 2
			if o.OutageTimeout > 0 {
				r.Timeout = o.OutageTimeout
			}
		})
		unreachable(t, p, s, o)
	})
}

// lifecycle creates, lists, updates and deletes records, checking each
// step with DNS queries to the server.
func lifecycle(t *testing.T, p provider.Provider, s Server, o Options) {
	ctx := context.Background()
	zones, err := p.Zones(ctx)
	if err != nil || !slices.Equal(zones, []string{"example.net", "example.org"}) {
		t.Fatalf("zones %v %v", zones, err)
	}
	base, err := p.Records(ctx, "example.org")
	if err != nil {
		t.Fatal(err)
	}
	otherZone, err := p.Records(ctx, "example.net")
	if err != nil {
		t.Fatal(err)
	}

	owner := "heritage=external-dns,external-dns/owner=default,external-dns/resource=service/default/web"
	create := []events.Change{
		{New: ep(o.OwnerName, "TXT", 0, owner)},
		{New: ep("www.example.org", "A", 120, "192.0.2.1", "192.0.2.2")},
		{New: ep("long.example.org", "TXT", 60, o.TXT...)},
		{New: ep("alias.example.org", "CNAME", 0, o.CNAMETarget+".")},
		{New: ep("v6.example.org", "AAAA", 0, "2001:db8:0:0::1")},
	}
	if err := p.Apply(ctx, "example.org", create); err != nil {
		t.Fatal(err)
	}
	wantAnswers(t, s, "www.example.org", dns.TypeA, "192.0.2.1", "192.0.2.2")
	if rrs, _ := s.Query("www.example.org", dns.TypeA); len(rrs) == 0 || rrs[0].Header().Ttl != 120 {
		t.Fatalf("A TTL: %v", rrs)
	}
	wantAnswers(t, s, o.OwnerName, dns.TypeTXT, owner)
	wantAnswers(t, s, "long.example.org", dns.TypeTXT, o.TXT...)
	wantAnswers(t, s, "alias.example.org", dns.TypeCNAME, o.CNAMETarget)
	wantAnswers(t, s, "v6.example.org", dns.TypeAAAA, "2001:db8::1")
	if o.AfterCreate != nil {
		o.AfterCreate(t, s)
	}

	eps := checkListing(t, p, o, owner, len(base)+len(create), otherZone)

	// Update: Old is the listed state (the TXT's precondition holds as
	// listed, escapes and all); one A target kept, one replaced.
	old := Find(eps, "www.example.org", "A")
	if err := p.Apply(ctx, "example.org", []events.Change{
		{Old: old, New: ep("www.example.org", "A", 0, "192.0.2.2", "192.0.2.3")},
		{Old: Find(eps, "long.example.org", "TXT"), New: ep("long.example.org", "TXT", 0, "short")},
	}); err != nil {
		t.Fatal(err)
	}
	wantAnswers(t, s, "www.example.org", dns.TypeA, "192.0.2.2", "192.0.2.3")
	wantTTL := uint32(300)
	if o.UpdateKeepsTTL {
		wantTTL = 120
	}
	if rrs, _ := s.Query("www.example.org", dns.TypeA); len(rrs) != 2 || rrs[0].Header().Ttl != wantTTL {
		t.Fatalf("updated A without TTL: want TTL %d, got %v", wantTTL, rrs)
	}
	wantAnswers(t, s, "long.example.org", dns.TypeTXT, "short")

	RefusesStalePlans(t, p, s, old, []string{"192.0.2.2", "192.0.2.3"})

	deleteAndCheck(t, p, s, o, owner)
	if o.AfterDelete != nil {
		o.AfterDelete(t, s)
	}
}

// deleteAndCheck deletes three of the RRsets lifecycle created, with
// preconditions that differ from what the server holds only in the TTL and
// the targets' case (which they ignore), and checks that DNS answers and
// the listing hold them no more.
func deleteAndCheck(t *testing.T, p provider.Provider, s Server, o Options, owner string) {
	t.Helper()
	ctx := context.Background()
	if err := p.Apply(ctx, "example.org", []events.Change{
		{Old: ep("www.example.org", "A", 999, "192.0.2.2", "192.0.2.3")},
		{Old: ep(o.OwnerName, "TXT", 0, owner)},
		{Old: ep("alias.example.org", "CNAME", 0, strings.ToUpper(o.CNAMETarget[:3])+o.CNAMETarget[3:])},
	}); err != nil {
		t.Fatal(err)
	}
	wantAnswers(t, s, "www.example.org", dns.TypeA)
	wantAnswers(t, s, o.OwnerName, dns.TypeTXT)
	wantAnswers(t, s, "alias.example.org", dns.TypeCNAME)
	eps, err := p.Records(ctx, "example.org")
	if err != nil {
		t.Fatal(err)
	}
	if Find(eps, "www.example.org", "A") != nil || Find(eps, o.OwnerName, "TXT") != nil || Find(eps, "alias.example.org", "CNAME") != nil {
		t.Fatalf("deleted RRsets still listed: %+v", eps)
	}
}

// checkListing checks that the provider lists the records lifecycle
// created as they were written (want RRsets in all, sorted, no SOA) and
// example.net as it was, and returns the listing.
func checkListing(t *testing.T, p provider.Provider, o Options, owner string, want int, otherZone []events.Endpoint) []events.Endpoint {
	t.Helper()
	ctx := context.Background()
	eps, err := p.Records(ctx, "example.org")
	if err != nil {
		t.Fatal(err)
	}
	if a := Find(eps, "www.example.org", "A"); a == nil || a.RecordTTL != 120 || !slices.Equal(a.Targets, []string{"192.0.2.1", "192.0.2.2"}) {
		t.Fatalf("listing A: %+v", a)
	}
	if txt := Find(eps, o.OwnerName, "TXT"); txt == nil || txt.RecordTTL != 300 || !slices.Equal(txt.Targets, []string{owner}) {
		t.Fatalf("listing TXT: %+v", txt)
	}
	if l := Find(eps, "long.example.org", "TXT"); l == nil || !slices.Equal(l.Targets, events.NewEndpoint("x", "TXT", 0, o.TXT...).Targets) {
		t.Fatalf("listing long TXT: %+v", l)
	}
	if c := Find(eps, "alias.example.org", "CNAME"); c == nil || !slices.Equal(c.Targets, []string{o.CNAMETarget}) {
		t.Fatalf("listing CNAME: %+v", c)
	}
	if v6 := Find(eps, "v6.example.org", "AAAA"); v6 == nil || !slices.Equal(v6.Targets, []string{"2001:db8::1"}) {
		t.Fatalf("listing AAAA: %+v", v6)
	}
	if ns := Find(eps, "example.org", "NS"); o.ApexNS && (ns == nil || !slices.Equal(ns.Targets, []string{"ns.example.org"})) {
		t.Fatalf("listing NS: %+v", ns)
	}
	if Find(eps, "example.org", "SOA") != nil {
		t.Fatal("SOA listed")
	}
	if len(eps) != want || !slices.IsSortedFunc(eps, events.CompareEndpoints) {
		t.Fatalf("listing (want %d RRsets): %+v", want, eps)
	}
	if net, err := p.Records(ctx, "example.net"); err != nil || !reflect.DeepEqual(net, otherZone) {
		t.Fatalf("example.net changed: %+v %v, was %+v", net, err, otherZone)
	}
	return eps
}

// unreachable stops the server: listing fails, not permanently, and
// Apply fails transiently within the retries.
func unreachable(t *testing.T, p provider.Provider, s Server, o Options) {
	ctx := context.Background()
	if _, err := p.Records(ctx, "example.org"); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Zones(ctx); o.ZonesFromServer && (err == nil || errors.Is(err, provider.ErrPermanent)) {
		t.Fatalf("listing zones of a stopped server: %v", err)
	}
	if _, err := p.Records(ctx, "example.org"); err == nil || errors.Is(err, provider.ErrPermanent) {
		t.Fatalf("listing a stopped server: %v", err)
	}
	ApplyFailsTransiently(t, p, o.OutageLimit)
}

// wantAnswers checks that s answers name/qtype with exactly want, in any
// order.
func wantAnswers(t *testing.T, s Querier, name string, qtype uint16, want ...string) {
	t.Helper()
	want = slices.Sorted(slices.Values(want))
	if got := Answers(t, s, name, qtype); !slices.Equal(got, want) {
		t.Fatalf("%s %s: %q, want %q", name, dns.TypeToString[qtype], got, want)
	}
}
