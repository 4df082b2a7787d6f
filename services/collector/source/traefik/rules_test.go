package traefik_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

// The annotations every case of ExternalDNS' tests carries; its tests run
// with --annotation-filter=kubernetes.io/ingress.class=traefik.
func ann(kv ...string) map[string]string {
	a := collectortest.Ann(kv...)
	a["kubernetes.io/ingress.class"] = "traefik"
	return a
}

const target = "target.domain.tld"

type traefikCase struct {
	name   string
	cfg    func(*collector.Config)
	kind   kind
	object string // its name
	ann    map[string]string
	labels map[string]string
	match  []string
	want   []events.Endpoint // nil: nothing published
}

// runTraefikCases runs each case in a namespace of its own, configured as
// ExternalDNS' tests configure the source, after cfg.
func runTraefikCases(t *testing.T, cases []traefikCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := collectortest.NewNamespace(t)
			tc.kind.create(t, ns, tc.kind.object(tc.object, tc.ann, tc.labels, tc.match...))
			cfg := traefikConfig(ns)
			cfg.AnnotationFilter = "kubernetes.io/ingress.class=traefik"
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			expectFull(t, cfg, tc.kind.subject(ns, tc.object), tc.want)
		})
	}
}

func ignoreHostnameAnnotation(c *collector.Config) { c.IgnoreHostnameAnnotation = true }
func enableLegacy(c *collector.Config)             { c.Traefik.EnableLegacy = true }

// ExternalDNS v0.21's TestTraefikProxyIngressRouteEndpoints (traefik.io)
// and TestTraefikProxyOldIngressRouteEndpoints (traefik.containo.us, with
// --traefik-enable-legacy), case by case (source/traefik_proxy_test.go).
// A case without a Host rule gets a PathPrefix route: Traefik's CRD
// requires routes.
func TestTraefikIngressRouteExternalDNSCases(t *testing.T) {
	for _, group := range []string{groupNew, groupLegacy} {
		t.Run(group, func(t *testing.T) {
			k := ingressRoute(group)
			var cfg func(*collector.Config)
			if group == groupLegacy {
				cfg = enableLegacy
			}
			also := func(c func(*collector.Config)) func(*collector.Config) {
				return func(x *collector.Config) {
					if cfg != nil {
						cfg(x)
					}
					c(x)
				}
			}
			runTraefikCases(t, []traefikCase{
				{name: "IngressRoute with hostname annotation", cfg: cfg, kind: k, object: "ingressroute-annotation",
					ann: ann("hostname", "a.example.com", "target", target), match: []string{"PathPrefix(`/`)"},
					want: cnames(target, "a.example.com")},
				{name: "IngressRoute with host rule", cfg: cfg, kind: k, object: "ingressroute-host-match",
					ann: ann("target", target), match: []string{"Host(`b.example.com`)"}, want: cnames(target, "b.example.com")},
				{name: "IngressRoute with hostheader rule", cfg: cfg, kind: k, object: "ingressroute-hostheader-match",
					ann: ann("target", target), match: []string{"HostHeader(`c.example.com`)"}, want: cnames(target, "c.example.com")},
				{name: "IngressRoute with multiple host rules", cfg: cfg, kind: k, object: "ingressroute-multi-host-match",
					ann: ann("target", target), match: []string{"Host(`d.example.com`) || Host(`e.example.com`)"},
					want: cnames(target, "d.example.com", "e.example.com")},
				{name: "IngressRoute with multiple host rules and annotation", cfg: cfg, kind: k, object: "ingressroute-multi-host-annotations-match",
					ann: ann("hostname", "f.example.com", "target", target), match: []string{"Host(`g.example.com`, `h.example.com`)"},
					want: cnames(target, "f.example.com", "g.example.com", "h.example.com")},
				{name: "IngressRoute ignoring annotation", cfg: also(ignoreHostnameAnnotation), kind: k, object: "ingressroute-multi-host-annotations-match",
					ann: ann("hostname", "f.example.com", "target", target), match: []string{"Host(`g.example.com`, `h.example.com`)"},
					want: cnames(target, "g.example.com", "h.example.com")},
				{name: "IngressRoute omit wildcard", cfg: cfg, kind: k, object: "ingressroute-omit-wildcard-host",
					ann: ann("target", target), match: []string{"Host(`*`)"}},
				{name: "IngressRoute with provider-specific annotation", cfg: cfg, kind: k, object: "ingressroute-provider-specific",
					ann: ann("hostname", "a.example.com", "target", target, "aws-weight", "10"), match: []string{"PathPrefix(`/`)"},
					want: []events.Endpoint{withProps(collectortest.EP("a.example.com", "CNAME", target), "aws/weight", "10")}},
			})
		})
	}
}

