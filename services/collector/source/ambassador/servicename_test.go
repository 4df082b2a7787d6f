package ambassador

import "testing"

// ExternalDNS v0.21's TestParseAmbLoadBalancerService.
func TestParseServiceRef(t *testing.T) {
	for _, tc := range []struct{ in, ns, name, err string }{
		{"svc", "default", "svc", ""},
		{"ns/svc", "ns", "svc", ""},
		{"svc.ns", "ns", "svc", ""},
		{"svc.ns.foo.bar", "ns.foo.bar", "svc", ""},
		{"ns/svc/foo/bar", "", "", "invalid external-dns service: ns/svc/foo/bar"},
		{"ns/svc/foo.bar", "", "", "invalid external-dns service: ns/svc/foo.bar"},
		{"ns.foo/svc/bar", "", "", "invalid external-dns service: ns.foo/svc/bar"},
	} {
		ns, name, err := parseServiceRef(tc.in)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if ns != tc.ns || name != tc.name || got != tc.err {
			t.Errorf("%q: got %q, %q, %q; want %q, %q, %q", tc.in, ns, name, got, tc.ns, tc.name, tc.err)
		}
	}
}
