package node_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

// Nodes are cluster-scoped and shared by the whole package: every node
// test labels its Nodes with collectortest.CaseLabel (collectortest.CreateNode)
// and runs its collector with --label-filter on it.

func nodeSubject(clusterName, name string) string {
	return events.SourceSubject(clusterName, "node", "", name)
}

// nodeConfig runs the node source on the Nodes of case ns, with the
// template most cases use.
func nodeConfig(ns string) collector.Config {
	return collector.Config{ClusterName: ns, Sources: []string{"node"}, LabelFilter: collectortest.CaseLabel + "=" + ns,
		FQDNTemplate: "{{.Name}}.nodes.example.org"}
}

type nodeCase struct {
	name          string
	cfg           func(*collector.Config)
	annotations   map[string]string
	unschedulable bool
	addrs         []corev1.NodeAddress
	// want gets the Node's name; nil want: nothing is published.
	want func(node string) []events.Endpoint
}

// runNodeRules creates the case's Node, then starts a collector.
func runNodeRules(t *testing.T, cases []nodeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := collectortest.NewNamespace(t)
			name := ns + "-n"
			collectortest.CreateNode(t, ns, &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: tc.annotations},
				Spec:       corev1.NodeSpec{Unschedulable: tc.unschedulable},
			}, tc.addrs...)
			collectortest.StartAndExpect(t, nodeConfig(ns), tc.cfg, nodeSubject(ns, name), tc.want, name)
		})
	}
}

func tmplName(node string) string { return node + ".nodes.example.org" }

// Targets: ExternalIP, else InternalIP; IPv6 InternalIP as AAAA; the
// target annotation replaces them.
func TestNodeRuleTargets(t *testing.T) {
	runNodeRules(t, []nodeCase{
		{name: "external preferred over internal", addrs: []corev1.NodeAddress{collectortest.InternalIP("10.0.0.1"), collectortest.ExternalIP("203.0.113.1")},
			want: func(n string) []events.Endpoint {
				return []events.Endpoint{collectortest.EP(tmplName(n), "A", "203.0.113.1")}
			}},
		{name: "internal when no external", addrs: []corev1.NodeAddress{collectortest.InternalIP("10.0.0.1"), collectortest.InternalIP("10.0.0.2")},
			want: func(n string) []events.Endpoint {
				return []events.Endpoint{collectortest.EP(tmplName(n), "A", "10.0.0.1", "10.0.0.2")}
			}},
		{name: "ipv6 internal is AAAA", addrs: []corev1.NodeAddress{collectortest.InternalIP("10.0.0.1"), collectortest.InternalIP("fd00::1")},
			want: func(n string) []events.Endpoint {
				return []events.Endpoint{collectortest.EP(tmplName(n), "A", "10.0.0.1"), collectortest.EP(tmplName(n), "AAAA", "fd00::1")}
			}},
		{name: "--expose-internal-ipv6: external plus ipv6 internal", cfg: func(c *collector.Config) { c.Node.ExposeInternalIPv6 = true },
			addrs: []corev1.NodeAddress{collectortest.InternalIP("10.0.0.1"), collectortest.ExternalIP("203.0.113.1"), collectortest.InternalIP("2001:db8::1")},
			want: func(n string) []events.Endpoint {
				return []events.Endpoint{collectortest.EP(tmplName(n), "A", "203.0.113.1"), collectortest.EP(tmplName(n), "AAAA", "2001:db8::1")}
			}},
		{name: "by default, with an external address, no ipv6 internal (ExternalDNS' default)",
			addrs: []corev1.NodeAddress{collectortest.ExternalIP("203.0.113.1"), collectortest.InternalIP("2001:db8::1")},
			want: func(n string) []events.Endpoint {
				return []events.Endpoint{collectortest.EP(tmplName(n), "A", "203.0.113.1")}
			}},
		{name: "hostname addresses ignored", addrs: []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "host1"}, collectortest.InternalIP("10.0.0.1")},
			want: func(n string) []events.Endpoint {
				return []events.Endpoint{collectortest.EP(tmplName(n), "A", "10.0.0.1")}
			}},
		{name: "target annotation replaces addresses", annotations: collectortest.Ann("target", "198.51.100.7,edge.example.net."),
			addrs: []corev1.NodeAddress{collectortest.ExternalIP("203.0.113.1")},
			want: func(n string) []events.Endpoint {
				return []events.Endpoint{collectortest.EP(tmplName(n), "A", "198.51.100.7"), collectortest.EP(tmplName(n), "CNAME", "edge.example.net")}
			}},
		{name: "invalid target entry skipped", annotations: collectortest.Ann("target", "300.1.1.1,198.51.100.7"),
			addrs: []corev1.NodeAddress{collectortest.ExternalIP("203.0.113.1")},
			want: func(n string) []events.Endpoint {
				return []events.Endpoint{collectortest.EP(tmplName(n), "A", "198.51.100.7")}
			}},
		{name: "only invalid targets: addresses", annotations: collectortest.Ann("target", "not a target"),
			addrs: []corev1.NodeAddress{collectortest.ExternalIP("203.0.113.1")},
			want: func(n string) []events.Endpoint {
				return []events.Endpoint{collectortest.EP(tmplName(n), "A", "203.0.113.1")}
			}},
		{name: "no address", addrs: nil},
	})
}