// ExternalDNS v0.21's TestTraefikProxyIngressRouteTCPEndpoints and
// TestTraefikProxyOldIngressRouteTCPEndpoints. A case without a HostSNI
// rule gets HostSNI(`*`), which names no host.
func TestTraefikIngressRouteTCPExternalDNSCases(t *testing.T) {
	for _, group := range []string{groupNew, groupLegacy} {
		t.Run(group, func(t *testing.T) {
			k := ingressRouteTCP(group)
			cfg, ignore := (func(*collector.Config))(nil), ignoreHostnameAnnotation
			if group == groupLegacy {
				cfg = enableLegacy
				ignore = func(c *collector.Config) { enableLegacy(c); ignoreHostnameAnnotation(c) }
			}
			runTraefikCases(t, []traefikCase{
				{name: "IngressRouteTCP with hostname annotation", cfg: cfg, kind: k, object: "ingressroutetcp-annotation",
					ann: ann("hostname", "a.example.com", "target", target), match: []string{"HostSNI(`*`)"},
					want: cnames(target, "a.example.com")},
				{name: "IngressRouteTCP with host sni rule", cfg: cfg, kind: k, object: "ingressroutetcp-hostsni-match",
					ann: ann("target", target), match: []string{"HostSNI(`b.example.com`)"}, want: cnames(target, "b.example.com")},
				{name: "IngressRouteTCP with multiple host sni rules", cfg: cfg, kind: k, object: "ingressroutetcp-multi-host-match",
					ann: ann("target", target), match: []string{"HostSNI(`d.example.com`) || HostSNI(`e.example.com`)"},
					want: cnames(target, "d.example.com", "e.example.com")},
				{name: "IngressRouteTCP with multiple host sni rules and annotation", cfg: cfg, kind: k, object: "ingressroutetcp-multi-host-annotations-match",
					ann: ann("hostname", "f.example.com", "target", target), match: []string{"HostSNI(`g.example.com`, `h.example.com`)"},
					want: cnames(target, "f.example.com", "g.example.com", "h.example.com")},
				{name: "IngressRouteTCP ignoring annotation", cfg: ignore, kind: k, object: "ingressroutetcp-multi-host-annotations-match",
					ann: ann("hostname", "f.example.com", "target", target), match: []string{"HostSNI(`g.example.com`, `h.example.com`)"},
					want: cnames(target, "g.example.com", "h.example.com")},
				{name: "IngressRouteTCP omit wildcard host sni", cfg: cfg, kind: k, object: "ingressroutetcp-omit-wildcard-host",
					ann: ann("target", target), match: []string{"HostSNI(`*`)"}},
			})
		})
	}
}

