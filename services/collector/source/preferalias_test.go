package source

import (
	"fmt"
	"testing"

	"github.com/zonestream/zonestream/events"
)

// --prefer-alias: every CNAME without an alias property gets alias=true,
// as ExternalDNS v0.23's post-processor sets it; other types, and a CNAME
// that says alias=false or already alias=true, are left as they are.
func TestPreferAlias(t *testing.T) {
	weight := events.ProviderSpecificProperty{Name: "aws/weight", Value: "10"}
	in := []events.Endpoint{
		{DNSName: "a.example.org", RecordType: "CNAME", Targets: []string{"lb.example.net"}},
		{DNSName: "b.example.org", RecordType: "CNAME", Targets: []string{"lb.example.net"},
			ProviderSpecific: []events.ProviderSpecificProperty{{Name: "alias", Value: "false"}}},
		{DNSName: "c.example.org", RecordType: "A", Targets: []string{"192.0.2.1"}},
		{DNSName: "d.example.org", RecordType: "CNAME", Targets: []string{"lb.example.net"},
			ProviderSpecific: []events.ProviderSpecificProperty{weight}},
		{DNSName: "e.example.org", RecordType: "CNAME", Targets: []string{"lb.example.net"},
			ProviderSpecific: []events.ProviderSpecificProperty{{Name: "alias", Value: "true"}}},
	}
	show := func(eps []events.Endpoint) string {
		var s []string
		for _, e := range eps {
			s = append(s, fmt.Sprintf("%s %s %v", e.DNSName, e.RecordType, e.ProviderSpecific))
		}
		return fmt.Sprint(s)
	}
	before := show(in)

	if got := show(PreferAlias(false).Apply(in)); got != before {
		t.Fatalf("off, endpoints changed:\n%s\nwant\n%s", got, before)
	}
	got := show(PreferAlias(true).Apply(in))
	want := "[a.example.org CNAME [{alias true}] b.example.org CNAME [{alias false}] c.example.org A [] " +
		"d.example.org CNAME [{alias true} {aws/weight 10}] e.example.org CNAME [{alias true}]]"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if after := show(in); after != before {
		t.Fatalf("Apply wrote into the source's endpoints:\n%s\nwas\n%s", after, before)
	}
}
