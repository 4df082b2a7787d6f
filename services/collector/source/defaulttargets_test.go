package source

import (
	"reflect"
	"testing"

	"github.com/zonestream/zonestream/events"
)

// An endpoint that takes the default targets keeps everything but its type
// and targets, as ExternalDNS' EndpointsForHostname makes them.
func TestDefaultTargetsKeepTheEndpointsFields(t *testing.T) {
	d, err := ParseDefaultTargets([]string{"192.0.2.9", "lb.example.net"}, false)
	if err != nil {
		t.Fatal(err)
	}
	in := []events.Endpoint{{DNSName: "x.example.org", RecordType: "TXT", SetIdentifier: "eu", RecordTTL: 60,
		Labels:           map[string]string{"owner": "a"},
		ProviderSpecific: []events.ProviderSpecificProperty{{Name: "aws/weight", Value: "10"}}}}
	got := d.Apply(in)
	want := []events.Endpoint{in[0], in[0]}
	want[0].RecordType, want[0].Targets = "A", []string{"192.0.2.9"}
	want[1].RecordType, want[1].Targets = "CNAME", []string{"lb.example.net"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	got[0].Labels["owner"], got[0].ProviderSpecific[0].Value = "b", "20"
	if in[0].Labels["owner"] != "a" || in[0].ProviderSpecific[0].Value != "10" {
		t.Error("the source's endpoint was changed through the defaulted one")
	}
}

// A default target that is no address and no host name stops the collector
// at start.
func TestDefaultTargetsRefuseABadTarget(t *testing.T) {
	for _, bad := range []string{"300.1.1.1", "not a host", "-x.example.org"} {
		if _, err := ParseDefaultTargets([]string{bad}, false); err == nil {
			t.Errorf("--default-targets=%q accepted", bad)
		}
	}
}
