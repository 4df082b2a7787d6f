package events

import "testing"

// Records are the same with the same targets, the same configured TTL and
// the same value of each provider-specific property both sides have.
func TestSameRecords(t *testing.T) {
	prop := func(name, value string) []ProviderSpecificProperty {
		return []ProviderSpecificProperty{{Name: name, Value: value}}
	}
	have := Endpoint{DNSName: "w.example.org", RecordType: "A", Targets: []string{"192.0.2.1"}, RecordTTL: 300,
		ProviderSpecific: prop("aws/weight", "10")}
	for _, tc := range []struct {
		name string
		want Endpoint
		same bool
	}{
		{"same", Endpoint{Targets: []string{"192.0.2.1"}, ProviderSpecific: prop("aws/weight", "10")}, true},
		{"TTL not configured", Endpoint{Targets: []string{"192.0.2.1"}}, true},
		{"another TTL", Endpoint{Targets: []string{"192.0.2.1"}, RecordTTL: 60}, false},
		{"another target", Endpoint{Targets: []string{"192.0.2.2"}}, false},
		{"another weight", Endpoint{Targets: []string{"192.0.2.1"}, ProviderSpecific: prop("aws/weight", "20")}, false},
		{"a property the provider keeps none of", Endpoint{Targets: []string{"192.0.2.1"}, ProviderSpecific: prop("coredns/group", "g")}, true},
	} {
		if got := SameRecords(tc.want, have); got != tc.same {
			t.Errorf("%s: SameRecords %v, want %v", tc.name, got, tc.same)
		}
	}
}
