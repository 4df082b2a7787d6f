package service_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

const webHost = "web.example.org"

// Headless Services: which endpoints of which EndpointSlices count.
func TestRuleHeadlessEndpoints(t *testing.T) {
	h := collectortest.Ann("hostname", webHost)
	ready := []podSpec{{name: "a", ip: "10.0.0.1"}, {name: "b", ip: "10.0.0.2"}, {name: "c", ip: "10.0.0.3", notReady: true}}
	notReady := func(s *corev1.Service) *corev1.Service {
		s.Spec.PublishNotReadyAddresses = true
		return s
	}
	runDepRules(t, []depCase{
		{name: "ready endpoints' addresses", pods: ready, svc: headless("web", h),
			want: eps(collectortest.EP(webHost, "A", "10.0.0.1", "10.0.0.2"))},
		{name: "not-ready too with publishNotReadyAddresses", pods: ready, svc: notReady(headless("web", h)),
			want: eps(collectortest.EP(webHost, "A", "10.0.0.1", "10.0.0.2", "10.0.0.3"))},
		{name: "not-ready too with --always-publish-not-ready-addresses", pods: ready, svc: headless("web", h),
			cfg:  func(c *collector.Config) { c.Service.AlwaysPublishNotReadyAddresses = true },
			want: eps(collectortest.EP(webHost, "A", "10.0.0.1", "10.0.0.2", "10.0.0.3"))},
		{name: "pod not matching the selector is ignored", svc: headless("web", h),
			pods: []podSpec{{name: "a", ip: "10.0.0.1"}, {name: "x", ip: "10.0.0.9", labels: map[string]string{"app": "other"}}},
			want: eps(collectortest.EP(webHost, "A", "10.0.0.1"))},
		{name: "endpoint not targeting a pod is ignored", svc: headless("web", h), pods: []podSpec{{name: "a", ip: "10.0.0.1"}},
			extra: []discoveryv1.Endpoint{
				{Addresses: []string{"10.0.0.8"}},
				{Addresses: []string{"10.0.0.9"}, TargetRef: &corev1.ObjectReference{Kind: "Node", Name: "a"}},
				{Addresses: []string{"10.0.0.10"}, TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "missing"}},
			},
			want: eps(collectortest.EP(webHost, "A", "10.0.0.1"))},
		{name: "selected pod without endpoint is not published", svc: headless("web", h),
			pods: []podSpec{{name: "a", ip: "10.0.0.1"}, {name: "b", ip: "10.0.0.2", noEndpoint: true}},
			want: eps(collectortest.EP(webHost, "A", "10.0.0.1"))},
		{name: "dual stack: A and AAAA", svc: headless("web", h),
			pods: []podSpec{{name: "a", ip: "10.0.0.1"}, {name: "b", ip: "2001:db8::2"}},
			want: eps(collectortest.EP(webHost, "A", "10.0.0.1"), collectortest.EP(webHost, "AAAA", "2001:db8::2"))},
		{name: "internal-hostname and template names get the endpoints too", svc: headless("web", collectortest.Ann("internal-hostname", "in.example.org")),
			cfg:  func(c *collector.Config) { c.FQDNTemplate = "{{.Name}}.tmpl.org"; c.CombineFQDNAnnotation = true },
			pods: []podSpec{{name: "a", ip: "10.0.0.1"}},
			want: eps(collectortest.EP("in.example.org", "A", "10.0.0.1"), collectortest.EP("web.tmpl.org", "A", "10.0.0.1"))},
		{name: "ttl applies", svc: headless("web", collectortest.Ann("hostname", webHost, "ttl", "60")), pods: []podSpec{{name: "a", ip: "10.0.0.1"}},
			want: eps(events.NewEndpoint(webHost, "A", 60, "10.0.0.1"))},
		{name: "no ready endpoint: nothing", svc: headless("web", h), pods: []podSpec{{name: "a", ip: "10.0.0.1", notReady: true}}},
		{name: "service target annotation wins", svc: headless("web", collectortest.Ann("hostname", webHost, "target", "192.0.2.9")),
			pods: ready, want: eps(collectortest.EP(webHost, "A", "192.0.2.9"))},
	})
}

