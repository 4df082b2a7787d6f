package crd

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector/source"
)

func obj(entries ...any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "externaldns.k8s.io/v1alpha1", "kind": "DNSEndpoint",
		"metadata": map[string]any{"name": "x", "namespace": "ns"},
		"spec":     map[string]any{"endpoints": entries},
	}}
}

func e(name, typ string, targets ...any) map[string]any {
	return map[string]any{"dnsName": name, "recordType": typ, "targets": targets}
}

// Entries the API server may let through (a looser CRD given with
// --crd-source-kind, an older schema) are checked here: each invalid one
// is skipped with a Problem naming it; the valid ones are kept.
func TestParseEndpointsInvalid(t *testing.T) {
	for _, tc := range []struct {
		name  string
		entry any
		want  string // in the problem
	}{
		{"unknown record type", e("a.example.org", "BOGUS", "x"), `recordType "BOGUS"`},
		{"lower-case record type", e("a.example.org", "a", "192.0.2.1"), `recordType "a"`},
		{"empty record type", e("a.example.org", "", "192.0.2.1"), `recordType ""`},
		{"bad dnsName", e("bad..example.org", "A", "192.0.2.1"), "dnsName"},
		{"A with a host name", e("a.example.org", "A", "h.example.org"), "not an IPv4"},
		{"A with IPv6", e("a.example.org", "A", "2001:db8::1"), "not an IPv4"},
		{"AAAA with IPv4", e("a.example.org", "AAAA", "192.0.2.1"), "not an IPv6"},
		{"CNAME with an address", e("a.example.org", "CNAME", "192.0.2.1"), "address"},
		{"CNAME with a bad name", e("a.example.org", "CNAME", "bad name"), "neither"},
		{"no targets", map[string]any{"dnsName": "a.example.org", "recordType": "A"}, "no targets"},
		{"MX without preference", e("a.example.org", "MX", "mail.example.org"), "preference"},
		{"SRV malformed", e("a.example.org", "SRV", "1 2 host.example.org."), "priority"},
		{"negative ttl", map[string]any{"dnsName": "a.example.org", "recordType": "A", "targets": []any{"192.0.2.1"}, "recordTTL": int64(-5)}, "recordTTL"},
		{"ttl of the wrong type", map[string]any{"dnsName": "a.example.org", "recordType": "A", "targets": []any{"192.0.2.1"}, "recordTTL": "60"}, "recordTTL"},
		{"not an object", "a.example.org", "not an object"},
		{"providerSpecific without name", map[string]any{"dnsName": "a.example.org", "recordType": "A", "targets": []any{"192.0.2.1"},
			"providerSpecific": []any{map[string]any{"value": "v"}}}, "providerSpecific"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eps, problems := ParseEndpoints(obj(e("ok.example.org", "A", "192.0.2.1"), tc.entry))
			if len(eps) != 1 || eps[0].DNSName != "ok.example.org" {
				t.Fatalf("endpoints %+v, want only ok.example.org", eps)
			}
			if len(problems) != 1 {
				t.Fatalf("problems %v, want 1", problems)
			}
			var p *source.Problem
			if !errors.As(problems[0], &p) || p.Reason != ReasonInvalidEndpoint || p.Field != "spec.endpoints[1]" || p.Object == nil {
				t.Fatalf("problem %#v", problems[0])
			}
			if !strings.Contains(p.Error(), tc.want) {
				t.Fatalf("problem %q, want it to mention %q", p.Error(), tc.want)
			}
		})
	}
}

