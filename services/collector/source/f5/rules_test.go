package f5_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
	"github.com/zonestream/zonestream/services/collector/source/f5"
)

type serverCase struct {
	name             string
	annotationFilter string
	labelFilter      string
	server           server
	want             []events.Endpoint // nil: nothing published
}

func runServerRules(t *testing.T, k kind, cases []serverCase) {
	t.Helper()
	dc := collectortest.DynamicClient(t, collectortest.Cluster.Config)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := collectortest.NewNamespace(t)
			k.create(t, dc, ns, tc.server)
			var want func(string) []events.Endpoint
			if tc.want != nil {
				want = collectortest.Fixed(tc.want...)
			}
			edit := func(c *collector.Config) { c.AnnotationFilter, c.LabelFilter = tc.annotationFilter, tc.labelFilter }
			collectortest.StartAndExpect(t, config(ns, k.source), edit, subject(ns, k.source, ns, tc.server.name), want, ns)
		})
	}
}

func www(ttl int64, targets ...string) events.Endpoint {
	return events.NewEndpoint("www.example.com", "A", ttl, targets...)
}

// The cases both of ExternalDNS v0.21's F5 tables have
// (TestF5VirtualServerEndpoints, TestF5TransportServerEndpoints), same
// titles, objects and expected endpoints.
func sharedCases(kindName string) []serverCase {
	ttl600 := collectortest.Ann("ttl", "600")
	return []serverCase{
		{name: "F5 " + kindName + " with target annotation",
			server: server{name: "test-vs", annotations: collectortest.Ann("target", "192.168.1.150"), host: "www.example.com",
				address: "192.168.1.100", vsAddress: "192.168.1.200", status: "OK"},
			want: []events.Endpoint{www(0, "192.168.1.150")}},
		{name: "F5 " + kindName + " with host and virtualServerAddress set",
			server: server{name: "test-vs", host: "www.example.com", address: "192.168.1.100", vsAddress: "192.168.1.200", status: "OK"},
			want:   []events.Endpoint{www(0, "192.168.1.100")}},
		{name: "F5 " + kindName + " with host set and IP address from the status field",
			server: server{name: "test-vs", host: "www.example.com", vsAddress: "192.168.1.100", status: "OK"},
			want:   []events.Endpoint{www(0, "192.168.1.100")}},
		{name: "F5 " + kindName + " with no IP address set",
			server: server{name: "test-vs", host: "www.example.com"}},
		{name: "F5 " + kindName + " with matching annotation filter", annotationFilter: "foo=bar",
			server: server{name: "test-vs", annotations: map[string]string{"foo": "bar"}, host: "www.example.com",
				address: "192.168.1.100", vsAddress: "192.168.1.100", status: "OK"},
			want: []events.Endpoint{www(0, "192.168.1.100")}},
		{name: "F5 " + kindName + " with non-matching annotation filter", annotationFilter: "foo=bar",
			server: server{name: "test-vs", annotations: map[string]string{"bar": "foo"}, host: "www.example.com",
				address: "192.168.1.100", vsAddress: "192.168.1.100", status: "OK"}},
		{name: "F5 " + kindName + " TTL annotation",
			server: server{name: "test-vs", annotations: ttl600, host: "www.example.com", address: "192.168.1.100", vsAddress: "192.168.1.100", status: "OK"},
			want:   []events.Endpoint{www(600, "192.168.1.100")}},
		{name: "F5 " + kindName + " with error status but valid IP",
			server: server{name: "test-vs", annotations: ttl600, host: "www.example.com", address: "192.168.1.100", vsAddress: "192.168.1.100", status: "ERROR"},
			want:   []events.Endpoint{www(600, "192.168.1.100")}},
		{name: "F5 " + kindName + " with missing IP address and OK status",
			server: server{name: "test-vs", annotations: ttl600, host: "www.example.com", vsAddress: "None", status: "OK"}},
		{name: "F5 " + kindName + " does not support provider-specific annotations",
			server: server{name: "test-vs", annotations: collectortest.Ann("aws-weight", "10", "set-identifier", "eu"), host: "www.example.com",
				address: "192.168.1.100", vsAddress: "192.168.1.100", status: "OK"},
			want: []events.Endpoint{www(0, "192.168.1.100")}},
	}
}

