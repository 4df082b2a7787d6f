package pdns

import "testing"

// A zone's id in the API is its absolute name, with the characters
// PowerDNS does not keep written =XX, and the root as =2E.
func TestZoneID(t *testing.T) {
	for in, want := range map[string]string{
		"example.org":     "example.org.",
		"example.org.":    "example.org.",
		"0/24.2.0.192.in": "0=2F24.2.0.192.in.",
		"":                "=2E",
	} {
		if got := ZoneID(in); got != want {
			t.Errorf("ZoneID(%q) = %q, want %q", in, got, want)
		}
	}
}