// Headless Services: what an endpoint's Pod stands for.
func TestRuleHeadlessPodTargets(t *testing.T) {
	h := collectortest.Ann("hostname", webHost)
	nodes := []nodeSpec{
		{name: "n1", addrs: []corev1.NodeAddress{collectortest.ExternalIP("198.51.100.1"), collectortest.InternalIP("10.1.0.1"), collectortest.InternalIP("fd00::1")}},
		{name: "n2", addrs: []corev1.NodeAddress{collectortest.InternalIP("10.1.0.2")}},
	}
	onNodes := []podSpec{
		{name: "a", ip: "10.0.0.1", node: "n1", hostIP: "10.1.0.1"},
		{name: "b", ip: "10.0.0.2", node: "n2", hostIP: "10.1.0.2"},
	}
	runDepRules(t, []depCase{
		{name: "pod target annotation", svc: headless("web", h),
			pods: []podSpec{{name: "a", ip: "10.0.0.1", annotations: collectortest.Ann("target", "203.0.113.5,2001:db8::5")}, {name: "b", ip: "10.0.0.2"}},
			want: eps(collectortest.EP(webHost, "A", "10.0.0.2", "203.0.113.5"), collectortest.EP(webHost, "AAAA", "2001:db8::5"))},
		{name: "pod target annotation stable prefix, hostname is CNAME", svc: headless("web", h),
			pods: []podSpec{{name: "a", ip: "10.0.0.1", annotations: collectortest.Ann(collectortest.Stable+"target", "edge.example.net.")}},
			want: eps(collectortest.EP(webHost, "CNAME", "edge.example.net"))},
		{name: "endpoints-type NodeExternalIP: ExternalIP and IPv6 InternalIP of the pod's node", nodes: nodes, pods: onNodes,
			svc:  headless("web", collectortest.Ann("hostname", webHost, "endpoints-type", "NodeExternalIP")),
			want: eps(collectortest.EP(webHost, "A", "198.51.100.1"), collectortest.EP(webHost, "AAAA", "fd00::1"))},
		// As ExternalDNS: Nodes are watched only for NodePort Services, so
		// a release with no access to Nodes (ExternalDNS' chart, namespaced)
		// syncs; NodeExternalIP targets are then skipped.
		{name: "endpoints-type NodeExternalIP, NodePort filtered out: skipped", nodes: nodes, pods: onNodes,
			svc: headless("web", collectortest.Ann("hostname", webHost, "endpoints-type", "NodeExternalIP")),
			cfg: func(c *collector.Config) { c.Service.ServiceTypeFilter = []string{"ClusterIP"} }},
		{name: "endpoints-type HostIP", nodes: nodes, pods: onNodes, svc: headless("web", collectortest.Ann("hostname", webHost, "endpoints-type", "HostIP")),
			want: eps(collectortest.EP(webHost, "A", "10.1.0.1", "10.1.0.2"))},
		{name: "--publish-host-ip", nodes: nodes, pods: onNodes, svc: headless("web", h),
			cfg:  func(c *collector.Config) { c.Service.PublishHostIP = true },
			want: eps(collectortest.EP(webHost, "A", "10.1.0.1", "10.1.0.2"))},
		{name: "NodeExternalIP wins over --publish-host-ip", nodes: nodes, pods: onNodes,
			svc:  headless("web", collectortest.Ann("hostname", webHost, "endpoints-type", "NodeExternalIP")),
			cfg:  func(c *collector.Config) { c.Service.PublishHostIP = true },
			want: eps(collectortest.EP(webHost, "A", "198.51.100.1"), collectortest.EP(webHost, "AAAA", "fd00::1"))},
		{name: "pod target annotation wins over endpoints-type", nodes: nodes, svc: headless("web", collectortest.Ann("hostname", webHost, "endpoints-type", "HostIP")),
			pods: []podSpec{{name: "a", ip: "10.0.0.1", node: "n1", hostIP: "10.1.0.1", annotations: collectortest.Ann("target", "203.0.113.5")},
				{name: "b", ip: "10.0.0.2", node: "n2", hostIP: "10.1.0.2"}},
			want: eps(collectortest.EP(webHost, "A", "10.1.0.2", "203.0.113.5"))},
		{name: "unknown endpoints-type: endpoint addresses", nodes: nodes, pods: onNodes,
			svc:  headless("web", collectortest.Ann("hostname", webHost, "endpoints-type", "nodeexternalip")),
			want: eps(collectortest.EP(webHost, "A", "10.0.0.1", "10.0.0.2"))},
		{name: "invalid pod target skipped, valid kept", svc: headless("web", h),
			pods: []podSpec{{name: "a", ip: "10.0.0.1", annotations: collectortest.Ann("target", "300.1.1.1,203.0.113.5")}},
			want: eps(collectortest.EP(webHost, "A", "203.0.113.5"))},
		{name: "only invalid pod targets: endpoint address", svc: headless("web", h),
			pods: []podSpec{{name: "a", ip: "10.0.0.1", annotations: collectortest.Ann("target", "300.1.1.1")}},
			want: eps(collectortest.EP(webHost, "A", "10.0.0.1"))},
	})
}