// ExternalDNS v0.21's TestTraefikProxyIngressRouteUDPEndpoints and
// TestTraefikProxyOldIngressRouteUDPEndpoints: UDP routes name no host,
// only the hostname annotation does.
func TestTraefikIngressRouteUDPExternalDNSCases(t *testing.T) {
	for _, group := range []string{groupNew, groupLegacy} {
		t.Run(group, func(t *testing.T) {
			k := ingressRouteUDP(group)
			cfg, ignore := (func(*collector.Config))(nil), ignoreHostnameAnnotation
			if group == groupLegacy {
				cfg = enableLegacy
				ignore = func(c *collector.Config) { enableLegacy(c); ignoreHostnameAnnotation(c) }
			}
			runTraefikCases(t, []traefikCase{
				{name: "IngressRouteUDP with hostname annotation", cfg: cfg, kind: k, object: "ingressrouteudp-annotation",
					ann: ann("hostname", "a.example.com", "target", target), want: cnames(target, "a.example.com")},
				{name: "IngressRouteUDP with multiple hostname annotation", cfg: cfg, kind: k, object: "ingressrouteudp-multi-annotation",
					ann: ann("hostname", "a.example.com, b.example.com", "target", target), want: cnames(target, "a.example.com", "b.example.com")},
				{name: "IngressRouteUDP ignoring hostname annotation", cfg: ignore, kind: k, object: "ingressrouteudp-annotation",
					ann: ann("hostname", "a.example.com", "target", target)},
			})
		})
	}
}

// ExternalDNS v0.21's TestTraefikAPIGroupFlags: --traefik-enable-legacy
// and --traefik-disable-new choose the API groups read.
func TestTraefikAPIGroupFlags(t *testing.T) {
	a := ann("hostname", "a.example.com", "target", target)
	runTraefikCases(t, []traefikCase{
		{name: "IngressRoute.traefik.containo.us with the legacy API group enabled", cfg: enableLegacy,
			kind: ingressRoute(groupLegacy), object: "ingressroute-annotation", ann: a, match: []string{"PathPrefix(`/`)"},
			want: cnames(target, "a.example.com")},
		{name: "IngressRoute.traefik.containo.us with the legacy API group disabled",
			kind: ingressRoute(groupLegacy), object: "ingressroute-annotation", ann: a, match: []string{"PathPrefix(`/`)"}},
		{name: "IngressRoute.traefik.io with the new API group enabled",
			kind: ingressRoute(groupNew), object: "ingressroute-annotation", ann: a, match: []string{"PathPrefix(`/`)"},
			want: cnames(target, "a.example.com")},
		{name: "IngressRoute.traefik.io with the new API group disabled", cfg: func(c *collector.Config) { c.Traefik.DisableNew = true; c.Traefik.EnableLegacy = true },
			kind: ingressRoute(groupNew), object: "ingressroute-annotation", ann: a, match: []string{"PathPrefix(`/`)"}},
	})
}

