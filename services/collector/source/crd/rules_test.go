package crd_test

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

type crdCase struct {
	name        string
	cfg         func(*collector.Config)
	labels      map[string]string
	annotations map[string]string
	entries     []map[string]any
	// want: nil means nothing is published.
	want []events.Endpoint
	// barrier adapts the barrier DNSEndpoint to the case's filters.
	barrier func(*unstructured.Unstructured)
}

func runCRDRules(t *testing.T, cases []crdCase) {
	t.Helper()
	dc := collectortest.DynamicClient(t, collectortest.Cluster.Config)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := collectortest.NewNamespace(t)
			cfg := collectortest.CRDConfig(ns)
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			collectortest.StartCollector(t, cfg)
			u := collectortest.DNSEndpoint("rec", tc.entries...)
			u.SetLabels(tc.labels)
			u.SetAnnotations(tc.annotations)
			collectortest.CreateDNSEndpoint(t, dc, ns, u)
			subj := collectortest.CRDSubject(ns, ns, "rec")
			if tc.want == nil {
				b := collectortest.DNSEndpoint("zz-barrier", collectortest.Entry("barrier."+ns+".test", "A", "192.0.2.254"))
				if tc.barrier != nil {
					tc.barrier(b)
				}
				collectortest.CreateDNSEndpoint(t, dc, ns, b)
				collectortest.WaitState(t, collectortest.CRDSubject(ns, ns, "zz-barrier"), []events.Endpoint{collectortest.EP("barrier."+ns+".test", "A", "192.0.2.254")})
				if s, ok := collectortest.LastState(t, subj); ok {
					t.Fatalf("published %v, want nothing", collectortest.Render(s.Endpoints))
				}
				return
			}
			s := collectortest.WaitState(t, subj, tc.want)
			wantRef := events.ObjectRef{Cluster: ns, Source: "crd", Namespace: ns, Name: "rec"}
			if s.Object != wantRef {
				t.Fatalf("object %+v, want %+v", s.Object, wantRef)
			}
		})
	}
}

// Which entries of spec.endpoints are published, and how.
func TestCRDRuleEntries(t *testing.T) {
	runCRDRules(t, []crdCase{
		{name: "A, AAAA, CNAME", entries: []map[string]any{
			collectortest.Entry("a.example.org", "A", "192.0.2.1", "192.0.2.2"), collectortest.Entry("a.example.org", "AAAA", "2001:db8::1"),
			collectortest.Entry("c.example.org", "CNAME", "a.example.org")},
			want: []events.Endpoint{collectortest.EP("a.example.org", "A", "192.0.2.1", "192.0.2.2"), collectortest.EP("a.example.org", "AAAA", "2001:db8::1"),
				collectortest.EP("c.example.org", "CNAME", "a.example.org")}},
		{name: "names and targets normalized", entries: []map[string]any{collectortest.Entry("WWW.Example.org.", "CNAME", "Backend.Example.NET.")},
			want: []events.Endpoint{collectortest.EP("www.example.org", "CNAME", "backend.example.net")}},
		{name: "wildcard name", entries: []map[string]any{collectortest.Entry("*.apps.example.org", "A", "192.0.2.1")},
			want: []events.Endpoint{collectortest.EP("*.apps.example.org", "A", "192.0.2.1")}},
		{name: "TXT, MX, SRV, NS", entries: []map[string]any{
			collectortest.Entry("t.example.org", "TXT", "hello world"), collectortest.Entry("example.org", "MX", "10 mail.example.org"),
			collectortest.Entry("_sip._tcp.example.org", "SRV", "10 5 5060 sip.example.org."), collectortest.Entry("sub.example.org", "NS", "ns1.example.net")},
			want: []events.Endpoint{collectortest.EP("t.example.org", "TXT", "hello world"), collectortest.EP("example.org", "MX", "10 mail.example.org"),
				collectortest.EP("_sip._tcp.example.org", "SRV", "10 5 5060 sip.example.org"), collectortest.EP("sub.example.org", "NS", "ns1.example.net")}},
		{name: "recordTTL", entries: []map[string]any{func() map[string]any {
			e := collectortest.Entry("a.example.org", "A", "192.0.2.1")
			e["recordTTL"] = int64(60)
			return e
		}()}, want: []events.Endpoint{events.NewEndpoint("a.example.org", "A", 60, "192.0.2.1")}},
		{name: "invalid entries skipped, valid kept", entries: []map[string]any{
			collectortest.Entry("ok.example.org", "A", "192.0.2.1"),
			collectortest.Entry("a.example.org", "A", "host.example.org"), collectortest.Entry("b.example.org", "AAAA", "192.0.2.1"),
			collectortest.Entry("c.example.org", "CNAME", "192.0.2.1"), collectortest.Entry("d.example.org", "A"), collectortest.Entry("e.example.org", "MX", "mail.example.org"),
			collectortest.Entry("f.example.org", "A", "192.0.2.1", "300.1.1.1")},
			want: []events.Endpoint{collectortest.EP("ok.example.org", "A", "192.0.2.1")}},
		{name: "only invalid entries: nothing", entries: []map[string]any{collectortest.Entry("a.example.org", "A", "host.example.org")}},
		{name: "no entries: nothing", entries: nil},
	})
}