// Headless Services: Pods with a spec.hostname get a name of their own
// under every name of the Service.
func TestRuleHeadlessPodHostnames(t *testing.T) {
	pods := []podSpec{
		{name: "web-0", hostname: "web-0", ip: "10.0.0.1"},
		{name: "web-1", hostname: "web-1", ip: "10.0.0.2", annotations: collectortest.Ann("target", "203.0.113.1")},
		{name: "other", ip: "10.0.0.3"},
		{name: "web-2", hostname: "web-2", ip: "10.0.0.4", notReady: true},
	}
	runDepRules(t, []depCase{
		{name: "per-pod names", svc: headless("web", collectortest.Ann("hostname", webHost)), pods: pods,
			want: eps(collectortest.EP(webHost, "A", "10.0.0.1", "10.0.0.3", "203.0.113.1"),
				collectortest.EP("web-0."+webHost, "A", "10.0.0.1"), collectortest.EP("web-1."+webHost, "A", "203.0.113.1"))},
		{name: "per-pod names under every name", svc: headless("web", collectortest.Ann("hostname", "a.example.org,b.example.org", "internal-hostname", "in.example.org")),
			pods: pods[:1],
			want: eps(collectortest.EP("a.example.org", "A", "10.0.0.1"), collectortest.EP("web-0.a.example.org", "A", "10.0.0.1"),
				collectortest.EP("b.example.org", "A", "10.0.0.1"), collectortest.EP("web-0.b.example.org", "A", "10.0.0.1"),
				collectortest.EP("in.example.org", "A", "10.0.0.1"), collectortest.EP("web-0.in.example.org", "A", "10.0.0.1"))},
		{name: "pods sharing a hostname share the name", svc: headless("web", collectortest.Ann("hostname", webHost)),
			pods: []podSpec{{name: "a", hostname: "db", ip: "10.0.0.1"}, {name: "b", hostname: "db", ip: "10.0.0.2"}},
			want: eps(collectortest.EP(webHost, "A", "10.0.0.1", "10.0.0.2"), collectortest.EP("db."+webHost, "A", "10.0.0.1", "10.0.0.2"))},
		{name: "not without service target annotation", svc: headless("web", collectortest.Ann("hostname", webHost, "target", "192.0.2.9")), pods: pods,
			want: eps(collectortest.EP(webHost, "A", "192.0.2.9"))},
	})
}

// exposeIPv6 is --expose-internal-ipv6.
func exposeIPv6(c *collector.Config) { c.Node.ExposeInternalIPv6 = true }

