package moto

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	r53types "github.com/aws/aws-sdk-go-v2/service/route53/types"
)

// Route53 is a moto_server and a Route53 client of it. The test's
// environment points the AWS SDK at the same moto, so that ExternalDNS'
// aws provider, in this process or in one the test starts, reaches it as
// a pod reaches Route53: through the environment.
type Route53 struct {
	Client *route53.Client
	URL    string
}

// Route53T starts moto_server for the test (skipped, saying so, when it
// is not installed) and sets the environment to reach it with test
// credentials; no file of the user's is read.
func Route53T(t testing.TB) *Route53 {
	t.Helper()
	m := StartT(t)
	EndpointT(t, m.URL)
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return &Route53{Client: route53.NewFromConfig(cfg), URL: m.URL}
}

// CreateZone creates a public hosted zone and returns its id.
func (r *Route53) CreateZone(t testing.TB, zone string) string {
	t.Helper()
	out, err := r.Client.CreateHostedZone(context.Background(), &route53.CreateHostedZoneInput{
		Name: aws.String(zone), CallerReference: aws.String(t.Name() + "/" + zone)})
	if err != nil {
		t.Fatal(err)
	}
	return *out.HostedZone.Id
}

// RecordSets is what the hosted zone holds besides SOA and NS, each
// record set as "name type value,value" (values sorted; an alias target
// as alias:name) and, for a routing policy, " set=id weight=n" or
// " set=id failover=PRIMARY", sorted.
func (r *Route53) RecordSets(ctx context.Context, zoneID string) ([]string, error) {
	sets, err := r.List(ctx, zoneID)
	if err != nil {
		return nil, err
	}
	var got []string
	for _, rs := range sets {
		if rs.Type == r53types.RRTypeSoa || rs.Type == r53types.RRTypeNs {
			continue
		}
		var vals []string
		for _, v := range rs.ResourceRecords {
			vals = append(vals, *v.Value)
		}
		if rs.AliasTarget != nil {
			vals = append(vals, "alias:"+strings.TrimSuffix(*rs.AliasTarget.DNSName, "."))
		}
		slices.Sort(vals)
		line := strings.TrimSuffix(*rs.Name, ".") + " " + string(rs.Type) + " " + strings.Join(vals, ",")
		if rs.SetIdentifier != nil {
			line += " set=" + *rs.SetIdentifier
		}
		if rs.Weight != nil {
			line += " weight=" + strconv.FormatInt(*rs.Weight, 10)
		}
		if rs.Failover != "" {
			line += " failover=" + string(rs.Failover)
		}
		got = append(got, line)
	}
	slices.Sort(got)
	return got, nil
}

// List is every record set of the hosted zone, page by page.
func (r *Route53) List(ctx context.Context, zoneID string) ([]r53types.ResourceRecordSet, error) {
	var sets []r53types.ResourceRecordSet
	in := &route53.ListResourceRecordSetsInput{HostedZoneId: aws.String(zoneID)}
	for {
		out, err := r.Client.ListResourceRecordSets(ctx, in)
		if err != nil {
			return nil, err
		}
		sets = append(sets, out.ResourceRecordSets...)
		if !out.IsTruncated {
			return sets, nil
		}
		in.StartRecordName, in.StartRecordType, in.StartRecordIdentifier = out.NextRecordName, out.NextRecordType, out.NextRecordIdentifier
	}
}

// EndpointT sets the environment for the test so that the AWS SDK sends
// every request to url, with test credentials; no file of the user's is
// read. Route53T points it at moto; a test may point it at a server that
// misbehaves.
func EndpointT(t testing.TB, url string) {
	t.Helper()
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL": url, "AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1",
		"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "",
		"AWS_PROFILE": "", "AWS_CONFIG_FILE": "/dev/null", "AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
	} {
		t.Setenv(k, v)
	}
}