// --label-filter and --annotation-filter apply to DNSEndpoints.
func TestCRDRuleFilters(t *testing.T) {
	e := []map[string]any{collectortest.Entry("a.example.org", "A", "192.0.2.1")}
	want := []events.Endpoint{collectortest.EP("a.example.org", "A", "192.0.2.1")}
	runCRDRules(t, []crdCase{
		{name: "label filter matches", cfg: func(c *collector.Config) { c.LabelFilter = "dns=yes" },
			labels: map[string]string{"dns": "yes"}, entries: e, want: want},
		{name: "label filter does not match", cfg: func(c *collector.Config) { c.LabelFilter = "dns=yes" },
			labels: map[string]string{"dns": "no"}, entries: e,
			barrier: func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"dns": "yes"}) }},
		{name: "annotation filter matches", cfg: func(c *collector.Config) { c.AnnotationFilter = "team=dns" },
			annotations: map[string]string{"team": "dns"}, entries: e, want: want},
		{name: "annotation filter does not match", cfg: func(c *collector.Config) { c.AnnotationFilter = "team=dns" },
			annotations: map[string]string{"team": "web"}, entries: e,
			barrier: func(u *unstructured.Unstructured) { u.SetAnnotations(map[string]string{"team": "dns"}) }},
	})
}

// Every field of an entry reaches the bus.
func TestCRDFieldsMapped(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	collectortest.StartCollector(t, collectortest.CRDConfig(ns))
	e := collectortest.Entry("Full.Example.org.", "CNAME", "lb.example.net")
	e["setIdentifier"] = "eu-west"
	e["recordTTL"] = int64(120)
	e["labels"] = map[string]any{"owner": "team-a", "env": "prod"}
	e["providerSpecific"] = []any{
		map[string]any{"name": "aws/weight", "value": "10"},
		map[string]any{"name": "alias", "value": "true"},
	}
	collectortest.CreateDNSEndpoint(t, collectortest.DynamicClient(t, collectortest.Cluster.Config), ns, collectortest.DNSEndpoint("full", e))
	want := events.Endpoint{
		DNSName: "full.example.org", RecordType: "CNAME", Targets: []string{"lb.example.net"},
		SetIdentifier: "eu-west", RecordTTL: 120, Labels: map[string]string{"owner": "team-a", "env": "prod"},
		ProviderSpecific: []events.ProviderSpecificProperty{{Name: "alias", Value: "true"}, {Name: "aws/weight", Value: "10"}},
	}
	s := collectortest.WaitState(t, collectortest.CRDSubject(ns, ns, "full"), []events.Endpoint{want})
	if len(s.Endpoints) != 1 || !reflect.DeepEqual(s.Endpoints[0], want) {
		t.Fatalf("published %+v\nwant %+v", s.Endpoints, want)
	}
}

// Invalid entries: a Warning Event on the DNSEndpoint, the metric, and
// the valid entries published.
func TestCRDInvalidEntriesReported(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	collectortest.StartCollector(t, collectortest.CRDConfig(ns))
	before := collectortest.InvalidInput(t, "crd", "InvalidEndpoint")
	collectortest.CreateDNSEndpoint(t, collectortest.DynamicClient(t, collectortest.Cluster.Config), ns, collectortest.DNSEndpoint("bad",
		collectortest.Entry("ok.example.org", "A", "192.0.2.1"),
		collectortest.Entry("a.example.org", "A", "host.example.org"),
		collectortest.Entry("b.example.org", "AAAA", "192.0.2.1")))
	collectortest.WaitState(t, collectortest.CRDSubject(ns, ns, "bad"), []events.Endpoint{collectortest.EP("ok.example.org", "A", "192.0.2.1")})
	msgs := collectortest.WaitObjectEvents(t, ns, "DNSEndpoint", "bad", 2)
	for _, want := range []string{"InvalidEndpoint", "spec.endpoints[1]", "spec.endpoints[2]"} {
		if !strings.Contains(msgs, want) {
			t.Errorf("no event with %q in:\n%s", want, msgs)
		}
	}
	if got := collectortest.InvalidInput(t, "crd", "InvalidEndpoint"); got < before+2 {
		t.Errorf("invalid_input_total{crd,InvalidEndpoint} went %v -> %v, want +2", before, got)
	}
}