// NodePort Services: which Nodes and which of their addresses, as
// ExternalDNS' own tests have them (IPv6 InternalIPs only with
// --expose-internal-ipv6; with externalTrafficPolicy Local the Nodes of the
// readiest Pods; unschedulable Nodes left out).
func TestRuleNodePortTargets(t *testing.T) {
	h := collectortest.Ann("hostname", webHost)
	mixed := []nodeSpec{
		{name: "n1", addrs: []corev1.NodeAddress{collectortest.ExternalIP("198.51.100.1"), collectortest.InternalIP("10.1.0.1"), collectortest.InternalIP("fd00::1")}},
		{name: "n2", addrs: []corev1.NodeAddress{collectortest.InternalIP("10.1.0.2")}},
	}
	internalOnly := []nodeSpec{
		{name: "n1", addrs: []corev1.NodeAddress{collectortest.InternalIP("10.1.0.1"), collectortest.InternalIP("fd00::1")}},
		{name: "n2", addrs: []corev1.NodeAddress{collectortest.InternalIP("10.1.0.2"), {Type: corev1.NodeHostName, Address: "n2"}}},
	}
	local := func(s *corev1.Service) *corev1.Service {
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		return s
	}
	fourNodes := []nodeSpec{
		{name: "n1", addrs: []corev1.NodeAddress{collectortest.InternalIP("10.1.0.1")}},
		{name: "n2", addrs: []corev1.NodeAddress{collectortest.InternalIP("10.1.0.2")}},
		{name: "n3", addrs: []corev1.NodeAddress{collectortest.InternalIP("10.1.0.3")}},
		{name: "n4", addrs: []corev1.NodeAddress{collectortest.InternalIP("10.1.0.4")}},
	}
	runDepRules(t, []depCase{
		{name: "external IPs of all nodes", nodes: mixed, svc: nodePort("np", h),
			want: eps(collectortest.EP(webHost, "A", "198.51.100.1"))},
		{name: "--expose-internal-ipv6: external IPs plus IPv6 internal", nodes: mixed, svc: nodePort("np", h), cfg: exposeIPv6,
			want: eps(collectortest.EP(webHost, "A", "198.51.100.1"), collectortest.EP(webHost, "AAAA", "fd00::1"))},
		{name: "no external IP: internal IPs", nodes: internalOnly, svc: nodePort("np", h),
			want: eps(collectortest.EP(webHost, "A", "10.1.0.1", "10.1.0.2"), collectortest.EP(webHost, "AAAA", "fd00::1"))},
		{name: "access public without external IPs: nothing", nodes: internalOnly, svc: nodePort("np", collectortest.Ann("hostname", webHost, "access", "public"))},
		{name: "access public, --expose-internal-ipv6", nodes: internalOnly, cfg: exposeIPv6,
			svc:  nodePort("np", collectortest.Ann("hostname", webHost, "access", "public")),
			want: eps(collectortest.EP(webHost, "AAAA", "fd00::1"))},
		{name: "unschedulable nodes left out", svc: nodePort("np", h), nodes: []nodeSpec{
			{name: "n1", addrs: []corev1.NodeAddress{collectortest.InternalIP("10.1.0.1")}},
			{name: "n2", addrs: []corev1.NodeAddress{collectortest.InternalIP("10.1.0.2")}, unschedulable: true}},
			want: eps(collectortest.EP(webHost, "A", "10.1.0.1"))},
		{name: "--exclude-unschedulable=false", svc: nodePort("np", h), cfg: func(c *collector.Config) { c.Node.IncludeUnschedulable = true },
			nodes: []nodeSpec{
				{name: "n1", addrs: []corev1.NodeAddress{collectortest.InternalIP("10.1.0.1")}},
				{name: "n2", addrs: []corev1.NodeAddress{collectortest.InternalIP("10.1.0.2")}, unschedulable: true}},
			want: eps(collectortest.EP(webHost, "A", "10.1.0.1", "10.1.0.2"))},
		{name: "access private", nodes: mixed, svc: nodePort("np", collectortest.Ann("hostname", webHost, "access", "private")),
			want: eps(collectortest.EP(webHost, "A", "10.1.0.1", "10.1.0.2"), collectortest.EP(webHost, "AAAA", "fd00::1"))},
		{name: "access stable prefix", nodes: mixed, svc: nodePort("np", collectortest.Ann("hostname", webHost, collectortest.Stable+"access", "private")),
			want: eps(collectortest.EP(webHost, "A", "10.1.0.1", "10.1.0.2"), collectortest.EP(webHost, "AAAA", "fd00::1"))},
		{name: "externalTrafficPolicy Local: nodes of running selected pods", nodes: fourNodes, svc: local(nodePort("np", h)),
			pods: []podSpec{
				{name: "a", node: "n1", ip: "10.0.0.1"},
				{name: "b", node: "n2", ip: "10.0.0.2", phase: corev1.PodPending},
				{name: "c", node: "n3", ip: "10.0.0.3", labels: map[string]string{"app": "other"}},
				{name: "d", node: "n1", ip: "10.0.0.4"},
			},
			want: eps(collectortest.EP(webHost, "A", "10.1.0.1"))},
		{name: "externalTrafficPolicy Local without running pod: nothing", nodes: fourNodes, svc: local(nodePort("np", h)),
			pods: []podSpec{{name: "b", node: "n2", ip: "10.0.0.2", phase: corev1.PodPending}}},
		{name: "externalTrafficPolicy Local: only nodes with a ready pod", nodes: fourNodes, svc: local(nodePort("np", h)),
			pods: []podSpec{
				{name: "a", node: "n1", ip: "10.0.0.1"},
				{name: "b", node: "n2", ip: "10.0.0.2", notReady: true},
			},
			want: eps(collectortest.EP(webHost, "A", "10.1.0.1"))},
		{name: "externalTrafficPolicy Local, no pod ready: nodes of running pods", nodes: fourNodes, svc: local(nodePort("np", h)),
			pods: []podSpec{
				{name: "a", node: "n1", ip: "10.0.0.1", notReady: true},
				{name: "b", node: "n2", ip: "10.0.0.2", notReady: true},
			},
			want: eps(collectortest.EP(webHost, "A", "10.1.0.1", "10.1.0.2"))},
		{name: "target annotation wins", nodes: mixed, svc: nodePort("np", collectortest.Ann("hostname", webHost, "target", "192.0.2.9")),
			want: eps(collectortest.EP(webHost, "A", "192.0.2.9"))},
		{name: "internal-hostname gets node addresses", nodes: mixed, svc: nodePort("np", collectortest.Ann("internal-hostname", "in.example.org")),
			want: eps(collectortest.EP("in.example.org", "A", "198.51.100.1"))},
		{name: "no node: nothing", svc: nodePort("np", h)},
	})
}