func TestParseEndpointsValid(t *testing.T) {
	eps, problems := ParseEndpoints(obj(
		e("A.Example.org.", "A", "192.0.2.2", "192.0.2.1", "192.0.2.1"),
		e("srv.example.org", "SRV", "0 50 443 target.example.org.", "0 0 0 ."),
		e("txt.example.org", "TXT", "v=spf1 -all"),
		e("n.example.org", "NAPTR", `100 10 "u" "E2U+sip" "!^.*$!sip:info@example.org!" .`),
		e("1.2.0.192.in-addr.arpa", "PTR", "a.example.org"),
	))
	if len(problems) != 0 {
		t.Fatalf("problems %v", problems)
	}
	want := []events.Endpoint{
		events.NewEndpoint("1.2.0.192.in-addr.arpa", "PTR", 0, "a.example.org"),
		events.NewEndpoint("a.example.org", "A", 0, "192.0.2.1", "192.0.2.2"),
		events.NewEndpoint("n.example.org", "NAPTR", 0, `100 10 "u" "E2U+sip" "!^.*$!sip:info@example.org!" .`),
		events.NewEndpoint("srv.example.org", "SRV", 0, "0 50 443 target.example.org", "0 0 0 ."),
		events.NewEndpoint("txt.example.org", "TXT", 0, "v=spf1 -all"),
	}
	events.SortEndpoints(want)
	if len(eps) != len(want) {
		t.Fatalf("got %+v", eps)
	}
	for i := range want {
		if eps[i].DNSName != want[i].DNSName || eps[i].RecordType != want[i].RecordType || strings.Join(eps[i].Targets, "|") != strings.Join(want[i].Targets, "|") {
			t.Errorf("endpoint %d: %+v, want %+v", i, eps[i], want[i])
		}
	}
	if eps, problems := ParseEndpoints(&unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}); eps != nil || problems != nil {
		t.Fatalf("no endpoints: %v %v", eps, problems)
	}
	if _, problems := ParseEndpoints(&unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"endpoints": "x"}}}); len(problems) != 1 {
		t.Fatalf("spec.endpoints not a list: %v", problems)
	}
}

func TestObservedApplied(t *testing.T) {
	o := NewObserved()
	want := []events.Endpoint{
		events.NewEndpoint("a.example.org", "A", 0, "192.0.2.1"),
		{DNSName: "b.example.org", RecordType: "CNAME", SetIdentifier: "eu", Targets: []string{"lb.example.net"}},
	}
	if !Applied(o, nil) {
		t.Fatal("nothing wanted is applied")
	}
	if Applied(o, want) {
		t.Fatal("applied with nothing observed")
	}
	o.Set("zs.observed.p1.org.example.a", &events.ObservedState{DNSName: "a.example.org", Records: []events.Endpoint{
		events.NewEndpoint("a.example.org", "A", 300, "192.0.2.1"), events.NewEndpoint("a.example.org", "TXT", 0, "owner")}})
	if Applied(o, want) {
		t.Fatal("applied with b missing")
	}
	o.Set("zs.observed.p2.org.example.b", &events.ObservedState{DNSName: "B.example.org.", Records: []events.Endpoint{
		events.NewEndpoint("b.example.org", "CNAME", 0, "lb.example.net")}})
	if Applied(o, want) {
		t.Fatal("applied with b's set identifier missing")
	}
	o.Set("zs.observed.p2.org.example.b", &events.ObservedState{DNSName: "b.example.org", Records: []events.Endpoint{
		{DNSName: "b.example.org", RecordType: "CNAME", SetIdentifier: "eu", Targets: []string{"LB.example.net."}}}})
	if !Applied(o, want) {
		t.Fatal("not applied with every record held")
	}
	o.Set("zs.observed.p1.org.example.a", &events.ObservedState{DNSName: "a.example.org"})
	if Applied(o, want) {
		t.Fatal("applied after a was emptied")
	}
	// Two providers at one name: either one holding it is enough.
	o.Set("zs.observed.p2.org.example.a", &events.ObservedState{DNSName: "a.example.org", Records: []events.Endpoint{
		events.NewEndpoint("a.example.org", "A", 0, "192.0.2.1")}})
	o.Set("zs.observed.p1.org.example.a", &events.ObservedState{DNSName: "a.example.org", Records: []events.Endpoint{
		events.NewEndpoint("a.example.org", "A", 0, "192.0.2.9")}})
	if !Applied(o, want) {
		t.Fatal("not applied with a held by the second provider")
	}
	o.Set("zs.observed.p2.org.example.a", &events.ObservedState{DNSName: "a.example.org"})
	if Applied(o, want) {
		t.Fatal("applied after the provider holding a emptied it")
	}
	o.Set("zs.observed.p1.org.example.a", &events.ObservedState{DNSName: "a.example.org"})
	if _, kept := o.byName["a.example.org"]; kept {
		t.Fatal("a name no provider holds is still kept")
	}
}
