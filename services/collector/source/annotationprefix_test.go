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
	t.Cleanup(func() { _ = SetAnnotationPrefix("", false) })
	ann := map[string]string{
		AnnotationPrefixAlpha + "hostname": "alpha.example.org", AnnotationPrefix + "hostname": "ga.example.org",
		"internal.example.com/hostname":      "custom.example.org",
		AnnotationPrefixAlpha + "aws-weight": "1", AnnotationPrefix + "aws-weight": "2", "internal.example.com/aws-weight": "3",
		"internal.example.com/cloudflare-proxied": "true",
		"internal.example.com/ttl":                "60",
	}
	for _, tc := range []struct {
		prefix               string
		legacy               bool
		hostname, properties string
		kept                 []string
	}{
		{"", false, "alpha.example.org", "[{aws/weight 1}]", []string{AnnotationPrefixAlpha + "hostname", AnnotationPrefix + "hostname"}},
		{AnnotationPrefix, false, "ga.example.org", "[{aws/weight 2}]", []string{AnnotationPrefix + "hostname"}},
		{AnnotationPrefixAlpha, false, "alpha.example.org", "[{aws/weight 1}]", []string{AnnotationPrefixAlpha + "hostname"}},
		{"internal.example.com/", false, "custom.example.org",
			"[{aws/weight 3} {cloudflare/proxied true}]", []string{"internal.example.com/ttl"}},
		// v0.23: the prefix given wins, the alpha one is read too.
		{AnnotationPrefix, true, "ga.example.org", "[{aws/weight 2}]", []string{AnnotationPrefix + "hostname", AnnotationPrefixAlpha + "hostname"}},
	} {
		if err := SetAnnotationPrefix(tc.prefix, tc.legacy); err != nil {
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
		if tc.prefix != "" && !tc.legacy {
			for k := range kept {
				if !hasAnnotationPrefix(k) || len(k) < len(tc.prefix) || k[:len(tc.prefix)] != tc.prefix {
					t.Errorf("prefix %q: the informers keep %s", tc.prefix, k)
				}
			}
		}
	}
	if err := SetAnnotationPrefix("internal.example.com", false); err == nil {
		t.Error("a prefix without '/' accepted")
	}
	if err := SetAnnotationPrefix(AnnotationPrefixAlpha, true); err == nil {
		t.Error("--enable-legacy-annotation-prefix with the legacy prefix itself accepted")
	}
}
