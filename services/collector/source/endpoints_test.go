package source

import (
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/zonestream/zonestream/events"
)

func TestValidateHostname(t *testing.T) {
	for _, tc := range []struct {
		name     string
		wildcard bool
		ok       bool
	}{
		{"example.org", false, true},
		{"a-b_c.Example.ORG", false, true},
		{"*.example.org", true, true},
		{"*.example.org", false, false},
		{"a.*.example.org", true, false},
		{"", false, false},
		{"a..b", false, false},
		{"-a.b", false, false},
		{"a-.b", false, false},
		{"sp ace.org", false, false},
		{strings.Repeat("a", 64) + ".org", false, false},
		{strings.Repeat("a.", 127) + "org", false, false},
	} {
		if err := ValidateHostname(tc.name, tc.wildcard); (err == nil) != tc.ok {
			t.Errorf("ValidateHostname(%q, %v) = %v, want ok=%v", tc.name, tc.wildcard, err, tc.ok)
		}
	}
}

func TestValidateTarget(t *testing.T) {
	for in, ok := range map[string]bool{"192.0.2.1": true, "2001:db8::1": true, "lb.example.net": true, "a-1.example.net": true,
		"300.1.1.1": false, "10.0.0": false, "x.123": false, "sp ace.org": false, "": false} {
		if err := ValidateTarget(in); (err == nil) != ok {
			t.Errorf("ValidateTarget(%q) = %v, want ok=%v", in, err, ok)
		}
	}
}

func TestParseTTL(t *testing.T) {
	for in, want := range map[string]int64{"300": 300, " 60 ": 60, "5m": 300, "1h": 3600, "abc": -1, "0": -1, "-5": -1, "3000000000": -1, "500ms": -1} {
		got, err := ParseTTL(in)
		if want < 0 {
			if err == nil {
				t.Errorf("ParseTTL(%q) = %d, want an error", in, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("ParseTTL(%q) = %d, %v, want %d", in, got, err, want)
		}
	}
}

func TestRecordTypeFor(t *testing.T) {
	for in, want := range map[string]string{"192.0.2.1": "A", "2001:db8::1": "AAAA", "::ffff:192.0.2.1": "A", "lb.example.net": "CNAME"} {
		if got := RecordTypeFor(in); got != want {
			t.Errorf("RecordTypeFor(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestEndpointSetOneEndpointPerNameAndType(t *testing.T) {
	var s EndpointSet
	s.Add("A.example.org.", "192.0.2.2", "2001:db8::1", "lb.example.net")
	s.Add("a.example.org", "192.0.2.1", "192.0.2.2")
	got := s.Endpoints(60)
	want := []events.Endpoint{
		events.NewEndpoint("a.example.org", "A", 60, "192.0.2.1", "192.0.2.2"),
		events.NewEndpoint("a.example.org", "AAAA", 60, "2001:db8::1"),
		events.NewEndpoint("a.example.org", "CNAME", 60, "lb.example.net"),
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i].Key() != want[i].Key() || !events.SameRecords(want[i], got[i]) {
			t.Errorf("endpoint %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestTransform(t *testing.T) {
	f, err := ParseFilters("", "team=dns")
	if err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{
		Name: "web", Namespace: "default",
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		Annotations: map[string]string{
			"kubectl.kubernetes.io/last-applied-configuration": "{}",
			"external-dns.alpha.kubernetes.io/hostname":        "a.example.org",
			"external-dns.kubernetes.io/ttl":                   "60",
			"team":                                             "dns",
			"example.com/other":                                "x",
		},
	}}
	out, err := Transform(f.AnnotationKeys()...)(svc)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.Service)
	if got.ManagedFields != nil {
		t.Error("managedFields kept")
	}
	want := []string{"external-dns.alpha.kubernetes.io/hostname", "external-dns.kubernetes.io/ttl", "team"}
	keys := slices.Sorted(maps.Keys(got.Annotations))
	if !slices.Equal(keys, want) {
		t.Errorf("annotations kept: %v, want %v", keys, want)
	}
	if got.Kind != "Service" || got.APIVersion != "v1" {
		t.Errorf("TypeMeta not restored: %+v", got.TypeMeta)
	}
}