// ExternalDNS v0.21's TestF5VirtualServerEndpoints. Left out: "with
// hostAliases containing empty strings", which F5's CRD refuses (an alias
// must match its hostname pattern); the source skips an empty alias all
// the same.
func TestF5VirtualServerExternalDNSCases(t *testing.T) {
	base := server{name: "test-vs", host: "www.example.com", address: "192.168.1.100", vsAddress: "192.168.1.100", status: "OK"}
	with := func(edit func(*server)) server { s := base; edit(&s); return s }
	aliases := []string{"alias1.example.com", "alias2.example.com"}
	at := func(ttl int64, target string, names ...string) []events.Endpoint {
		var eps []events.Endpoint
		for _, n := range names {
			eps = append(eps, events.NewEndpoint(n, "A", ttl, target))
		}
		return eps
	}
	all := []string{"www.example.com", "alias1.example.com", "alias2.example.com"}
	cases := append(sharedCases("VirtualServer"),
		serverCase{name: "F5 VirtualServer with hostAliases", server: with(func(s *server) { s.aliases = aliases }),
			want: at(0, "192.168.1.100", all...)},
		serverCase{name: "F5 VirtualServer with hostAliases and target annotation",
			server: with(func(s *server) { s.aliases = aliases; s.annotations = collectortest.Ann("target", "192.168.1.150") }),
			want:   at(0, "192.168.1.150", all...)},
		serverCase{name: "F5 VirtualServer with hostAliases and TTL annotation",
			server: with(func(s *server) { s.aliases = aliases; s.annotations = collectortest.Ann("ttl", "300") }),
			want:   at(300, "192.168.1.100", all...)},
		serverCase{name: "F5 VirtualServer with empty hostAliases", server: with(func(s *server) { s.aliases = []string{} }),
			want: at(0, "192.168.1.100", "www.example.com")},
	)
	runServerRules(t, vsKind, cases)
}

// ExternalDNS v0.21's TestF5TransportServerEndpoints.
func TestF5TransportServerExternalDNSCases(t *testing.T) {
	runServerRules(t, tsKind, sharedCases("TransportServer"))
}

// The rules ExternalDNS' tables do not show.
func TestF5Rules(t *testing.T) {
	base := server{name: "s", host: "www.example.com", vsAddress: "192.168.1.100", status: "OK"}
	with := func(edit func(*server)) server { s := base; edit(&s); return s }
	runServerRules(t, vsKind, []serverCase{
		{name: "IPv6 address is AAAA", server: with(func(s *server) { s.address = "2001:db8::10" }),
			want: []events.Endpoint{collectortest.EP("www.example.com", "AAAA", "2001:db8::10")}},
		{name: "target annotation hostname is CNAME", server: with(func(s *server) { s.annotations = collectortest.Ann("target", "bigip.example.net") }),
			want: []events.Endpoint{collectortest.EP("www.example.com", "CNAME", "bigip.example.net")}},
		{name: "status none in any case", server: with(func(s *server) { s.vsAddress = "none"; s.address = "192.168.1.100" })},
		{name: "no host", server: with(func(s *server) { s.host = "" })},
		{name: "label filter does not apply", labelFilter: "team=dns", server: base, want: []events.Endpoint{www(0, "192.168.1.100")}},
	})
}

// Bad input is reported on the object (a Warning Event, the
// invalid-input metric); what stays valid is published.
func TestF5InvalidInputReported(t *testing.T) {
	dc := collectortest.DynamicClient(t, collectortest.Cluster.Config)
	ns := collectortest.NewNamespace(t)
	before := collectortest.InvalidInput(t, f5.VirtualServerName, "InvalidAnnotation")
	vsKind.create(t, dc, ns, server{name: "bad", annotations: collectortest.Ann("ttl", "abc", "target", "10.0.0.256,192.0.2.7"),
		host: "www.example.com", vsAddress: "192.168.1.100", status: "OK"})
	collectortest.StartCollector(t, config(ns, f5.VirtualServerName))
	collectortest.WaitState(t, subject(ns, f5.VirtualServerName, ns, "bad"), []events.Endpoint{collectortest.EP("www.example.com", "A", "192.0.2.7")})
	collectortest.ExpectEvents(t, ns, "VirtualServer", "bad", `ttl "abc"`, `target "10.0.0.256"`)
	if got := collectortest.InvalidInput(t, f5.VirtualServerName, "InvalidAnnotation") - before; got < 2 {
		t.Errorf("metric grew by %v, want >= 2", got)
	}
}

// BIG-IP writing an address publishes the object; a changed address
// republishes it; a delete tombstones it.
func TestF5Incremental(t *testing.T) {
	dc := collectortest.DynamicClient(t, collectortest.Cluster.Config)
	ns := collectortest.NewNamespace(t)
	tsKind.create(t, dc, ns, server{name: "tcp", host: "tcp.example.com"})
	collectortest.StartCollector(t, config(ns, f5.TransportServerName))
	subj := subject(ns, f5.TransportServerName, ns, "tcp")
	u, err := dc.Resource(transportServers).Namespace(ns).Get(t.Context(), "tcp", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tsKind.setStatus(t, dc, u, "192.0.2.20", "OK")
	collectortest.WaitState(t, subj, []events.Endpoint{collectortest.EP("tcp.example.com", "A", "192.0.2.20")})
	if u, err = dc.Resource(transportServers).Namespace(ns).Get(t.Context(), "tcp", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	tsKind.setStatus(t, dc, u, "192.0.2.21", "OK")
	collectortest.WaitState(t, subj, []events.Endpoint{collectortest.EP("tcp.example.com", "A", "192.0.2.21")})
	if err := dc.Resource(transportServers).Namespace(ns).Delete(t.Context(), "tcp", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	collectortest.WaitState(t, subj, nil)
}
