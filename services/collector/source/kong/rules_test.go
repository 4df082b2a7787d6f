package kong_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

// ann is annotations with the ingress class every case of ExternalDNS'
// tests carries (they run with --annotation-filter
// kubernetes.io/ingress.class=kong).
func ann(kv ...string) map[string]string {
	a := collectortest.Ann(kv...)
	a["kubernetes.io/ingress.class"] = "kong"
	return a
}

type kongCase struct {
	name string
	cfg  func(*collector.Config)
	ti   tcpIngress
	want []events.Endpoint // nil: nothing published
}

func runKongCases(t *testing.T, cases []kongCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := collectortest.NewNamespace(t)
			create(t, ns, tc.ti.object(), tc.ti.lb...)
			cfg := kongConfig(ns)
			cfg.AnnotationFilter = "kubernetes.io/ingress.class=kong"
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			expectFull(t, cfg, kongSubject(ns, tc.ti.name), tc.want)
		})
	}
}

// ExternalDNS v0.21's TestKongTCPIngressEndpoints, case by case
// (source/kong_tcpingress_test.go).
func TestKongTCPIngressExternalDNSCases(t *testing.T) {
	const (
		elbA = "a691234567a314e71861a4303f06a3bd-1291189659.us-east-1.elb.amazonaws.com"
		elbB = "a123456769a314e71861a4303f06a3bd-1291189659.us-east-1.elb.amazonaws.com"
		elbC = "a12e71861a4303f063456769a314a3bd-1291189659.us-east-1.elb.amazonaws.com"
	)
	runKongCases(t, []kongCase{
		{name: "TCPIngress with hostname annotation",
			ti:   tcpIngress{name: "tcp-ingress-annotation", annotations: ann("hostname", "a.example.com"), lb: []string{elbA}},
			want: cnames(elbA, "a.example.com")},
		{name: "TCPIngress using SNI",
			ti:   tcpIngress{name: "tcp-ingress-sni", annotations: ann(), hosts: []string{"b.example.com", "c.example.com"}, lb: []string{elbB}},
			want: cnames(elbB, "b.example.com", "c.example.com")},
		{name: "TCPIngress with hostname annotation and using SNI",
			ti:   tcpIngress{name: "tcp-ingress-both", annotations: ann("hostname", "d.example.com"), hosts: []string{"e.example.com", "f.example.com"}, lb: []string{elbC}},
			want: cnames(elbC, "d.example.com", "e.example.com", "f.example.com")},
		{name: "TCPIngress ignoring hostname annotation", cfg: func(c *collector.Config) { c.IgnoreHostnameAnnotation = true },
			ti:   tcpIngress{name: "tcp-ingress-both", annotations: ann("hostname", "d.example.com"), hosts: []string{"e.example.com", "f.example.com"}, lb: []string{elbC}},
			want: cnames(elbC, "e.example.com", "f.example.com")},
		{name: "TCPIngress with target annotation",
			ti:   tcpIngress{name: "tcp-ingress-sni", annotations: ann("target", "203.2.45.7"), hosts: []string{"b.example.com", "c.example.com"}, lb: []string{elbB}},
			want: []events.Endpoint{collectortest.EP("b.example.com", "A", "203.2.45.7"), collectortest.EP("c.example.com", "A", "203.2.45.7")}},
		{name: "TCPIngress with provider-specific annotation",
			ti: tcpIngress{name: "tcp-ingress-provider-specific", annotations: ann("hostname", "a.example.com", "aws-weight", "10"), lb: []string{"1.2.3.4"}},
			want: []events.Endpoint{func() events.Endpoint {
				e := collectortest.EP("a.example.com", "A", "1.2.3.4")
				e.ProviderSpecific = []events.ProviderSpecificProperty{{Name: "aws/weight", Value: "10"}}
				return e
			}()}},
	})
}