// Names: the hostname annotation, --fqdn-template, else the Node's name.
func TestNodeRuleNames(t *testing.T) {
	addrs := []corev1.NodeAddress{collectortest.ExternalIP("203.0.113.1")}
	noTemplate := func(c *collector.Config) { c.FQDNTemplate = "" }
	runNodeRules(t, []nodeCase{
		{name: "template", addrs: addrs,
			want: func(n string) []events.Endpoint {
				return []events.Endpoint{collectortest.EP(tmplName(n), "A", "203.0.113.1")}
			}},
		{name: "template with several names and functions", addrs: addrs,
			cfg: func(c *collector.Config) {
				c.FQDNTemplate = "{{.Name}}.a.example.org, {{ toLower .Kind }}-{{.Name}}.b.example.org"
			},
			want: func(n string) []events.Endpoint {
				return []events.Endpoint{collectortest.EP(n+".a.example.org", "A", "203.0.113.1"), collectortest.EP("node-"+n+".b.example.org", "A", "203.0.113.1")}
			}},
		{name: "no template: the node name", addrs: addrs, cfg: noTemplate,
			want: func(n string) []events.Endpoint { return []events.Endpoint{collectortest.EP(n, "A", "203.0.113.1")} }},
		{name: "hostname annotation wins over template", addrs: addrs, annotations: collectortest.Ann("hostname", "x.example.org,y.example.org."),
			want: func(string) []events.Endpoint {
				return []events.Endpoint{collectortest.EP("x.example.org", "A", "203.0.113.1"), collectortest.EP("y.example.org", "A", "203.0.113.1")}
			}},
		{name: "hostname annotation without template", addrs: addrs, annotations: collectortest.Ann("hostname", "x.example.org"), cfg: noTemplate,
			want: func(string) []events.Endpoint {
				return []events.Endpoint{collectortest.EP("x.example.org", "A", "203.0.113.1")}
			}},
		{name: "--combine-fqdn-annotation", addrs: addrs, annotations: collectortest.Ann("hostname", "x.example.org"),
			cfg: func(c *collector.Config) { c.CombineFQDNAnnotation = true },
			want: func(n string) []events.Endpoint {
				return []events.Endpoint{collectortest.EP("x.example.org", "A", "203.0.113.1"), collectortest.EP(tmplName(n), "A", "203.0.113.1")}
			}},
		{name: "--ignore-hostname-annotation", addrs: addrs, annotations: collectortest.Ann("hostname", "x.example.org"),
			cfg: func(c *collector.Config) { c.IgnoreHostnameAnnotation = true },
			want: func(n string) []events.Endpoint {
				return []events.Endpoint{collectortest.EP(tmplName(n), "A", "203.0.113.1")}
			}},
		{name: "invalid hostname entry skipped", addrs: addrs, annotations: collectortest.Ann("hostname", "bad..example.org,ok.example.org"),
			want: func(string) []events.Endpoint {
				return []events.Endpoint{collectortest.EP("ok.example.org", "A", "203.0.113.1")}
			}},
		{name: "template failing: nothing", addrs: addrs, cfg: func(c *collector.Config) { c.FQDNTemplate = "{{.Spec.NoSuchField}}.example.org" }},
	})
}

