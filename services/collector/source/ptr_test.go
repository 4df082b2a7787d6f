package source

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/zonestream/zonestream/events"
)

// PTR records as ExternalDNS v0.22's PTR source makes them: for A and AAAA
// records (no wildcard) that ask with record-type=ptr, or all with
// --create-ptr unless record-type says otherwise; one record set per
// address, naming every name at it, with the lowest TTL; the record-type
// property never published.
func TestPTR(t *testing.T) {
	asks := func(ep events.Endpoint, v string) events.Endpoint {
		ep.ProviderSpecific = []events.ProviderSpecificProperty{{Name: PropertyRecordType, Value: v}}
		return ep
	}
	eps := []events.Endpoint{
		asks(events.NewEndpoint("a.example.org", "A", 300, "192.0.2.1", "192.0.2.2"), "ptr"),
		asks(events.NewEndpoint("b.example.org", "A", 60, "192.0.2.1"), "PTR"),
		asks(events.NewEndpoint("v6.example.org", "AAAA", 0, "2001:db8::1"), "ptr"),
		asks(events.NewEndpoint("*.example.org", "A", 0, "192.0.2.3"), "ptr"),
		asks(events.NewEndpoint("c.example.org", "CNAME", 0, "a.example.org"), "ptr"),
		asks(events.NewEndpoint("out.example.org", "A", 0, "192.0.2.4"), ""),
		events.NewEndpoint("plain.example.org", "A", 0, "192.0.2.5"),
	}
	render := func(eps []events.Endpoint) string {
		var b strings.Builder
		for _, e := range eps {
			fmt.Fprintf(&b, "%s %s %d %v %v\n", e.DNSName, e.RecordType, e.RecordTTL, e.Targets, e.ProviderSpecific)
		}
		return b.String()
	}
	kept := `*.example.org A 0 [192.0.2.3] []
a.example.org A 300 [192.0.2.1 192.0.2.2] []
b.example.org A 60 [192.0.2.1] []
c.example.org CNAME 0 [a.example.org] []
out.example.org A 0 [192.0.2.4] []
plain.example.org A 0 [192.0.2.5] []
v6.example.org AAAA 0 [2001:db8::1] []
`
	asked := `1.2.0.192.in-addr.arpa PTR 60 [a.example.org b.example.org] []
1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa PTR 0 [v6.example.org] []
2.2.0.192.in-addr.arpa PTR 300 [a.example.org] []
`
	for _, tc := range []struct {
		create  bool
		managed []string
		want    string
	}{
		{false, nil, kept},
		{false, []string{"A", "PTR"}, sortedLines(kept + asked)},
		{true, []string{"ptr"}, sortedLines(kept + asked + "5.2.0.192.in-addr.arpa PTR 0 [plain.example.org] []\n")},
	} {
		p, err := ParsePTR(tc.create, tc.managed)
		if err != nil {
			t.Fatal(err)
		}
		if got := sortedLines(render(p.Apply(eps))); got != tc.want {
			t.Errorf("create %v, managed %v:\n%s\nwant\n%s", tc.create, tc.managed, got, tc.want)
		}
	}
	if eps[0].ProviderSpecific == nil {
		t.Error("the source's endpoint lost its property")
	}
	if _, err := ParsePTR(true, []string{"A", "AAAA"}); err == nil {
		t.Error("--create-ptr without PTR managed accepted")
	}
}

func sortedLines(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n") + "\n"
}