// The rest of the rules: annotation and label filters, what ExternalDNS'
// source does not read (controller, --fqdn-template), ttl and
// set-identifier, a load balancer entry with IP and hostname.
func TestKongRules(t *testing.T) {
	lb := []string{"192.0.2.1"}
	runKongCases(t, []kongCase{
		{name: "annotation filter excludes", ti: tcpIngress{name: "t", annotations: collectortest.Ann("hostname", "a.example.org"), lb: lb}},
		{name: "label filter excludes (ExternalDNS v0.23)", cfg: func(c *collector.Config) { c.LabelFilter = "dns=public" },
			ti: tcpIngress{name: "t", annotations: ann("hostname", "a.example.org"), labels: map[string]string{"dns": "private"}, lb: lb}},
		{name: "label filter admits", cfg: func(c *collector.Config) { c.LabelFilter = "dns=public" },
			ti:   tcpIngress{name: "t", annotations: ann("hostname", "a.example.org"), labels: map[string]string{"dns": "public"}, lb: lb},
			want: []events.Endpoint{collectortest.EP("a.example.org", "A", "192.0.2.1")}},
		{name: "controller annotation is not read, as in ExternalDNS v0.21",
			ti:   tcpIngress{name: "t", annotations: ann("hostname", "a.example.org", "controller", "other"), lb: lb},
			want: []events.Endpoint{collectortest.EP("a.example.org", "A", "192.0.2.1")}},
		{name: "no template, as in ExternalDNS", cfg: func(c *collector.Config) { c.FQDNTemplate = "{{.Name}}.example.org" },
			ti: tcpIngress{name: "t", annotations: ann(), lb: lb}},
		{name: "no load balancer, no target: nothing", ti: tcpIngress{name: "t", annotations: ann("hostname", "a.example.org")}},
		{name: "ttl and set-identifier",
			ti: tcpIngress{name: "t", annotations: ann("hostname", "a.example.org", "ttl", "2m", "set-identifier", "eu"), lb: []string{"192.0.2.1", "2001:db8::1"}},
			want: []events.Endpoint{collectortest.WithSetID(events.NewEndpoint("a.example.org", "A", 120, "192.0.2.1"), "eu"),
				collectortest.WithSetID(events.NewEndpoint("a.example.org", "AAAA", 120, "2001:db8::1"), "eu")}},
	})
	t.Run("a load balancer entry with IP and hostname gives both", func(t *testing.T) {
		ns := collectortest.NewNamespace(t)
		u := tcpIngress{name: "t", hosts: []string{"a.example.org"}}.object()
		dc := collectortest.DynamicClient(t, collectortest.Cluster.Config)
		got := collectortest.CreateObject(t, dc, tcpIngresses, ns, u)
		got.Object["status"] = map[string]any{"loadBalancer": map[string]any{"ingress": []any{map[string]any{"ip": "192.0.2.1", "hostname": "lb.example.net"}}}}
		if _, err := dc.Resource(tcpIngresses).Namespace(ns).UpdateStatus(t.Context(), got, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		expectFull(t, kongConfig(ns), kongSubject(ns, "t"), []events.Endpoint{collectortest.EP("a.example.org", "A", "192.0.2.1"), collectortest.EP("a.example.org", "CNAME", "lb.example.net")})
	})
}

// Bad input is reported on the TCPIngress (Event, metric); its valid
// endpoints are still published. The test CRD keeps any shape, so a spec
// that is not Kong's reaches the source.
func TestKongInvalidInputReported(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	before := collectortest.InvalidInput(t, "kong-tcpingress", "InvalidHostname")
	create(t, ns, tcpIngress{name: "bad", annotations: collectortest.Ann("ttl", "abc"), hosts: []string{"bad..example.org", "ok.example.org"}}.object(), "192.0.2.1")
	broken := tcpIngress{name: "broken", annotations: collectortest.Ann("hostname", "still.example.org")}.object()
	broken.Object["spec"] = map[string]any{"rules": "not a list"}
	create(t, ns, broken, "192.0.2.1")
	collectortest.StartCollector(t, kongConfig(ns))
	collectortest.WaitState(t, kongSubject(ns, "bad"), []events.Endpoint{collectortest.EP("ok.example.org", "A", "192.0.2.1")})
	collectortest.ExpectEvents(t, ns, "TCPIngress", "bad", `ttl "abc"`, `bad..example.org`)
	collectortest.WaitState(t, kongSubject(ns, "broken"), []events.Endpoint{collectortest.EP("still.example.org", "A", "192.0.2.1")})
	collectortest.ExpectEvents(t, ns, "TCPIngress", "broken", "InvalidSpec")
	if got := collectortest.InvalidInput(t, "kong-tcpingress", "InvalidHostname") - before; got < 1 {
		t.Errorf("metric grew by %v, want >= 1", got)
	}
}

// Kong writing a new load balancer republishes the TCPIngress; a deleted
// one is a tombstone.
func TestKongLifecycle(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	create(t, ns, tcpIngress{name: "db", hosts: []string{"db.example.org"}}.object(), "192.0.2.1")
	collectortest.StartCollector(t, kongConfig(ns))
	subj := kongSubject(ns, "db")
	collectortest.WaitState(t, subj, []events.Endpoint{collectortest.EP("db.example.org", "A", "192.0.2.1")})
	res := collectortest.DynamicClient(t, collectortest.Cluster.Config).Resource(tcpIngresses).Namespace(ns)
	u, err := res.Get(t.Context(), "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	u.Object["status"] = loadBalancer("lb.example.net")
	if _, err := res.UpdateStatus(t.Context(), u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	collectortest.WaitState(t, subj, []events.Endpoint{collectortest.EP("db.example.org", "CNAME", "lb.example.net")})
	if err := res.Delete(t.Context(), "db", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	collectortest.WaitState(t, subj, nil)
}
