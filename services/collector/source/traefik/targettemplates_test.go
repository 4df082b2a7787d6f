package traefik_test

import (
	"testing"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

// --target-template and --fqdn-target-template, as ExternalDNS v0.23's
// ApplyTemplates: the pairs, then the --fqdn-template names at
// --target-template's targets, each only while the object has no record
// of its own or with --combine-fqdn-annotation (traefik_proxy_fqdn_test.go
// cases, for the three kinds).
func TestTraefikTargetTemplates(t *testing.T) {
	templates := func(fqdn, target, pairs string, combine bool) func(*collector.Config) {
		return func(c *collector.Config) {
			c.FQDNTemplate, c.TargetTemplate, c.FQDNTargetTemplate, c.CombineFQDNAnnotation = fqdn, target, pairs, combine
		}
	}
	var cases []traefikCase
	for _, k := range []struct {
		kind kind
		rule string // a rule naming route.example.com; none for UDP
	}{
		{ingressRoute(groupNew), "Host(`route.example.com`)"},
		{ingressRouteTCP(groupNew), "HostSNI(`route.example.com`)"},
		{ingressRouteUDP(groupNew), ""},
	} {
		name := func(s string) string { return k.kind.kind + ": " + s }
		lower := map[string]string{"IngressRoute": "ingressroute", "IngressRouteTCP": "ingressroutetcp", "IngressRouteUDP": "ingressrouteudp"}[k.kind.kind]
		cases = append(cases,
			traefikCase{name: name("fqdn-template and target-template when nothing else names a host"), kind: k.kind, object: "my-app", ann: ann(),
				cfg:  templates("{{.Name}}.example.com", "lb.example.com", "", false),
				want: cnames("lb.example.com", "my-app.example.com")},
			traefikCase{name: name("fqdn-target-template when nothing else names a host"), kind: k.kind, object: "my-app", ann: ann(),
				cfg:  templates("", "", "{{.Name}}.example.com:1.2.3.4", false),
				want: []events.Endpoint{collectortest.EP("my-app.example.com", "A", "1.2.3.4")}},
			traefikCase{name: name("fqdn-template can reference .Kind"), kind: k.kind, object: "my-app", ann: ann(),
				cfg:  templates("{{.Kind | toLower}}.{{.Name}}.example.com", "lb.example.com", "", false),
				want: cnames("lb.example.com", lower+".my-app.example.com")},
			traefikCase{name: name("fqdn-target-template can reference .APIVersion"), kind: k.kind, object: "my-app", ann: ann(),
				cfg:  templates("", "", `{{.Name}}.{{replace "/" "." .APIVersion}}.example.com:1.2.3.4`, false),
				want: []events.Endpoint{collectortest.EP("my-app.traefik.io.v1alpha1.example.com", "A", "1.2.3.4")}},
			traefikCase{name: name("target-template replaces the target annotation for template names"), kind: k.kind, object: "my-app",
				ann: ann("target", "lb.example.com"), cfg: templates("{{.Name}}.example.com", "template-lb.example.com", "", false),
				want: cnames("template-lb.example.com", "my-app.example.com")},
		)
		if k.rule == "" {
			continue
		}
		cases = append(cases,
			traefikCase{name: name("with combine, the template's beside the rule's"), kind: k.kind, object: "my-app",
				ann: ann("target", "lb.example.com"), match: []string{k.rule},
				cfg:  templates("{{.Name}}.example.com", "template-lb.example.com", "", true),
				want: append(cnames("template-lb.example.com", "my-app.example.com"), cnames("lb.example.com", "route.example.com")...)},
			traefikCase{name: name("without combine, templates ignored when the rules give a record"), kind: k.kind, object: "my-app",
				ann: ann("target", "lb.example.com"), match: []string{k.rule},
				cfg:  templates("{{.Name}}.example.com", "template-lb.example.com", "{{.Name}}.pair.example.com:1.2.3.4", false),
				want: cnames("lb.example.com", "route.example.com")},
			traefikCase{name: name("pairs win over the fqdn-template without combine"), kind: k.kind, object: "my-app", ann: ann(),
				cfg:  templates("{{.Name}}.example.com", "template-lb.example.com", "{{.Name}}.pair.example.com:1.2.3.4", false),
				want: []events.Endpoint{collectortest.EP("my-app.pair.example.com", "A", "1.2.3.4")}},
		)
	}
	runTraefikCases(t, cases)
}
