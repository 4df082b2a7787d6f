package unstructured_test

import (
	"testing"

	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

type ucase struct {
	name      string
	resources []resource
	cfg       func(*collector.Config)
	objects   []object
}

func runCases(t *testing.T, cases []ucase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := collectortest.NewNamespace(t)
			for _, o := range tc.objects {
				create(t, ns, o)
			}
			cfg := config(ns, tc.resources...)
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			collectortest.StartCollector(t, cfg)
			for _, o := range tc.objects {
				expect(t, subject(ns, ns, o.res, o.name), o.want)
			}
		})
	}
}

var ann = collectortest.Ann

// withTeam is annotations a plus the bare "team" annotation ExternalDNS'
// filter cases select on (Ann would prefix it).
func withTeam(team string, a map[string]string) map[string]string {
	a["team"] = team
	return a
}

func labelFilter(s string) func(*collector.Config) {
	return func(c *collector.Config) { c.LabelFilter = s }
}

func annotationFilter(s string) func(*collector.Config) {
	return func(c *collector.Config) { c.AnnotationFilter = s }
}

// ExternalDNS v0.23's TestUnstructured_DifferentScenarios, case by case
// (source/unstructured_test.go): annotations, filters, controller.
func TestUnstructuredExternalDNSCases(t *testing.T) {
	vmi := func(name string, a, l map[string]string, want ...string) object {
		o := object{res: vmis, kind: "VirtualMachineInstance", name: name, annotations: a, labels: l}
		if len(want) > 0 {
			o.want = list(ep(want[0], "A", want[1]))
		}
		return o
	}
	runCases(t, []ucase{
		{name: "read from annotations with IPv6 target", resources: []resource{vmis},
			objects: []object{{res: vmis, kind: "VirtualMachineInstance", name: "my-vm",
				annotations: ann("hostname", "my-vm.example.com", "target", "::1234:5678"),
				want:        list(ep("my-vm.example.com", "AAAA", "::1234:5678"))}}},
		{name: "rancher node with ttl", resources: []resource{cattleNodes},
			objects: []object{{res: cattleNodes, kind: "Node", name: "my-node-1",
				labels:      map[string]string{"cattle.io/creator": "norman", "node-role.kubernetes.io/controlplane": "true"},
				annotations: ann("hostname", "my-node-1.nodes.example.com", "target", "203.0.113.10", "ttl", "300"),
				fields:      map[string]any{"spec": map[string]any{"clusterName": "c-abcde", "hostname": "my-node-1"}},
				want:        list(ttl(ep("my-node-1.nodes.example.com", "A", "203.0.113.10"), 300))}}},
		{name: "with controller annotations match", resources: []resource{replGroups},
			objects: []object{{res: replGroups, kind: "ReplicationGroup", name: "cache",
				annotations: ann("hostname", "my-vm.redis.tld", "target", "1.1.1.0", "controller", "dns-controller"),
				want:        list(ep("my-vm.redis.tld", "A", "1.1.1.0"))}}},
		{name: "with controller annotations do not match", resources: []resource{replGroups},
			objects: []object{{res: replGroups, kind: "ReplicationGroup", name: "my-vm",
				annotations: ann("hostname", "my-vm.redis.tld", "target", "10.10.10.0", "controller", "custom-controller")}}},
		{name: "labelSelector matches", resources: []resource{vmis}, cfg: labelFilter("env=prod"),
			objects: []object{
				vmi("prod-vm", ann("hostname", "prod-vm.example.com", "target", "10.0.0.1"), map[string]string{"env": "prod"}, "prod-vm.example.com", "10.0.0.1"),
				vmi("dev-vm", ann("hostname", "dev-vm.example.com", "target", "10.0.0.2"), map[string]string{"env": "dev"}),
			}},
		{name: "labelSelector no match", resources: []resource{vmis}, cfg: labelFilter("env=staging"),
			objects: []object{vmi("prod-vm", ann("hostname", "prod-vm.example.com", "target", "10.0.0.1"), map[string]string{"env": "prod"})}},
		{name: "annotationFilter matches", resources: []resource{vmis}, cfg: annotationFilter("team=platform"),
			objects: []object{
				vmi("platform-vm", withTeam("platform", ann("hostname", "platform-vm.example.com", "target", "10.0.0.1")), nil, "platform-vm.example.com", "10.0.0.1"),
				vmi("backend-vm", withTeam("backend", ann("hostname", "backend-vm.example.com", "target", "10.0.0.2")), nil),
			}},
		{name: "annotationFilter no match", resources: []resource{vmis}, cfg: annotationFilter("team=security"),
			objects: []object{vmi("platform-vm", withTeam("platform", ann("hostname", "platform-vm.example.com", "target", "10.0.0.1")), nil)}},
		{name: "labelSelector and annotationFilter combined", resources: []resource{vmis},
			cfg: func(c *collector.Config) { c.LabelFilter, c.AnnotationFilter = "env=prod", "team=platform" },
			objects: []object{
				vmi("prod-platform-vm", withTeam("platform", ann("hostname", "prod-platform-vm.example.com", "target", "10.0.0.1")),
					map[string]string{"env": "prod"}, "prod-platform-vm.example.com", "10.0.0.1"),
				vmi("prod-backend-vm", withTeam("backend", ann("hostname", "prod-backend-vm.example.com", "target", "10.0.0.2")), map[string]string{"env": "prod"}),
				vmi("dev-platform-vm", withTeam("platform", ann("hostname", "dev-platform-vm.example.com", "target", "10.0.0.3")), map[string]string{"env": "dev"}),
			}},
		// ExternalDNS' case writes the bare cloudflare- prefix as the key;
		// a real provider-specific key says the same.
		{name: "provider-specific annotation is not supported and is ignored", resources: []resource{machines},
			objects: []object{{res: machines, kind: "Machine", name: "control-plane",
				labels: map[string]string{"cluster.x-k8s.io/cluster-name": "test-cluster", "cluster.x-k8s.io/control-plane": ""},
				annotations: ann("hostname", "control-plane.example.com", "target", "10.0.0.1", "cloudflare-proxied", "true",
					"aws-weight", "10", "set-identifier", "eu"),
				fields: map[string]any{"spec": map[string]any{"clusterName": "test-cluster",
					"bootstrap": map[string]any{"dataSecretName": "control-plane-bootstrap"}, "version": "v1.26.0"}},
				want: list(ep("control-plane.example.com", "A", "10.0.0.1"))}}},
	})
}

