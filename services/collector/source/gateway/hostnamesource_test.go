package gateway_test

import (
	"testing"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

// A route's gateway-hostname-source annotation, as ExternalDNS reads it:
// annotation-only takes the hostname annotation's names alone,
// defined-hosts-only spec.hostnames and the template's alone (and no
// listener hostname for a route naming nothing); any other value counts
// as none.
func TestGatewayRuleHostnameSource(t *testing.T) {
	plain := []gwDef{newGW("g", []string{gwIP}, gwWeb)}
	withHost := []gwDef{newGW("g", []string{gwIP}, gwLis("web", "HTTP", 80, lisHost("*.example.org")))}
	a := func(names ...string) []events.Endpoint {
		var out []events.Endpoint
		for _, n := range names {
			out = append(out, collectortest.EP(n, "A", gwIP))
		}
		return out
	}
	ann := func(source string) map[string]string {
		return map[string]string{collectortest.Alpha + "hostname": "x.example.org", collectortest.Stable + "gateway-hostname-source": source}
	}
	tmpl := func(c *collector.Config, _, _ string) { c.FQDNTemplate = "{{.Name}}.tmpl.example.org" }
	runGatewayRules(t, []gwCase{
		{name: "annotation-only", gateways: plain, route: gwRoute(gwHosts(gwHost), ann("annotation-only"), attach("g")), want: a("x.example.org")},
		{name: "annotation-only, any case", gateways: plain, route: gwRoute(gwHosts(gwHost), ann("Annotation-Only"), attach("g")), want: a("x.example.org")},
		{name: "defined-hosts-only", gateways: plain, route: gwRoute(gwHosts(gwHost), ann("defined-hosts-only"), attach("g")), want: a(gwHost)},
		{name: "defined-hosts-only: the template's names", cfg: tmpl, gateways: plain,
			route: gwRoute(nil, ann("defined-hosts-only"), attach("g")), want: a("r.tmpl.example.org")},
		{name: "defined-hosts-only: no listener hostname", gateways: withHost, route: gwRoute(nil, ann("defined-hosts-only"), attach("g"))},
		{name: "another value: every source", gateways: plain, route: gwRoute(gwHosts(gwHost), ann("both"), attach("g")),
			want: a(gwHost, "x.example.org")},
	})
}
