package externaldns_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	r53types "github.com/aws/aws-sdk-go-v2/service/route53/types"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/providertest"
	"github.com/zonestream/zonestream/testenv/moto"
)

// route53 is a moto_server and a Route53 client of it; the AWS SDK of
// ExternalDNS' aws provider reaches the same moto through the
// environment, as an ExternalDNS user's pod would reach Route53.
type route53Env struct {
	client *route53.Client
	zoneID string
}

func startRoute53(t *testing.T, zone string) route53Env {
	t.Helper()
	m := moto.StartT(t)
	t.Setenv("AWS_ENDPOINT_URL", m.URL)
	t.Setenv("AWS_DEFAULT_REGION", "us-east-1")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "testing")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "testing")
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := route53.NewFromConfig(cfg)
	out, err := c.CreateHostedZone(ctx, &route53.CreateHostedZoneInput{Name: aws.String(zone), CallerReference: aws.String(t.Name())})
	if err != nil {
		t.Fatal(err)
	}
	return route53Env{client: c, zoneID: *out.HostedZone.Id}
}

// rrsets is what Route53 holds besides SOA and NS, as "name type value,value".
func (e route53Env) rrsets(t *testing.T) []string {
	t.Helper()
	out, err := e.client.ListResourceRecordSets(context.Background(), &route53.ListResourceRecordSetsInput{HostedZoneId: aws.String(e.zoneID)})
	if err != nil {
		t.Fatal(err)
	}
	if out.IsTruncated {
		t.Fatal("listing truncated")
	}
	var got []string
	for _, rs := range out.ResourceRecordSets {
		if rs.Type == r53types.RRTypeSoa || rs.Type == r53types.RRTypeNs {
			continue
		}
		var vals []string
		for _, r := range rs.ResourceRecords {
			vals = append(vals, *r.Value)
		}
		slices.Sort(vals)
		got = append(got, strings.TrimSuffix(*rs.Name, ".")+" "+string(rs.Type)+" "+strings.Join(vals, ","))
	}
	slices.Sort(got)
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
	out, err := r.client.ListResourceRecordSets(ctx, &route53.ListResourceRecordSetsInput{HostedZoneId: aws.String(r.zoneID)})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, rs := range out.ResourceRecordSets {
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
	if got := r.rrsets(t); !slices.Contains(got, "w.example.org A 192.0.2.9") || !slices.Contains(got, "w.example.org A 192.0.2.2") {
		t.Fatalf("after changing blue: %q", got)
	}
}
