package source

import (
	"fmt"
	"testing"

	"github.com/zonestream/zonestream/events"
)

// Provider-specific annotations become the properties ExternalDNS'
// providers read, from either prefix, the alpha one winning; set
// identifiers and properties reach every endpoint of the object.
func TestProviderSpecificAnnotations(t *testing.T) {
	in := &Inputs{Annotations: map[string]string{
		AnnotationPrefixAlpha + "aws-weight":                   "10",
		AnnotationPrefix + "aws-weight":                        "99", // the alpha one wins
		AnnotationPrefix + "aws-failover":                      "PRIMARY",
		AnnotationPrefix + "cloudflare-proxied":                "true",
		AnnotationPrefixAlpha + "alias":                        "true",
		AnnotationPrefixAlpha + "azure-tags":                   "team=dns",
		AnnotationPrefixAlpha + "scw-something":                "x",
		AnnotationPrefixAlpha + "set-identifier":               " blue ",
		AnnotationPrefixAlpha + "hostname":                     "not.a.property",
		AnnotationPrefixAlpha + "aws-":                         "no attribute",
		"example.com/aws-weight":                               "another prefix",
		AnnotationPrefixAlpha + "cloudflare-unknown-thing":     "not passed on",
		AnnotationPrefixAlpha + "webhook-custom":               "w",
		AnnotationPrefixAlpha + "coredns-group":                "g",
		AnnotationPrefixAlpha + "aws-geolocation-country-code": "DE",
		AnnotationPrefixAlpha + "aws-evaluate-target-health":   "false",
		AnnotationPrefixAlpha + "aws-health-check-id":          "hc-1",
		AnnotationPrefixAlpha + "cloudflare-record-comment":    "c",
		AnnotationPrefixAlpha + "cloudflare-region-key":        "eu",
		AnnotationPrefixAlpha + "aws-multi-value-answer":       "true",
		AnnotationPrefixAlpha + "aws-region":                   "us-east-1",
		AnnotationPrefixAlpha + "aws-geoproximity-bias":        "5",
	}}
	want := "[{alias true} {aws/evaluate-target-health false} {aws/failover PRIMARY} " +
		"{aws/geolocation-country-code DE} {aws/geoproximity-bias 5} {aws/health-check-id hc-1} " +
		"{aws/multi-value-answer true} {aws/region us-east-1} {aws/weight 10} {azure/tags team=dns} " +
		"{cloudflare/proxied true} {cloudflare/record-comment c} {cloudflare/region-key eu} " +
		"{coredns/group g} {scw/something x} {webhook/custom w}]"
	if got := fmt.Sprint(in.ProviderSpecific()); got != want {
		t.Fatalf("properties\n%s\nwant\n%s", got, want)
	}
	eps := in.Routed([]events.Endpoint{{DNSName: "a.example.org"}, {DNSName: "b.example.org"}})
	for _, e := range eps {
		if e.SetIdentifier != "blue" || len(e.ProviderSpecific) != 16 {
			t.Fatalf("%s: set identifier %q, %d properties", e.DNSName, e.SetIdentifier, len(e.ProviderSpecific))
		}
	}
	// Endpoints do not share one slice: changing one leaves the other.
	eps[0].ProviderSpecific[0].Value = "changed"
	if eps[1].ProviderSpecific[0].Value != "true" {
		t.Fatal("endpoints share their properties")
	}
	// alias other than "true" asks for nothing.
	in = &Inputs{Annotations: map[string]string{AnnotationPrefixAlpha + "alias": "false"}}
	if got := in.ProviderSpecific(); len(got) != 0 {
		t.Fatalf("alias=false gave %v", got)
	}
}

// Cloudflare properties under the names ExternalDNS read before v0.23
// (a DNSEndpoint's providerSpecific) become v0.23's; a canonical one
// given too wins; others are left alone.
func TestCanonicalProperties(t *testing.T) {
	got := CanonicalProperties([]events.ProviderSpecificProperty{
		{Name: AnnotationPrefixAlpha + "cloudflare-proxied", Value: "true"},
		{Name: "cloudflare-tags", Value: "a,b"},
		{Name: "example.com/cloudflare-region-key", Value: "legacy"},
		{Name: "cloudflare/region-key", Value: "eu"},
		{Name: AnnotationPrefixAlpha + "cloudflare-unknown", Value: "kept"},
		{Name: "aws/weight", Value: "1"},
	})
	want := "[{cloudflare/proxied true} {cloudflare/tags a,b} {cloudflare/region-key eu} " +
		"{external-dns.alpha.kubernetes.io/cloudflare-unknown kept} {aws/weight 1}]"
	if fmt.Sprint(got) != want {
		t.Fatalf("got\n%v\nwant\n%s", got, want)
	}
}