// NodePort Services: SRV records per node port, only when SRV is managed.
func TestRuleNodePortSRV(t *testing.T) {
	nodes := []nodeSpec{{name: "n1", addrs: []corev1.NodeAddress{collectortest.ExternalIP("198.51.100.1")}}}
	srv := func(c *collector.Config) { c.ManagedRecordTypes = []string{"A", "AAAA", "CNAME", "SRV"} }
	twoPorts := func(s *corev1.Service) *corev1.Service {
		s.Spec.Ports = []corev1.ServicePort{{Name: "http", Port: 80}, {Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}}
		return s
	}
	srvEp := func(host, proto string, ttl int64, port int32) events.Endpoint {
		return events.NewEndpoint(fmt.Sprintf("_np._%s.%s", proto, host), "SRV", ttl, fmt.Sprintf("0 50 %d %s", port, host))
	}
	runDepRules(t, []depCase{
		{name: "SRV not managed by default", nodes: nodes, svc: nodePort("np", collectortest.Ann("hostname", webHost)),
			want: eps(collectortest.EP(webHost, "A", "198.51.100.1"))},
		{name: "one SRV per node port", nodes: nodes, cfg: srv, svc: twoPorts(nodePort("np", collectortest.Ann("hostname", webHost))),
			want: func(s *corev1.Service) []events.Endpoint {
				return []events.Endpoint{collectortest.EP(webHost, "A", "198.51.100.1"),
					srvEp(webHost, "tcp", 0, s.Spec.Ports[0].NodePort), srvEp(webHost, "udp", 0, s.Spec.Ports[1].NodePort)}
			}},
		{name: "SRV per name, with ttl, managed types case-insensitive", nodes: nodes,
			cfg: func(c *collector.Config) { c.ManagedRecordTypes = []string{"a", "srv"} },
			svc: nodePort("np", collectortest.Ann("hostname", "A.example.org,b.example.org", "ttl", "60")),
			want: func(s *corev1.Service) []events.Endpoint {
				p := s.Spec.Ports[0].NodePort
				return []events.Endpoint{events.NewEndpoint("a.example.org", "A", 60, "198.51.100.1"), srvEp("a.example.org", "tcp", 60, p),
					events.NewEndpoint("b.example.org", "A", 60, "198.51.100.1"), srvEp("b.example.org", "tcp", 60, p)}
			}},
		{name: "SRV even without nodes", cfg: srv, svc: nodePort("np", collectortest.Ann("hostname", webHost)),
			want: func(s *corev1.Service) []events.Endpoint {
				return []events.Endpoint{srvEp(webHost, "tcp", 0, s.Spec.Ports[0].NodePort)}
			}},
		{name: "no SRV with target annotation", nodes: nodes, cfg: srv, svc: nodePort("np", collectortest.Ann("hostname", webHost, "target", "192.0.2.9")),
			want: eps(collectortest.EP(webHost, "A", "192.0.2.9"))},
	})
}
