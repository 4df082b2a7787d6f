package source

import (
	"fmt"
	"testing"

	"github.com/zonestream/zonestream/events"
)

// --target-net-filter and --exclude-target-net keep and drop targets as
// ExternalDNS' target filter does.
func TestTargetNets(t *testing.T) {
	eps := func() []events.Endpoint {
		return []events.Endpoint{
			{DNSName: "a.example.org", RecordType: "A", Targets: []string{"10.0.0.1", "192.0.2.1"}},
			{DNSName: "b.example.org", RecordType: "A", Targets: []string{"10.1.2.3"}},
			{DNSName: "c.example.org", RecordType: "AAAA", Targets: []string{"2001:db8::1"}},
			{DNSName: "d.example.org", RecordType: "CNAME", Targets: []string{"lb.example.net"}},
		}
	}
	for _, tc := range []struct {
		include, exclude []string
		want             string
	}{
		{nil, nil, "[a:[10.0.0.1 192.0.2.1] b:[10.1.2.3] c:[2001:db8::1] d:[lb.example.net]]"},
		{[]string{"10.0.0.0/8"}, nil, "[a:[10.0.0.1] b:[10.1.2.3]]"},
		{nil, []string{"10.0.0.0/8"}, "[a:[192.0.2.1] c:[2001:db8::1] d:[lb.example.net]]"},
		{[]string{"10.0.0.0/8", "2001:db8::/32"}, []string{"10.1.0.0/16"}, "[a:[10.0.0.1] c:[2001:db8::1]]"},
	} {
		f, err := ParseTargetNets(tc.include, tc.exclude)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range f.Filter(eps()) {
			got = append(got, fmt.Sprintf("%s:%v", e.DNSName[:1], e.Targets))
		}
		if s := fmt.Sprint(got); s != tc.want {
			t.Errorf("filter %v exclude %v: %s, want %s", tc.include, tc.exclude, s, tc.want)
		}
	}
	if _, err := ParseTargetNets([]string{"10.0.0.0/33"}, nil); err == nil {
		t.Error("a bad network accepted")
	}
}