// Which Nodes: unschedulable, controller, filters; ttl and set-identifier.
func TestNodeRuleSelectionAndAnnotations(t *testing.T) {
	addrs := []corev1.NodeAddress{collectortest.ExternalIP("203.0.113.1")}
	one := func(n string) []events.Endpoint {
		return []events.Endpoint{collectortest.EP(tmplName(n), "A", "203.0.113.1")}
	}
	runNodeRules(t, []nodeCase{
		{name: "unschedulable excluded", addrs: addrs, unschedulable: true},
		{name: "--exclude-unschedulable=false", addrs: addrs, unschedulable: true,
			cfg: func(c *collector.Config) { c.Node.IncludeUnschedulable = true }, want: one},
		{name: "controller dns-controller", addrs: addrs, annotations: collectortest.Ann("controller", "dns-controller"), want: one},
		{name: "controller other", addrs: addrs, annotations: collectortest.Ann("controller", "kops")},
		{name: "annotation filter matches", addrs: addrs, annotations: map[string]string{"team": "dns"},
			cfg: func(c *collector.Config) { c.AnnotationFilter = "team=dns" }, want: one},
		{name: "annotation filter does not match", addrs: addrs, annotations: map[string]string{"team": "web"},
			cfg: func(c *collector.Config) { c.AnnotationFilter = "team=dns" }},
		{name: "ttl", addrs: addrs, annotations: collectortest.Ann("ttl", "1m"),
			want: func(n string) []events.Endpoint {
				return []events.Endpoint{events.NewEndpoint(tmplName(n), "A", 60, "203.0.113.1")}
			}},
		{name: "invalid ttl: no ttl", addrs: addrs, annotations: collectortest.Ann("ttl", "abc"), want: one},
		{name: "set-identifier", addrs: addrs, annotations: map[string]string{collectortest.Stable + "set-identifier": "eu"},
			want: func(n string) []events.Endpoint {
				return []events.Endpoint{collectortest.WithSetID(collectortest.EP(tmplName(n), "A", "203.0.113.1"), "eu")}
			}},
	})
}

// A Node's bad input is reported as a Warning event on the Node, counted
// and logged; its valid endpoints are published.
func TestNodeInvalidInputReported(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	name := ns + "-bad"
	before := collectortest.InvalidInput(t, "node", "InvalidAnnotation")
	collectortest.CreateNode(t, ns, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
		Annotations: collectortest.Ann("ttl", "abc", "target", "192.0.2.300,192.0.2.9", "hostname", "ok.example.org,-bad.example.org")}},
		collectortest.ExternalIP("203.0.113.1"))
	collectortest.StartCollector(t, nodeConfig(ns))
	collectortest.WaitState(t, nodeSubject(ns, name), []events.Endpoint{collectortest.EP("ok.example.org", "A", "192.0.2.9")})
	collectortest.ExpectEvents(t, "default", "Node", name, `ttl "abc"`, `target "192.0.2.300"`, `-bad.example.org`)
	if got := collectortest.InvalidInput(t, "node", "InvalidAnnotation") - before; got < 3 {
		t.Errorf("invalid input metric grew by %v, want >= 3", got)
	}
}

// A Node that is cordoned gets its tombstone, its address change is
// republished, and a change the source does not read (conditions,
// foreign annotations) publishes nothing.
func TestNodeIncremental(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	name := ns + "-n"
	node := collectortest.CreateNode(t, ns, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, collectortest.ExternalIP("203.0.113.1"))
	collectortest.StartCollector(t, nodeConfig(ns))
	subj := nodeSubject(ns, name)
	collectortest.WaitState(t, subj, []events.Endpoint{collectortest.EP(tmplName(name), "A", "203.0.113.1")})

	skipped := collectortest.PublishSkipped(t, "node")
	// Not read by the source: a condition and a foreign annotation.
	node, err := collectortest.Cluster.Client.CoreV1().Nodes().Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}}
	if node, err = collectortest.Cluster.Client.CoreV1().Nodes().UpdateStatus(t.Context(), node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	node.Annotations = map[string]string{"example.com/heartbeat": "1"}
	if node, err = collectortest.Cluster.Client.CoreV1().Nodes().Update(t.Context(), node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	node = collectortest.SetNodeAddresses(t, node, collectortest.ExternalIP("203.0.113.2"))
	collectortest.WaitState(t, subj, []events.Endpoint{collectortest.EP(tmplName(name), "A", "203.0.113.2")})
	if n := collectortest.Count(t, subj); n != 2 {
		t.Errorf("%d messages, want 2 (first state, new address)", n)
	}
	// The ignored changes did not even make the collector recompute it.
	if got := collectortest.PublishSkipped(t, "node") - skipped; got != 0 {
		t.Errorf("Node recomputed %v times without change", got)
	}

	node.Spec.Unschedulable = true
	if _, err = collectortest.Cluster.Client.CoreV1().Nodes().Update(t.Context(), node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	collectortest.WaitState(t, subj, nil)
}
