package gateway_test

import (
	"testing"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

// One table per rule of ExternalDNS' Gateway sources, against the real
// API server with the Gateway API CRDs of the standard channel.

const (
	gwIP   = "192.0.2.10"
	gwIP2  = "192.0.2.20"
	gwHost = "app.example.org"
)

var gwWeb = gwLis("web", "HTTP", 80)

func gwHosts(h ...string) []string { return h }

// Matching Gateways: status.parents entries that name a Gateway (group,
// kind) the route's spec.parentRefs names too, that exist and accepted the
// route.
func TestGatewayRuleParents(t *testing.T) {
	want := []events.Endpoint{collectortest.EP(gwHost, "A", gwIP)}
	g := newGW("g", []string{gwIP}, gwWeb)
	runGatewayRules(t, []gwCase{
		{name: "accepted parent", gateways: []gwDef{g}, route: gwRoute(gwHosts(gwHost), nil, attach("g")), want: want},
		{name: "explicit group and kind", gateways: []gwDef{g},
			route: gwRoute(gwHosts(gwHost), nil, attach("g", refKind("gateway.networking.k8s.io", "Gateway"))), want: want},
		{name: "other kind ignored", gateways: []gwDef{g},
			route: gwRoute(gwHosts(gwHost), nil, attach("g", refKind("gateway.networking.k8s.io", "ListenerSet")))},
		{name: "other group ignored", gateways: []gwDef{g},
			route: gwRoute(gwHosts(gwHost), nil, attach("g", refKind("example.org", "Gateway")))},
		{name: "not accepted", gateways: []gwDef{g}, route: gwRoute(gwHosts(gwHost), nil, attach("g", notAccepted))},
		{name: "gateway does not exist", gateways: []gwDef{g}, route: gwRoute(gwHosts(gwHost), nil, attach("missing"))},
		{name: "parent in another namespace", gateways: []gwDef{newGW("g", []string{gwIP2}, gwLis("web", "HTTP", 80, gwAll)).inOther()},
			route: gwRoute(gwHosts(gwHost), nil, attach("g", inOtherNS)), want: []events.Endpoint{collectortest.EP(gwHost, "A", gwIP2)}},
		{name: "namespace defaults to the route's", gateways: []gwDef{g, newGW("g", []string{gwIP2}, gwLis("web", "HTTP", 80, gwAll)).inOther()},
			route: gwRoute(gwHosts(gwHost), nil, attach("g")), want: want},
		{name: "two parents: targets combined and deduplicated",
			gateways: []gwDef{g, newGW("h", []string{gwIP, gwIP2}, gwWeb)},
			route:    gwRoute(gwHosts(gwHost), nil, attach("g"), attach("h")), want: []events.Endpoint{collectortest.EP(gwHost, "A", gwIP, gwIP2)}},
		{name: "only the accepting parent counts",
			gateways: []gwDef{g, newGW("h", []string{gwIP2}, gwWeb)},
			route:    gwRoute(gwHosts(gwHost), nil, attach("g"), attach("h", notAccepted)), want: want},
		// ExternalDNS' "parentRefs mismatch": a status entry counts only
		// while spec.parentRefs names its Gateway.
		{name: "status names a Gateway the spec no longer does", gateways: []gwDef{g},
			route: gwRoute(gwHosts(gwHost), nil, attach("g", staleStatus))},
		{name: "of two parents in status, the one left in the spec counts",
			gateways: []gwDef{g, newGW("h", []string{gwIP2}, gwWeb)},
			route:    gwRoute(gwHosts(gwHost), nil, attach("g"), attach("h", staleStatus)), want: want},
	})
}

// --gateway-namespace and --gateway-label-filter.
func TestGatewayRuleGatewayFilters(t *testing.T) {
	other := newGW("g", []string{gwIP}, gwLis("web", "HTTP", 80, gwAll)).inOther()
	want := []events.Endpoint{collectortest.EP(gwHost, "A", gwIP)}
	runGatewayRules(t, []gwCase{
		{name: "--gateway-namespace matches", cfg: func(c *collector.Config, _, ns2 string) { c.Gateway.Namespace = ns2 },
			gateways: []gwDef{other}, route: gwRoute(gwHosts(gwHost), nil, attach("g", inOtherNS)), want: want},
		{name: "--gateway-namespace excludes", cfg: func(c *collector.Config, ns, _ string) { c.Gateway.Namespace = ns },
			gateways: []gwDef{other}, route: gwRoute(gwHosts(gwHost), nil, attach("g", inOtherNS))},
		{name: "--gateway-label-filter matches", cfg: func(c *collector.Config, _, _ string) { c.Gateway.LabelFilter = "dns=yes" },
			gateways: []gwDef{newGW("g", []string{gwIP}, gwWeb).withLabels(map[string]string{"dns": "yes"})},
			route:    gwRoute(gwHosts(gwHost), nil, attach("g")), want: want},
		{name: "--gateway-label-filter excludes", cfg: func(c *collector.Config, _, _ string) { c.Gateway.LabelFilter = "dns=yes" },
			gateways: []gwDef{newGW("g", []string{gwIP}, gwWeb).withLabels(map[string]string{"dns": "no"})},
			route:    gwRoute(gwHosts(gwHost), nil, attach("g"))},
		{name: "--gateway-label-filter keeps only matching parents",
			cfg: func(c *collector.Config, _, _ string) { c.Gateway.LabelFilter = "dns=yes" },
			gateways: []gwDef{
				newGW("g", []string{gwIP}, gwWeb).withLabels(map[string]string{"dns": "yes"}),
				newGW("h", []string{gwIP2}, gwWeb),
			},
			route: gwRoute(gwHosts(gwHost), nil, attach("g"), attach("h")), want: want},
	})
}

// --gateway-name: only parents that are a Gateway of that name, in any
// namespace (ExternalDNS' GatewayName and GatewayNameNoneAccepted). The
// case's Gateways are in the second namespace: the barrier Gateway takes
// the name in the first.
func TestGatewayRuleGatewayName(t *testing.T) {
	named := func(c *collector.Config, _, _ string) { c.Gateway.Name = "gateway-name" }
	gws := []gwDef{
		newGW("gateway-name", []string{gwIP}, gwLis("web", "HTTP", 80, gwAll)).inOther(),
		newGW("not-gateway-name", []string{gwIP2}, gwLis("web", "HTTP", 80, gwAll)).inOther(),
	}
	runGatewayRules(t, []gwCase{
		{name: "of two parents, the named one", cfg: named, gateways: gws,
			route: gwRoute(gwHosts(gwHost), nil, attach("gateway-name", inOtherNS), attach("not-gateway-name", inOtherNS)),
			want:  []events.Endpoint{collectortest.EP(gwHost, "A", gwIP)}},
		{name: "without the flag, both", gateways: gws,
			route: gwRoute(gwHosts(gwHost), nil, attach("gateway-name", inOtherNS), attach("not-gateway-name", inOtherNS)),
			want:  []events.Endpoint{collectortest.EP(gwHost, "A", gwIP, gwIP2)}},
		{name: "only another Gateway: nothing", cfg: named, gateways: gws,
			route: gwRoute(gwHosts(gwHost), nil, attach("not-gateway-name", inOtherNS))},
		{name: "the named Gateway has not accepted the route", cfg: named, gateways: gws,
			route: gwRoute(gwHosts(gwHost), nil, attach("gateway-name", inOtherNS, notAccepted))},
	})
}

// Matching listeners: sectionName, port.
func TestGatewayRuleListeners(t *testing.T) {
	two := newGW("g", []string{gwIP}, gwLis("a", "HTTP", 80, lisHost("a.example.org")), gwLis("b", "HTTP", 8080, lisHost("b.example.org")))
	runGatewayRules(t, []gwCase{
		{name: "no sectionName: every listener", gateways: []gwDef{two}, route: gwRoute(nil, nil, attach("g")),
			want: []events.Endpoint{collectortest.EP("a.example.org", "A", gwIP), collectortest.EP("b.example.org", "A", gwIP)}},
		{name: "sectionName picks one listener", gateways: []gwDef{two}, route: gwRoute(nil, nil, attach("g", refSection("b"))),
			want: []events.Endpoint{collectortest.EP("b.example.org", "A", gwIP)}},
		{name: "sectionName matching nothing", gateways: []gwDef{two}, route: gwRoute(nil, nil, attach("g", refSection("c")))},
		{name: "port picks one listener", gateways: []gwDef{two}, route: gwRoute(nil, nil, attach("g", refPort(80))),
			want: []events.Endpoint{collectortest.EP("a.example.org", "A", gwIP)}},
		{name: "port matching nothing", gateways: []gwDef{two}, route: gwRoute(nil, nil, attach("g", refPort(443)))},
		{name: "sectionName and port must both match", gateways: []gwDef{two}, route: gwRoute(nil, nil, attach("g", refSection("a"), refPort(8080)))},
	})
}

// Listener protocols per route kind: HTTP and HTTPS for HTTPRoute and
// GRPCRoute, TLS for TLSRoute, TCP for TCPRoute, UDP for UDPRoute.
func TestGatewayRuleProtocols(t *testing.T) {
	g := newGW("g", []string{gwIP},
		gwLis("http", "HTTP", 80, lisHost("http.example.org")),
		gwLis("https", "HTTPS", 443, lisHost("https.example.org")),
		gwLis("tls", "TLS", 8443, lisHost("tls.example.org")),
		gwLis("tcp", "TCP", 9000))
	u := newGW("u", []string{gwIP2}, gwLis("udp", "UDP", 9001))
	gws := []gwDef{g, u}
	wild := map[string]string{collectortest.Alpha + "hostname": "*.example.org"}
	runGatewayRules(t, []gwCase{
		{name: "HTTPRoute", src: "gateway-httproute", gateways: gws, route: gwRoute(gwHosts("*.example.org"), nil, attach("g"), attach("u")),
			want: []events.Endpoint{collectortest.EP("http.example.org", "A", gwIP), collectortest.EP("https.example.org", "A", gwIP)}},
		{name: "GRPCRoute", src: "gateway-grpcroute", gateways: gws, route: gwRoute(gwHosts("*.example.org"), nil, attach("g"), attach("u")),
			want: []events.Endpoint{collectortest.EP("http.example.org", "A", gwIP), collectortest.EP("https.example.org", "A", gwIP)}},
		{name: "TLSRoute", src: "gateway-tlsroute", gateways: gws, route: gwRoute(gwHosts("*.example.org"), nil, attach("g"), attach("u")),
			want: []events.Endpoint{collectortest.EP("tls.example.org", "A", gwIP)}},
		{name: "TCPRoute", src: "gateway-tcproute", gateways: gws, route: gwRoute(nil, wild, attach("g"), attach("u")),
			want: []events.Endpoint{collectortest.EP("*.example.org", "A", gwIP)}},
		{name: "UDPRoute", src: "gateway-udproute", gateways: gws, route: gwRoute(nil, wild, attach("g"), attach("u")),
			want: []events.Endpoint{collectortest.EP("*.example.org", "A", gwIP2)}},
		{name: "HTTPRoute on a TCP listener only", gateways: []gwDef{newGW("t", []string{gwIP}, gwLis("tcp", "TCP", 9000))},
			route: gwRoute(gwHosts(gwHost), nil, attach("t"))},
	})
}

// allowedRoutes: namespaces From Same (default), All, Selector; kinds.
func TestGatewayRuleAllowedRoutes(t *testing.T) {
	want := []events.Endpoint{collectortest.EP(gwHost, "A", gwIP)}
	other := func(opts ...func(gmap)) gwDef {
		return newGW("g", []string{gwIP}, gwLis("web", "HTTP", 80, opts...)).inOther()
	}
	same := func(opts ...func(gmap)) gwDef { return newGW("g", []string{gwIP}, gwLis("web", "HTTP", 80, opts...)) }
	r := gwRoute(gwHosts(gwHost), nil, attach("g", inOtherNS))
	runGatewayRules(t, []gwCase{
		{name: "default Same, same namespace", gateways: []gwDef{same()}, route: gwRoute(gwHosts(gwHost), nil, attach("g")), want: want},
		{name: "default Same, other namespace", gateways: []gwDef{other()}, route: r},
		{name: "Same, other namespace", gateways: []gwDef{other(allowFrom("Same"))}, route: r},
		{name: "All", gateways: []gwDef{other(gwAll)}, route: r, want: want},
		{name: "Selector matches", nsLabels: map[string]string{"team": "a"},
			gateways: []gwDef{other(allowSelector("team", "a"))}, route: r, want: want},
		{name: "Selector does not match", nsLabels: map[string]string{"team": "b"},
			gateways: []gwDef{other(allowSelector("team", "a"))}, route: r},
		{name: "kinds include the route's", gateways: []gwDef{same(allowKinds("GRPCRoute", "HTTPRoute"))},
			route: gwRoute(gwHosts(gwHost), nil, attach("g")), want: want},
		{name: "kinds with explicit group", gateways: []gwDef{same(allowKinds("gateway.networking.k8s.io/HTTPRoute"))},
			route: gwRoute(gwHosts(gwHost), nil, attach("g")), want: want},
		{name: "kinds exclude the route's", gateways: []gwDef{same(allowKinds("GRPCRoute"))},
			route: gwRoute(gwHosts(gwHost), nil, attach("g"))},
		{name: "kind of another group", gateways: []gwDef{same(allowKinds("example.org/HTTPRoute"))},
			route: gwRoute(gwHosts(gwHost), nil, attach("g"))},
	})
}

// Domain names: route hostnames narrowed by listener hostnames (wildcards
// included); listener hostnames when the route has none; the hostname
// annotation and --fqdn-template.
func TestGatewayRuleHostnames(t *testing.T) {
	withHost := func(h string) []gwDef {
		return []gwDef{newGW("g", []string{gwIP}, gwLis("web", "HTTP", 80, lisHost(h)))}
	}
	plain := []gwDef{newGW("g", []string{gwIP}, gwWeb)}
	a := func(names ...string) []events.Endpoint {
		var out []events.Endpoint
		for _, n := range names {
			out = append(out, collectortest.EP(n, "A", gwIP))
		}
		return out
	}
	tmpl := func(combine bool) func(*collector.Config, string, string) {
		return func(c *collector.Config, _, _ string) {
			c.FQDNTemplate, c.CombineFQDNAnnotation = "{{.Name}}.{{toLower .Kind}}.tmpl.org", combine
		}
	}
	runGatewayRules(t, []gwCase{
		{name: "route hostnames, listener without hostname", gateways: plain,
			route: gwRoute(gwHosts("a.example.org", "b.example.org"), nil, attach("g")), want: a("a.example.org", "b.example.org")},
		{name: "listener hostname equal", gateways: withHost(gwHost), route: gwRoute(gwHosts(gwHost), nil, attach("g")), want: a(gwHost)},
		{name: "listener hostname different", gateways: withHost("other.example.org"), route: gwRoute(gwHosts(gwHost), nil, attach("g"))},
		{name: "listener wildcard narrows to the route's", gateways: withHost("*.example.org"),
			route: gwRoute(gwHosts(gwHost, "deep.app.example.org", "example.org", "app.example.net", "myexample.org"), nil, attach("g")),
			want:  a(gwHost, "deep.app.example.org")},
		{name: "route wildcard narrowed to the listener's", gateways: withHost(gwHost),
			route: gwRoute(gwHosts("*.example.org"), nil, attach("g")), want: a(gwHost)},
		{name: "route wildcard as long as the listener's name", gateways: withHost("a.example.org"),
			route: gwRoute(gwHosts("*.example.org"), nil, attach("g")), want: a("a.example.org")},
		{name: "both wildcards: the more specific", gateways: withHost("*.app.example.org"),
			route: gwRoute(gwHosts("*.example.org"), nil, attach("g")), want: a("*.app.example.org")},
		{name: "route without hostnames takes the listener's", gateways: withHost(gwHost),
			route: gwRoute(nil, nil, attach("g")), want: a(gwHost)},
		{name: "route and listener without hostnames", gateways: plain, route: gwRoute(nil, nil, attach("g"))},
		{name: "hostname annotation adds names", gateways: plain,
			route: gwRoute(gwHosts(gwHost), map[string]string{collectortest.Alpha + "hostname": "x.example.org., y.example.org"}, attach("g")),
			want:  a(gwHost, "x.example.org", "y.example.org")},
		{name: "hostname annotation narrowed too", gateways: withHost("*.example.org"),
			route: gwRoute(nil, map[string]string{collectortest.Stable + "hostname": "x.example.org,x.example.net"}, attach("g")), want: a("x.example.org")},
		{name: "hostname annotation replaces listener hostnames", gateways: withHost("*.example.org"),
			route: gwRoute(nil, map[string]string{collectortest.Alpha + "hostname": "x.example.org"}, attach("g")), want: a("x.example.org")},
		// ExternalDNS v0.24 (#6746): a name the route gives suppresses the
		// listener's, even where none of the route's names fits the listener.
		{name: "hostname annotation outside the listener's domain: nothing, not the listener's name", gateways: withHost("*.example.org"),
			route: gwRoute(nil, map[string]string{collectortest.Alpha + "hostname": "x.example.net"}, attach("g"))},
		{name: "template with a wildcard listener: the template's name, not the listener's", cfg: tmpl(false), gateways: withHost("*.tmpl.org"),
			route: gwRoute(nil, nil, attach("g")), want: a("r.httproute.tmpl.org")},
		{name: "--ignore-hostname-annotation", cfg: func(c *collector.Config, _, _ string) { c.IgnoreHostnameAnnotation = true },
			gateways: plain, route: gwRoute(gwHosts(gwHost), map[string]string{collectortest.Alpha + "hostname": "x.example.org"}, attach("g")), want: a(gwHost)},
		{name: "invalid annotation hostname skipped", gateways: plain,
			route: gwRoute(gwHosts(gwHost), map[string]string{collectortest.Alpha + "hostname": "bad..example.org,192.0.2.1"}, attach("g")), want: a(gwHost)},
		{name: "template when no name", cfg: tmpl(false), gateways: plain, route: gwRoute(nil, nil, attach("g")), want: a("r.httproute.tmpl.org")},
		{name: "template not used with names", cfg: tmpl(false), gateways: plain, route: gwRoute(gwHosts(gwHost), nil, attach("g")), want: a(gwHost)},
		{name: "--combine-fqdn-annotation", cfg: tmpl(true), gateways: plain, route: gwRoute(gwHosts(gwHost), nil, attach("g")),
			want: a(gwHost, "r.httproute.tmpl.org")},
		{name: "two listeners, two hostnames", gateways: []gwDef{newGW("g", []string{gwIP},
			gwLis("a", "HTTP", 80, lisHost("a.example.org")), gwLis("b", "HTTP", 81, lisHost("*.b.example.org")))},
			route: gwRoute(nil, nil, attach("g")), want: a("a.example.org", "*.b.example.org")},
	})
}

// Targets: the Gateway's target annotation, else its status.addresses;
// record types from the targets.
func TestGatewayRuleTargets(t *testing.T) {
	r := gwRoute(gwHosts(gwHost), nil, attach("g"))
	runGatewayRules(t, []gwCase{
		{name: "status addresses", gateways: []gwDef{newGW("g", []string{gwIP, gwIP2}, gwWeb)}, route: r,
			want: []events.Endpoint{collectortest.EP(gwHost, "A", gwIP, gwIP2)}},
		{name: "hostname address is CNAME", gateways: []gwDef{newGW("g", []string{"lb.cloud.example.net"}, gwWeb)}, route: r,
			want: []events.Endpoint{collectortest.EP(gwHost, "CNAME", "lb.cloud.example.net")}},
		{name: "IPv6 address is AAAA", gateways: []gwDef{newGW("g", []string{"2001:db8::1", gwIP}, gwWeb)}, route: r,
			want: []events.Endpoint{collectortest.EP(gwHost, "A", gwIP), collectortest.EP(gwHost, "AAAA", "2001:db8::1")}},
		{name: "Gateway target annotation overrides addresses",
			gateways: []gwDef{newGW("g", []string{gwIP}, gwWeb).withAnn(map[string]string{collectortest.Alpha + "target": "203.0.113.1,edge.example.net."})},
			route:    r, want: []events.Endpoint{collectortest.EP(gwHost, "A", "203.0.113.1"), collectortest.EP(gwHost, "CNAME", "edge.example.net")}},
		{name: "Gateway target annotation without addresses",
			gateways: []gwDef{newGW("g", nil, gwWeb).withAnn(map[string]string{collectortest.Stable + "target": "203.0.113.1"})},
			route:    r, want: []events.Endpoint{collectortest.EP(gwHost, "A", "203.0.113.1")}},
		{name: "invalid Gateway target skipped, valid kept",
			gateways: []gwDef{newGW("g", []string{gwIP}, gwWeb).withAnn(map[string]string{collectortest.Alpha + "target": "300.1.1.1,203.0.113.1"})},
			route:    r, want: []events.Endpoint{collectortest.EP(gwHost, "A", "203.0.113.1")}},
		{name: "route target annotation overrides the Gateway's",
			gateways: []gwDef{newGW("g", []string{gwIP}, gwWeb)},
			route:    gwRoute(gwHosts(gwHost), map[string]string{collectortest.Alpha + "target": "203.0.113.7"}, attach("g")),
			want:     []events.Endpoint{collectortest.EP(gwHost, "A", "203.0.113.7")}},
		{name: "per-parent targets", gateways: []gwDef{
			newGW("g", []string{gwIP}, gwLis("web", "HTTP", 80, lisHost("a.example.org"))),
			newGW("h", []string{gwIP2}, gwLis("web", "HTTP", 80, lisHost("b.example.org")))},
			route: gwRoute(nil, nil, attach("g"), attach("h")),
			want:  []events.Endpoint{collectortest.EP("a.example.org", "A", gwIP), collectortest.EP("b.example.org", "A", gwIP2)}},
		{name: "no address yet", gateways: []gwDef{newGW("g", nil, gwWeb)}, route: r},
	})
}

// ttl, set-identifier, controller and dualstack annotations; --label-filter
// and --annotation-filter over routes.
func TestGatewayRuleAnnotationsAndFilters(t *testing.T) {
	g := []gwDef{newGW("g", []string{gwIP}, gwWeb)}
	want := []events.Endpoint{collectortest.EP(gwHost, "A", gwIP)}
	withAnn := func(kv ...string) gwRouteDef {
		a := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			a[kv[i]] = kv[i+1]
		}
		return gwRoute(gwHosts(gwHost), a, attach("g"))
	}
	labeled := func(l map[string]string) gwRouteDef {
		r := gwRoute(gwHosts(gwHost), nil, attach("g"))
		r.labels = l
		return r
	}
	runGatewayRules(t, []gwCase{
		{name: "ttl", gateways: g, route: withAnn(collectortest.Alpha+"ttl", "5m"), want: []events.Endpoint{events.NewEndpoint(gwHost, "A", 300, gwIP)}},
		{name: "invalid ttl: no ttl", gateways: g, route: withAnn(collectortest.Alpha+"ttl", "abc"), want: want},
		{name: "set-identifier", gateways: g, route: withAnn(collectortest.Alpha+"set-identifier", "eu"),
			want: []events.Endpoint{collectortest.WithSetID(collectortest.EP(gwHost, "A", gwIP), "eu")}},
		{name: "controller dns-controller", gateways: g, route: withAnn(collectortest.Alpha+"controller", "dns-controller"), want: want},
		{name: "controller other", gateways: g, route: withAnn(collectortest.Alpha+"controller", "other")},
		{name: "dualstack", gateways: []gwDef{newGW("g", []string{"lb.cloud.example.net"}, gwWeb)}, route: withAnn(collectortest.Alpha+"dualstack", "true"),
			want: []events.Endpoint{withEpLabel(collectortest.EP(gwHost, "CNAME", "lb.cloud.example.net"), "dualstack", "true")}},
		{name: "dualstack false", gateways: g, route: withAnn(collectortest.Alpha+"dualstack", "false"), want: want},
		{name: "--label-filter matches", cfg: func(c *collector.Config, _, _ string) { c.LabelFilter = "dns=yes" },
			gateways: g, route: labeled(map[string]string{"dns": "yes"}), want: want},
		{name: "--label-filter excludes", cfg: func(c *collector.Config, _, _ string) { c.LabelFilter = "dns=yes" },
			gateways: g, route: labeled(map[string]string{"dns": "no"})},
		{name: "--annotation-filter matches", cfg: func(c *collector.Config, _, _ string) { c.AnnotationFilter = "dns=yes" },
			gateways: g, route: withAnn("dns", "yes"), want: want},
		{name: "--annotation-filter excludes", cfg: func(c *collector.Config, _, _ string) { c.AnnotationFilter = "dns=yes" },
			gateways: g, route: withAnn("dns", "no")},
	})
}
