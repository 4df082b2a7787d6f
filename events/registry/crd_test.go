package registry

import "testing"

// TestCRDModeNamesAreFixed: with --registry=crd every reader places
// ownership records where the applier renders them, whatever the affix
// flags say; with txt the flags decide as before.
func TestCRDModeNamesAreFixed(t *testing.T) {
	affixed := Settings{Prefix: "txt.", WildcardReplacement: "any"}
	if got := affixed.Names().TXTName("www.example.org", "A"); got != "txt.a-www.example.org" {
		t.Fatalf("txt mode: %q", got)
	}
	affixed.Registry = RegistryCRD
	for _, tc := range []struct{ name, recordType, want string }{
		{"www.example.org", "A", "a-www.example.org"},
		{"*.example.org", "AAAA", "aaaa-*.example.org"},
		{"www.example.org", "TXT", "txt-www.example.org"},
	} {
		if got := affixed.Names().TXTName(tc.name, tc.recordType); got != tc.want {
			t.Errorf("crd mode: %s %s -> %q, want %q", tc.name, tc.recordType, got, tc.want)
		}
		if n, typ := affixed.Names().EndpointName(tc.want); n != tc.name || typ != tc.recordType {
			t.Errorf("crd mode: %q reads as %s %s", tc.want, n, typ)
		}
	}
}