func templates(fqdn, target, fqdnTarget string, combine bool) func(*collector.Config) {
	return func(c *collector.Config) {
		c.FQDNTemplate, c.TargetTemplate, c.FQDNTargetTemplate = fqdn, target, fqdnTarget
		c.CombineFQDNAnnotation = combine
	}
}

func interfaces(pairs ...string) map[string]any {
	var ifs []any
	for i := 0; i+1 < len(pairs); i += 2 {
		m := map[string]any{"ipAddress": pairs[i+1]}
		if pairs[i] != "" {
			m["name"] = pairs[i]
		}
		ifs = append(ifs, m)
	}
	return map[string]any{"interfaces": ifs}
}

// ExternalDNS v0.23's TestUnstructuredFqdnTemplatingExamples
// (source/unstructured_fqdn_test.go): names and targets from templates
// over the whole object, its status above all. Each case runs in a
// namespace of its own, so names made of {{.Namespace}} carry it.
func TestUnstructuredTemplateExternalDNSCases(t *testing.T) {
	headless := map[string]string{"endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
		"kubernetes.io/service-name": "test-headless", "service.kubernetes.io/headless": ""}
	// ExternalDNS' slice also has 2001:db8::1 in its first endpoint, which
	// a real API server refuses in an IPv4 slice: left out.
	sliceFields := map[string]any{"addressType": "IPv4", "endpoints": []any{
		map[string]any{"addresses": []any{"10.244.1.2"}, "conditions": map[string]any{"ready": true},
			"nodeName": "worker1", "targetRef": map[string]any{"kind": "Pod", "name": "app-abc12", "namespace": "default"}},
		map[string]any{"addresses": []any{"10.244.2.3", "10.244.2.4"}, "conditions": map[string]any{"ready": true},
			"nodeName": "worker2", "targetRef": map[string]any{"kind": "Pod", "name": "app-def34", "namespace": "default"}},
	}, "ports": []any{map[string]any{"name": "http", "port": int64(80), "protocol": "TCP"}}}
	const perPod = `
{{if and (eq .Kind "EndpointSlice") (hasKey .Labels "service.kubernetes.io/headless")}}
{{range $ep := .Object.endpoints}}{{if $ep.conditions.ready}}{{range $ep.addresses}}{{$ep.targetRef.name}}.pod.com:{{.}},{{end}}{{end}}{{end}}{{end}}`
	runCases(t, []ucase{
		{name: "ConfigMap with comma-separated hostnames", resources: []resource{configMaps},
			cfg: templates(`{{index .Object.data "hostnames"}}`, `{{index .Object.data "target"}}`, "", false),
			objects: []object{{res: configMaps, kind: "ConfigMap", name: "multi-dns", annotations: ann("controller", "dns-controller"),
				fields: map[string]any{"data": map[string]any{"hostnames": "entry1.internal.tld,entry2.example.tld", "target": "10.10.10.10"}},
				want:   list(ep("entry1.internal.tld", "A", "10.10.10.10"), ep("entry2.example.tld", "A", "10.10.10.10"))}}},
		{name: "with IP address", resources: []resource{vmis},
			cfg: templates(`{{.Name}}.{{index .Status.interfaces 0 "name"}}.vmi.com`, `{{index .Status.interfaces 0 "ipAddress"}}`, "", false),
			objects: []object{{res: vmis, kind: "VirtualMachineInstance", name: "my-vm", status: interfaces("main", "10.244.1.50"),
				want: list(ep("my-vm.main.vmi.com", "A", "10.244.1.50"))}}},
		{name: "Crossplane RDSInstance with endpoint", resources: []resource{rdsInstances},
			cfg: templates("{{.Name}}.db.example.com", "{{.Status.atProvider.endpoint.address}}", "", false),
			objects: []object{{res: rdsInstances, kind: "RDSInstance", name: "prod-postgres",
				status: map[string]any{"atProvider": map[string]any{"endpoint": map[string]any{"address": "prod-postgres.abc123.us-east-1.rds"}}},
				want:   list(ep("prod-postgres.db.example.com", "CNAME", "prod-postgres.abc123.us-east-1.rds"))}}},
		{name: "multiple VirtualMachineInstances", resources: []resource{vmis},
			cfg: templates("{{.Name}}.vmi.example.com", `{{index .Status.interfaces 0 "ipAddress"}}`, "", false),
			objects: []object{
				{res: vmis, kind: "VirtualMachineInstance", name: "vm-one", status: interfaces("", "10.244.1.10"),
					want: list(ep("vm-one.vmi.example.com", "A", "10.244.1.10"))},
				{res: vmis, kind: "VirtualMachineInstance", name: "vm-two", status: interfaces("", "10.244.1.20"),
					want: list(ep("vm-two.vmi.example.com", "A", "10.244.1.20"))},
			}},
		{name: "multiple hosts from template", resources: []resource{proxies},
			cfg: templates("{{.Name}}.mesh.com,{{.Name}}.internal.com", "{{index .Spec.hosts 0}}", "", false),
			objects: []object{{res: proxies, kind: "ProxyService", name: "reviews",
				fields: map[string]any{"spec": map[string]any{"hosts": []any{"promo.svc.local"}}},
				want:   list(ep("reviews.internal.com", "CNAME", "promo.svc.local"), ep("reviews.mesh.com", "CNAME", "promo.svc.local"))}}},
		{name: "with labels", resources: []resource{apps},
			cfg: templates(`{{index .Labels "app.kubernetes.io/instance"}}.apps.com`, "{{.Status.loadBalancer}}", "", false),
			objects: []object{{res: apps, kind: "Application", name: "guestbook", labels: map[string]string{"app.kubernetes.io/instance": "guestbook-prod"},
				status: map[string]any{"loadBalancer": "lb.example.com"},
				want:   list(ep("guestbook-prod.apps.com", "CNAME", "lb.example.com"))}}},
		{name: "with ttl annotation set", resources: []resource{apps},
			cfg: templates(`{{index .Labels "app.kubernetes.io/instance"}}.apps.com`, "{{.Status.loadBalancer}}", "", false),
			objects: []object{{res: apps, kind: "Application", name: "guestbook", labels: map[string]string{"app.kubernetes.io/instance": "guestbook-prod"},
				annotations: ann("ttl", "300"), status: map[string]any{"loadBalancer": "lb.example.com"},
				want: list(ttl(ep("guestbook-prod.apps.com", "CNAME", "lb.example.com"), 300))}}},
		{name: "two different resource types - VirtualMachineInstance and RDSInstance", resources: []resource{vmis, rdsInstances},
			cfg: templates("{{.Name}}.example.com", `
{{if .Status.interfaces}}{{index .Status.interfaces 0 "ipAddress"}}{{else}}{{.Status.atProvider.endpoint.address}}{{end}}`, "", false),
			objects: []object{
				{res: vmis, kind: "VirtualMachineInstance", name: "my-vm", status: interfaces("", "10.244.1.100"),
					want: list(ep("my-vm.example.com", "A", "10.244.1.100"))},
				{res: rdsInstances, kind: "RDSInstance", name: "my-db",
					status: map[string]any{"atProvider": map[string]any{"endpoint": map[string]any{"address": "my-db.abc123.us-west-2.rds"}}},
					want:   list(ep("my-db.example.com", "CNAME", "my-db.abc123.us-west-2.rds"))},
			}},
		{name: "two different resource types with same template", resources: []resource{vmis, tgbs},
			cfg: templates("{{.Name}}.{{.Kind}}.example.com", "{{.Status.target}}", "", false),
			objects: []object{
				{res: vmis, kind: "VirtualMachineInstance", name: "web-server", status: map[string]any{"target": "192.168.1.10"},
					want: list(ep("web-server.VirtualMachineInstance.example.com", "A", "192.168.1.10"))},
				{res: tgbs, kind: "TargetGroupBinding", name: "api-tgb", status: map[string]any{"target": "lb.api.example.com"},
					want: list(ep("api-tgb.TargetGroupBinding.example.com", "CNAME", "lb.api.example.com"))},
			}},
		{name: "combined annotations and template", resources: []resource{vmis},
			cfg: templates("{{.Name}}.template.example.com", `{{index .Status.interfaces 0 "ipAddress"}}`, "", true),
			objects: []object{{res: vmis, kind: "VirtualMachineInstance", name: "my-vm",
				annotations: ann("hostname", "my-vm.annotation.example.com", "target", "192.168.1.100"), status: interfaces("", "10.244.1.50"),
				want: list(ep("my-vm.annotation.example.com", "A", "192.168.1.100"), ep("my-vm.template.example.com", "A", "10.244.1.50"))}}},
		{name: "annotations win without combine", resources: []resource{vmis},
			cfg: templates("{{.Name}}.template.example.com", `{{index .Status.interfaces 0 "ipAddress"}}`, "", false),
			objects: []object{{res: vmis, kind: "VirtualMachineInstance", name: "my-vm",
				annotations: ann("hostname", "my-vm.annotation.example.com", "target", "192.168.1.100"), status: interfaces("", "10.244.1.50"),
				want: list(ep("my-vm.annotation.example.com", "A", "192.168.1.100"))}}},
		{name: "EndpointSlice for headless service with per-pod DNS", resources: []resource{epSlices},
			cfg: templates("", "", perPod, false),
			objects: []object{{res: epSlices, kind: "EndpointSlice", name: "test-headless-abc12", labels: headless, fields: sliceFields,
				want: list(ep("app-abc12.pod.com", "A", "10.244.1.2"), ep("app-def34.pod.com", "A", "10.244.2.3", "10.244.2.4"))}}},
		{name: "EndpointSlice for headless service with single FQDN per EndpointSlice", resources: []resource{epSlices},
			cfg: templates("", "", `
{{if and (eq .Kind "EndpointSlice") (hasKey .Labels "service.kubernetes.io/headless")}}
{{$svcName := index .Labels "kubernetes.io/service-name"}}{{range $ep := .Object.endpoints}}
{{if $ep.conditions.ready}}{{range $ep.addresses}}{{$svcName}}.example.com:{{.}},{{end}}{{end}}{{end}}{{end}}`, false),
			objects: []object{{res: epSlices, kind: "EndpointSlice", name: "test-headless-abc12", fields: sliceFields,
				labels: map[string]string{"kubernetes.io/service-name": "my-headless", "service.kubernetes.io/headless": ""},
				want:   list(ep("my-headless.example.com", "A", "10.244.1.2", "10.244.2.3", "10.244.2.4"))}}},
		{name: "fqdnTargetTemplate returns no values when condition not met", resources: []resource{epSlices},
			cfg: templates("", "", perPod, false),
			objects: []object{{res: epSlices, kind: "EndpointSlice", name: "regular-service-abc12",
				labels: map[string]string{"kubernetes.io/service-name": "regular-service"}, fields: sliceFields}}},
		{name: "both fqdnTargetTemplate and fqdnTemplate set - endpoints from both are combined", resources: []resource{vmis},
			cfg: templates("{{.Name}}.vmi.example.com", `{{index .Status.interfaces 0 "ipAddress"}}`,
				`{{range $iface := .Status.interfaces}}{{$.Name}}-{{index $iface "name"}}.ifaces.example.com:{{index $iface "ipAddress"}},{{end}}`, true),
			objects: []object{{res: vmis, kind: "VirtualMachineInstance", name: "my-vm", status: interfaces("eth0", "10.244.1.50", "eth1", "192.168.1.50"),
				want: list(ep("my-vm-eth0.ifaces.example.com", "A", "10.244.1.50"), ep("my-vm-eth1.ifaces.example.com", "A", "192.168.1.50"),
					ep("my-vm.vmi.example.com", "A", "10.244.1.50"))}}},
		{name: "fqdnTargetTemplate pair without colon separator is skipped", resources: []resource{vmis},
			cfg:     templates("", "", "nocolonseparator", false),
			objects: []object{{res: vmis, kind: "VirtualMachineInstance", name: "my-vm"}}},
		{name: "fqdnTargetTemplate pair with empty host is skipped", resources: []resource{vmis},
			cfg:     templates("", "", ":10.0.0.1", false),
			objects: []object{{res: vmis, kind: "VirtualMachineInstance", name: "my-vm"}}},
		{name: "fqdnTargetTemplate pair with empty target is skipped", resources: []resource{vmis},
			cfg:     templates("", "", "host.example.com:", false),
			objects: []object{{res: vmis, kind: "VirtualMachineInstance", name: "my-vm"}}},
		{name: "title-cased Spec field resolves against a lowercase JSON key", resources: []resource{proxies},
			cfg: templates(`{{index .Spec.Hostnames 0}}`, `{{index .Spec.hosts 0}}`, "", false),
			objects: []object{{res: proxies, kind: "ProxyService", name: "reviews",
				fields: map[string]any{"spec": map[string]any{"hostnames": []any{"reviews.bookinfo.example.com"}, "hosts": []any{"promo.svc.local"}}},
				want:   list(ep("reviews.bookinfo.example.com", "CNAME", "promo.svc.local"))}}},
		{name: "title-cased alias does not clobber a key already present under that name", resources: []resource{proxies},
			cfg: templates(`{{index .Spec.Hostnames 0}}`, `{{index .Spec.hosts 0}}`, "", false),
			objects: []object{{res: proxies, kind: "ProxyService", name: "reviews",
				fields: map[string]any{"spec": map[string]any{"hostnames": "ignored.example.com", "Hostnames": []any{"real.example.com"}, "hosts": []any{"promo.svc.local"}}},
				want:   list(ep("real.example.com", "CNAME", "promo.svc.local"))}}},
		{name: "title-cased alias resolves the top-level Spec key; nested JSON keys stay literal", resources: []resource{proxies},
			cfg: templates(`{{.Spec.Endpoint.hostname}}`, `{{index .Spec.hosts 0}}`, "", false),
			objects: []object{{res: proxies, kind: "ProxyService", name: "reviews",
				fields: map[string]any{"spec": map[string]any{"endpoint": map[string]any{"hostname": "reviews.nested.example.com"}, "hosts": []any{"promo.svc.local"}}},
				want:   list(ep("reviews.nested.example.com", "CNAME", "promo.svc.local"))}}},
	})
}
