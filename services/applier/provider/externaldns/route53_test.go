package externaldns_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/providertest"
	"github.com/zonestream/zonestream/testenv/moto"
)

// route53Env is moto's Route53 with one hosted zone.
type route53Env struct {
	*moto.Route53
	zoneID string
}

func startRoute53(t *testing.T, zone string) route53Env {
	t.Helper()
	r := moto.Route53T(t)
	return route53Env{Route53: r, zoneID: r.CreateZone(t, zone)}
}

// rrsets is what the zone holds besides SOA and NS, as "name type value,value".
func (e route53Env) rrsets(t *testing.T) []string {
	t.Helper()
	got, err := e.RecordSets(context.Background(), e.zoneID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// ExternalDNS' aws provider, built from the flags an ExternalDNS user
// passes, creates, updates and deletes Route53 records through the
// adapter; the hosted zones it finds are the zones.
func TestRoute53OnMoto(t *testing.T) {
	r := startRoute53(t, "example.org")
	ctx := context.Background()
	p := provider.Checked(newAdapter(t, []string{"--provider=aws", "--aws-zone-type=public",
		"--aws-batch-change-size=2", "--domain-filter=example.org"}))
	zones, err := p.Zones(ctx)
	if err != nil || !slices.Equal(zones, []string{"example.org"}) {
		t.Fatalf("zones %v %v", zones, err)
	}
	// zonestream's TXT targets are raw values; Route53 holds them quoted,
	// as ExternalDNS' registry writes them.
	owner := "heritage=external-dns,external-dns/owner=default,external-dns/resource=service/default/web"
	quoted := `"` + owner + `"`
	if err := p.Apply(ctx, "example.org", []events.Change{
		{New: ep("web.example.org", "A", 120, "192.0.2.1", "192.0.2.2")},
		{New: ep("a-web.example.org", "TXT", 0, owner)},
		{New: ep("www.example.org", "CNAME", 0, "web.example.org")},
		{New: ep("cname-www.example.org", "TXT", 0, owner)},
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"a-web.example.org TXT " + quoted,
		"cname-www.example.org TXT " + quoted,
		"web.example.org A 192.0.2.1,192.0.2.2",
		"www.example.org CNAME web.example.org",
	}
	if got := r.rrsets(t); !slices.Equal(got, want) {
		t.Fatalf("after create:\n%q\nwant\n%q", got, want)
	}
	eps, err := p.Records(ctx, "example.org")
	if err != nil {
		t.Fatal(err)
	}
	a := providertest.Find(eps, "web.example.org", "A")
	if a == nil || a.RecordTTL != 120 || !slices.Equal(a.Targets, []string{"192.0.2.1", "192.0.2.2"}) {
		t.Fatalf("listed A: %+v", a)
	}

	// A plan computed before someone changed the A is refused, and
	// writes nothing.
	if err := p.Apply(ctx, "example.org", []events.Change{
		{Old: ep("web.example.org", "A", 0, "192.0.2.9"), New: ep("web.example.org", "A", 0, "192.0.2.10")},
	}); !errors.Is(err, provider.ErrStale) {
		t.Fatalf("stale plan: %v", err)
	}

	if err := p.Apply(ctx, "example.org", []events.Change{
		{Old: a, New: ep("web.example.org", "A", 120, "192.0.2.3")},
		{Old: ep("www.example.org", "CNAME", 0, "web.example.org")},
		{Old: ep("cname-www.example.org", "TXT", 0, owner)},
	}); err != nil {
		t.Fatal(err)
	}
	want = []string{
		"a-web.example.org TXT " + quoted,
		"web.example.org A 192.0.2.3",
	}
	if got := r.rrsets(t); !slices.Equal(got, want) {
		t.Fatalf("after update and delete:\n%q\nwant\n%q", got, want)
	}
}

// Set identifiers are RRsets of their own, and a routing policy's
// provider-specific properties (aws/weight, aws/failover) reach Route53
// and are listed back.
func TestRoute53RoutingPolicies(t *testing.T) {
	r := startRoute53(t, "example.org")
	ctx := context.Background()
	p := provider.Checked(newAdapter(t, []string{"--provider=aws", "--aws-zone-type=public"}))
	if _, err := p.Zones(ctx); err != nil {
		t.Fatal(err)
	}
	policy := func(e *events.Endpoint, id string, props ...string) *events.Endpoint {
		e.SetIdentifier = id
		for i := 0; i+1 < len(props); i += 2 {
			e.ProviderSpecific = append(e.ProviderSpecific, events.ProviderSpecificProperty{Name: props[i], Value: props[i+1]})
		}
		return e
	}
	if err := p.Apply(ctx, "example.org", []events.Change{
		{New: policy(ep("w.example.org", "A", 60, "192.0.2.1"), "blue", "aws/weight", "10")},
		{New: policy(ep("w.example.org", "A", 60, "192.0.2.2"), "green", "aws/weight", "20")},
		{New: policy(ep("f.example.org", "A", 60, "192.0.2.3"), "primary", "aws/failover", "PRIMARY")},
		{New: policy(ep("f.example.org", "A", 60, "192.0.2.4"), "secondary", "aws/failover", "SECONDARY")},
	}); err != nil {
		t.Fatal(err)
	}
	sets, err := r.List(ctx, r.zoneID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, rs := range sets {
		if rs.SetIdentifier != nil {
			s := strings.TrimSuffix(*rs.Name, ".") + " " + *rs.SetIdentifier + " " + *rs.ResourceRecords[0].Value
			if rs.Weight != nil {
				s += fmt.Sprintf(" weight=%d", *rs.Weight)
			}
			s += " " + string(rs.Failover)
			got = append(got, strings.TrimSpace(s))
		}
	}
	slices.Sort(got)
	want := []string{"f.example.org primary 192.0.2.3 PRIMARY", "f.example.org secondary 192.0.2.4 SECONDARY",
		"w.example.org blue 192.0.2.1 weight=10", "w.example.org green 192.0.2.2 weight=20"}
	if !slices.Equal(got, want) {
		t.Fatalf("record sets %q, want %q", got, want)
	}
	eps, err := p.Records(ctx, "example.org")
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, e := range eps {
		if e.SetIdentifier != "" {
			listed = append(listed, fmt.Sprintf("%s %s %v %v", e.DNSName, e.SetIdentifier, e.Targets, e.ProviderSpecific))
		}
	}
	if len(listed) != 4 || !strings.Contains(strings.Join(listed, "|"), "{aws/weight 20}") {
		t.Fatalf("listed %q", listed)
	}
	// One of the weighted pair changes; the other is left alone.
	var blue *events.Endpoint
	for i := range eps {
		if eps[i].SetIdentifier == "blue" {
			blue = &eps[i]
		}
	}
	if err := p.Apply(ctx, "example.org", []events.Change{
		{Old: blue, New: policy(ep("w.example.org", "A", 60, "192.0.2.9"), "blue", "aws/weight", "10")},
	}); err != nil {
		t.Fatal(err)
	}
	if got := r.rrsets(t); !slices.Contains(got, "w.example.org A 192.0.2.9 set=blue weight=10") ||
		!slices.Contains(got, "w.example.org A 192.0.2.2 set=green weight=20") {
		t.Fatalf("after changing blue: %q", got)
	}
}

// ExternalDNS' aws provider adjusts desired records as its controller
// lets it: a CNAME to an ELB hostname becomes alias A and AAAA records
// with their alias options, and a CNAME elsewhere stays a CNAME.
func TestRoute53AdjustsAnELBCNAMEIntoAliases(t *testing.T) {
	startRoute53(t, "example.org")
	p := newAdapter(t, []string{"--provider=aws", "--aws-zone-type=public"})
	adj, ok := p.(provider.Adjuster)
	if !ok {
		t.Fatalf("%T does not adjust", p)
	}
	const elb = "my-lb-1234.us-east-1.elb.amazonaws.com"
	out, err := adj.AdjustEndpoints(context.Background(), []events.Endpoint{
		*ep("shop.example.org", "CNAME", 0, elb), *ep("docs.example.org", "CNAME", 0, "web.example.org"),
		*ep("a-shop.example.org", "TXT", 0, "heritage=external-dns"),
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range out {
		got = append(got, fmt.Sprintf("%s %s %v %v", e.DNSName, e.RecordType, e.Targets, e.ProviderSpecific))
	}
	want := []string{
		"a-shop.example.org TXT [heritage=external-dns] []",
		"docs.example.org CNAME [web.example.org] [{alias false}]",
		"shop.example.org A [" + elb + "] [{alias true} {aws/evaluate-target-health true}]",
		"shop.example.org AAAA [" + elb + "] [{alias true} {aws/evaluate-target-health true}]",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("adjusted:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
