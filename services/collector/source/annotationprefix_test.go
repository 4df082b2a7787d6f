package source

import (
	"fmt"
	"testing"
)

// --annotation-prefix: given, exactly that prefix is read, for every
// annotation and the provider-specific ones, whose property names stay
// what the providers read; not given, both of ExternalDNS' prefixes, the
// alpha one winning. A prefix without its trailing '/' is refused, as
// ExternalDNS refuses it.
func TestAnnotationPrefix(t *testing.T) {
	t.Cleanup(func() { _ = SetAnnotationPrefix("") })
	ann := map[string]string{
		AnnotationPrefixAlpha + "hostname": "alpha.example.org", AnnotationPrefix + "hostname": "ga.example.org",
		"internal.example.com/hostname":      "custom.example.org",
		AnnotationPrefixAlpha + "aws-weight": "1", AnnotationPrefix + "aws-weight": "2", "internal.example.com/aws-weight": "3",
		"internal.example.com/cloudflare-proxied": "true",
		"internal.example.com/ttl":                "60",
	}
	for _, tc := range []struct {
		prefix               string
		hostname, properties string
		kept                 []string
	}{
		{"", "alpha.example.org", "[{aws/weight 1}]", []string{AnnotationPrefixAlpha + "hostname", AnnotationPrefix + "hostname"}},
		{AnnotationPrefix, "ga.example.org", "[{aws/weight 2}]", []string{AnnotationPrefix + "hostname"}},
		{AnnotationPrefixAlpha, "alpha.example.org", "[{aws/weight 1}]", []string{AnnotationPrefixAlpha + "hostname"}},
		{"internal.example.com/", "custom.example.org",
			"[{aws/weight 3} {external-dns.alpha.kubernetes.io/cloudflare-proxied true}]", []string{"internal.example.com/ttl"}},
	} {
		if err := SetAnnotationPrefix(tc.prefix); err != nil {
			t.Fatal(err)
		}
		if v, _, _ := Annotation(ann, AnnotationHostname); v != tc.hostname {
			t.Errorf("prefix %q: hostname %q, want %q", tc.prefix, v, tc.hostname)
		}
		if got := fmt.Sprint((&Inputs{Annotations: ann}).ProviderSpecific()); got != tc.properties {
			t.Errorf("prefix %q: properties %s, want %s", tc.prefix, got, tc.properties)
		}
		// What the informers keep of an object's annotations.
		kept := keepAnnotations(ann, nil)
		for _, k := range tc.kept {
			if _, ok := kept[k]; !ok {
				t.Errorf("prefix %q: the informers drop %s", tc.prefix, k)
			}
		}
		if tc.prefix != "" {
			for k := range kept {
				if !hasAnnotationPrefix(k) || len(k) < len(tc.prefix) || k[:len(tc.prefix)] != tc.prefix {
					t.Errorf("prefix %q: the informers keep %s", tc.prefix, k)
				}
			}
		}
	}
	if err := SetAnnotationPrefix("internal.example.com"); err == nil {
		t.Error("a prefix without '/' accepted")
	}
}
