package source

import (
	"fmt"
	"testing"

	"github.com/zonestream/zonestream/events"
)

// --nat64-networks: an AAAA target in a NAT64 /96 also gives the A record
// of the IPv4 address it embeds, merged into an A the object has.
func TestNAT64(t *testing.T) {
	n, err := ParseNAT64([]string{"64:ff9b::/96"})
	if err != nil {
		t.Fatal(err)
	}
	in := make([]events.Endpoint, 4, 8) // room to append: Add must not write into it
	copy(in, []events.Endpoint{
		{DNSName: "a.example.org", RecordType: "AAAA", Targets: []string{"64:ff9b::c000:201", "2001:db8::1"}},
		{DNSName: "b.example.org", RecordType: "AAAA", Targets: []string{"64:ff9b::c000:202"}},
		{DNSName: "b.example.org", RecordType: "A", Targets: []string{"192.0.2.9"}},
		{DNSName: "c.example.org", RecordType: "AAAA", Targets: []string{"2001:db8::3"}},
	})
	eps := n.Add(in)
	if got := fmt.Sprintf("%v %q", in[2].Targets, in[:cap(in)][4].DNSName); got != `[192.0.2.9] ""` {
		t.Fatalf("Add wrote into the source's endpoints: %s", got)
	}
	var got []string
	for _, e := range eps {
		got = append(got, fmt.Sprintf("%s %s %v", e.DNSName, e.RecordType, e.Targets))
	}
	want := "[a.example.org AAAA [64:ff9b::c000:201 2001:db8::1] b.example.org AAAA [64:ff9b::c000:202] " +
		"b.example.org A [192.0.2.2 192.0.2.9] c.example.org AAAA [2001:db8::3] a.example.org A [192.0.2.1]]"
	if fmt.Sprint(got) != want {
		t.Fatalf("got  %v\nwant %s", got, want)
	}
	for _, bad := range []string{"64:ff9b::/64", "10.0.0.0/8", "nonsense"} {
		if _, err := ParseNAT64([]string{bad}); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
