package node_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

// --fqdn-target-template: name:target pairs from the Node, in place of its
// name (or beside it with --combine-fqdn-annotation), before
// --fqdn-template's names (ExternalDNS v0.23's node_fqdn_test.go cases).
// These cases run without the package's default --fqdn-template.
func TestNodeRuleFQDNTargetTemplate(t *testing.T) {
	addrs := []corev1.NodeAddress{collectortest.ExternalIP("203.0.113.1")}
	pairs := func(tmpl string, combine bool) func(*collector.Config) {
		return func(c *collector.Config) {
			c.FQDNTemplate, c.FQDNTargetTemplate, c.CombineFQDNAnnotation = "", tmpl, combine
		}
	}
	one := func(name func(string) string, typ, target string) func(string) []events.Endpoint {
		return func(n string) []events.Endpoint { return []events.Endpoint{collectortest.EP(name(n), typ, target)} }
	}
	runNodeRules(t, []nodeCase{
		{name: "A record when no other endpoints", addrs: addrs, cfg: pairs("{{.Name}}.example.com:1.2.3.4", false),
			want: one(func(n string) string { return n + ".example.com" }, "A", "1.2.3.4")},
		{name: "CNAME for a hostname target", addrs: addrs, cfg: pairs("{{.Name}}.example.com:lb.example.com", false),
			want: one(func(n string) string { return n + ".example.com" }, "CNAME", "lb.example.com")},
		{name: "without combine, replaces the node-name endpoint", addrs: addrs, cfg: pairs("{{.Name}}.tmpl.example.com:lb.example.com", false),
			want: one(func(n string) string { return n + ".tmpl.example.com" }, "CNAME", "lb.example.com")},
		{name: "with combine, beside the node-name endpoint", addrs: addrs, cfg: pairs("{{.Name}}.tmpl.example.com:lb.example.com", true),
			want: func(n string) []events.Endpoint {
				return []events.Endpoint{collectortest.EP(n, "A", "203.0.113.1"), collectortest.EP(n+".tmpl.example.com", "CNAME", "lb.example.com")}
			}},
		{name: ".Kind", addrs: addrs, cfg: pairs("{{.Kind | toLower}}.{{.Name}}.example.com:1.2.3.4", false),
			want: one(func(n string) string { return "node." + n + ".example.com" }, "A", "1.2.3.4")},
		{name: ".APIVersion", addrs: addrs, cfg: pairs("{{.Name}}.{{.APIVersion}}.example.com:1.2.3.4", false),
			want: one(func(n string) string { return n + ".v1.example.com" }, "A", "1.2.3.4")},
		{name: "--target-template alone: the node-name endpoint", addrs: addrs,
			cfg:  func(c *collector.Config) { c.FQDNTemplate, c.TargetTemplate = "", "lb.example.com" },
			want: one(func(n string) string { return n }, "A", "203.0.113.1")},
		{name: "the Node's addresses, one pair each", addrs: []corev1.NodeAddress{collectortest.ExternalIP("203.0.113.1"), collectortest.InternalIP("10.0.0.1")},
			cfg:  pairs(`{{$n := .Name}}{{range .Status.Addresses}}{{if eq .Type "InternalIP"}}{{$n}}.internal.example.com:{{.Address}},{{end}}{{end}}`, false),
			want: one(func(n string) string { return n + ".internal.example.com" }, "A", "10.0.0.1")},
		{name: "hostname annotation wins without combine", addrs: addrs, annotations: collectortest.Ann("hostname", "x.example.org"),
			cfg:  pairs("{{.Name}}.tmpl.example.com:lb.example.com", false),
			want: one(func(string) string { return "x.example.org" }, "A", "203.0.113.1")},
		{name: "pairs win over --fqdn-template without combine", addrs: addrs,
			cfg: func(c *collector.Config) {
				pairs("{{.Name}}.pair.example.com:1.2.3.4", false)(c)
				c.FQDNTemplate = "{{.Name}}.nodes.example.org"
			},
			want: one(func(n string) string { return n + ".pair.example.com" }, "A", "1.2.3.4")},
	})
}