// What zonestream adds to ExternalDNS' cases: objects of the same name in
// several kinds are separate states; ttl, set-identifier, IP targets,
// --label-filter (ExternalDNS v0.23), --fqdn-template; no target
// annotation gives nothing.
func TestTraefikRules(t *testing.T) {
	runTraefikCases(t, []traefikCase{
		{name: "no target annotation: nothing", kind: ingressRoute(groupNew), object: "r", ann: ann(), match: []string{"Host(`a.example.com`)"}},
		{name: "ttl and set-identifier", kind: ingressRoute(groupNew), object: "r",
			ann: ann("target", "192.0.2.1,2001:db8::1", "ttl", "60", "set-identifier", "eu"), match: []string{"Host(`a.example.com`) && PathPrefix(`/api`)"},
			want: []events.Endpoint{collectortest.WithSetID(events.NewEndpoint("a.example.com", "A", 60, "192.0.2.1"), "eu"),
				collectortest.WithSetID(events.NewEndpoint("a.example.com", "AAAA", 60, "2001:db8::1"), "eu")}},
		{name: "HostRegexp names no host", kind: ingressRoute(groupNew), object: "r",
			ann: ann("target", target), match: []string{"HostRegexp(`^.+\\.example\\.com$`) || Host(`x.example.com`)"}, want: cnames(target, "x.example.com")},
		{name: "label filter excludes", cfg: func(c *collector.Config) { c.LabelFilter = "dns=public" }, kind: ingressRoute(groupNew), object: "r",
			ann: ann("target", target), labels: map[string]string{"dns": "private"}, match: []string{"Host(`a.example.com`)"}},
		{name: "label filter admits", cfg: func(c *collector.Config) { c.LabelFilter = "dns=public" }, kind: ingressRoute(groupNew), object: "r",
			ann: ann("target", target), labels: map[string]string{"dns": "public"}, match: []string{"Host(`a.example.com`)"}, want: cnames(target, "a.example.com")},
		{name: "annotation filter excludes", kind: ingressRouteTCP(groupNew), object: "r",
			ann: collectortest.Ann("target", target), match: []string{"HostSNI(`a.example.com`)"}},
		{name: "controller annotation is not read, as in ExternalDNS", kind: ingressRoute(groupNew), object: "r",
			ann: ann("target", target, "controller", "other"), match: []string{"Host(`a.example.com`)"}, want: cnames(target, "a.example.com")},
	})
	t.Run("template when no host", func(t *testing.T) {
		ns := collectortest.NewNamespace(t)
		k := ingressRouteUDP(groupNew)
		k.create(t, ns, k.object("dns", collectortest.Ann("target", target), nil))
		cfg := traefikConfig(ns)
		cfg.FQDNTemplate = "{{.Name}}.{{.Namespace}}.example.org"
		expectFull(t, cfg, k.subject(ns, "dns"), cnames(target, "dns."+ns+".example.org"))
	})
	t.Run("one name in three kinds: three states", func(t *testing.T) {
		ns := collectortest.NewNamespace(t)
		kinds := []kind{ingressRoute(groupNew), ingressRouteTCP(groupNew), ingressRouteUDP(groupNew)}
		for i, k := range kinds {
			k.create(t, ns, k.object("web", collectortest.Ann("hostname", []string{"http", "tcp", "udp"}[i]+".example.org", "target", target), nil))
		}
		collectortest.StartCollector(t, traefikConfig(ns))
		for i, k := range kinds {
			collectortest.WaitState(t, k.subject(ns, "web"), cnames(target, []string{"http", "tcp", "udp"}[i]+".example.org"))
		}
	})
}

// Bad input is reported on the object (Event, metric); its valid
// endpoints are still published.
func TestTraefikInvalidInputReported(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	k := ingressRoute(groupNew)
	before := collectortest.InvalidInput(t, "traefik-proxy", "InvalidHostname")
	k.create(t, ns, k.object("bad", collectortest.Ann("target", target, "ttl", "abc"), nil, "Host(`bad..example.org`) || Host(`ok.example.org`)"))
	collectortest.StartCollector(t, traefikConfig(ns))
	collectortest.WaitState(t, k.subject(ns, "bad"), cnames(target, "ok.example.org"))
	collectortest.ExpectEvents(t, ns, "IngressRoute", "bad", `ttl "abc"`, `bad..example.org`)
	if got := collectortest.InvalidInput(t, "traefik-proxy", "InvalidHostname") - before; got < 1 {
		t.Errorf("metric grew by %v, want >= 1", got)
	}
}

// A changed rule republishes the object; a deleted one is a tombstone.
func TestTraefikLifecycle(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	k := ingressRouteTCP(groupNew)
	k.create(t, ns, k.object("db", collectortest.Ann("target", target), nil, "HostSNI(`db.example.org`)"))
	collectortest.StartCollector(t, traefikConfig(ns))
	subj := k.subject(ns, "db")
	collectortest.WaitState(t, subj, cnames(target, "db.example.org"))

	res := collectortest.DynamicClient(t, collectortest.Cluster.Config).Resource(k.gvr()).Namespace(ns)
	u, err := res.Get(t.Context(), "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	u.Object["spec"].(map[string]any)["routes"].([]any)[0].(map[string]any)["match"] = "HostSNI(`db2.example.org`)"
	if _, err := res.Update(t.Context(), u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	collectortest.WaitState(t, subj, cnames(target, "db2.example.org"))
	if err := res.Delete(t.Context(), "db", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	collectortest.WaitState(t, subj, nil)
}
