package openshift_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
	"github.com/zonestream/zonestream/testenv/kube"
)

type routeCase struct {
	name  string
	cfg   func(*collector.Config)
	route route
	want  []events.Endpoint // nil: nothing published
}

// runRouteCases runs each case in a namespace of its own, with a collector
// configured as ExternalDNS' tests configure the source (--fqdn-template
// "{{.Name}}"), after cfg.
func runRouteCases(t *testing.T, cases []routeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := collectortest.NewNamespace(t)
			tc.route.create(t, ns)
			cfg := routeConfig(ns)
			cfg.FQDNTemplate = "{{.Name}}"
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			expectFull(t, cfg, routeSubject(ns, tc.route.name), tc.want)
		})
	}
}

func routerName(n string) func(*collector.Config) {
	return func(c *collector.Config) { c.OpenShift.RouterName = n }
}

// ExternalDNS v0.21's testOcpRouteSourceEndpoints, case by case
// (source/openshift_route_test.go).
func TestOpenShiftRouteExternalDNSCases(t *testing.T) {
	runRouteCases(t, []routeCase{
		{name: "route with basic hostname and route status target",
			route: route{name: "route-with-target", status: []routerVerdict{admittedBy("my-domain.com", "", "apps.my-domain.com")}},
			want:  []events.Endpoint{cname("my-domain.com", "apps.my-domain.com")}},
		{name: "route with basic hostname, route status target and ocpRouterName defined", cfg: routerName("default"),
			route: route{name: "route-with-target", status: []routerVerdict{admittedBy("my-domain.com", "default", "router-default.my-domain.com")}},
			want:  []events.Endpoint{cname("my-domain.com", "router-default.my-domain.com")}},
		{name: "route with basic hostname, route status target, one ocpRouterName and two router canonical names", cfg: routerName("default"),
			route: route{name: "route-with-target", status: []routerVerdict{
				admittedBy("my-domain.com", "default", "router-default.my-domain.com"),
				admittedBy("my-domain.com", "test", "router-test.my-domain.com")}},
			want: []events.Endpoint{cname("my-domain.com", "router-default.my-domain.com")}},
		{name: "route not admitted by the given router", cfg: routerName("test"),
			route: route{name: "route-with-target", status: []routerVerdict{
				admittedBy("my-domain.com", "default", "router-default.my-domain.com"),
				rejectedBy("my-domain.com", "test", "router-test.my-domain.com")}}},
		{name: "route not admitted by any router",
			route: route{name: "route-with-target", specHost: "my-domain.com", status: []routerVerdict{
				rejectedBy("my-domain.com", "default", "router-default.my-domain.com"),
				rejectedBy("my-domain.com", "test", "router-test.my-domain.com")}}},
		{name: "route admitted by first appropriate router",
			route: route{name: "route-with-target", status: []routerVerdict{
				rejectedBy("my-domain.com", "default", "router-default.my-domain.com"),
				admittedBy("my-domain.com", "test", "router-test.my-domain.com")}},
			want: []events.Endpoint{cname("my-domain.com", "router-test.my-domain.com")}},
		{name: "route with incorrect externalDNS controller annotation",
			route: route{name: "route-with-ignore-annotation", annotations: collectortest.Ann("controller", "foo"),
				status: []routerVerdict{admittedBy("my-domain.com", "", "apps.my-domain.com")}}},
		{name: "route with basic hostname and annotation target",
			route: route{name: "route-with-annotation-target", annotations: collectortest.Ann("target", "my.site.foo.com"),
				status: []routerVerdict{admittedBy("my-annotation-domain.com", "default", "router-default.my-domain.com")}},
			want: []events.Endpoint{cname("my-annotation-domain.com", "my.site.foo.com")}},
		{name: "route with matching labels", cfg: func(c *collector.Config) { c.LabelFilter = "app=web-external" },
			route: route{name: "route-with-matching-labels", annotations: collectortest.Ann("target", "my.site.foo.com"),
				labels: map[string]string{"app": "web-external", "name": "service-frontend"},
				status: []routerVerdict{admittedBy("my-annotation-domain.com", "default", "router-default.my-domain.com")}},
			want: []events.Endpoint{cname("my-annotation-domain.com", "my.site.foo.com")}},
		{name: "route without matching labels", cfg: func(c *collector.Config) { c.LabelFilter = "app=web-external" },
			route: route{name: "route-without-matching-labels", specHost: "my-annotation-domain.com",
				annotations: collectortest.Ann("target", "my.site.foo.com"),
				labels:      map[string]string{"app": "web-internal", "name": "service-frontend"},
				status:      []routerVerdict{admittedBy("my-annotation-domain.com", "default", "router-default.my-domain.com")}}},
		{name: "route with provider-specific annotation",
			route: route{name: "route-with-provider-specific", annotations: map[string]string{"external-dns.alpha.kubernetes.io/aws-weight": "10"},
				status: []routerVerdict{admittedBy("my-domain.com", "", "apps.my-domain.com")}},
			want: []events.Endpoint{withProps(cname("my-domain.com", "apps.my-domain.com"), "aws/weight", "10")}},
	})
}

// The annotations and flags every source honours, on Routes.
func TestOpenShiftRouteAnnotations(t *testing.T) {
	admitted := []routerVerdict{admittedBy("app.example.org", "default", "router.apps.example.org")}
	runRouteCases(t, []routeCase{
		{name: "hostname annotation adds names",
			route: route{name: "r", annotations: collectortest.Ann("hostname", "www.example.org,api.example.org"), status: admitted},
			want: []events.Endpoint{cname("api.example.org", "router.apps.example.org"), cname("app.example.org", "router.apps.example.org"),
				cname("www.example.org", "router.apps.example.org")}},
		{name: "--ignore-hostname-annotation", cfg: func(c *collector.Config) { c.IgnoreHostnameAnnotation = true },
			route: route{name: "r", annotations: collectortest.Ann("hostname", "www.example.org"), status: admitted},
			want:  []events.Endpoint{cname("app.example.org", "router.apps.example.org")}},
		{name: "ttl and set-identifier",
			route: route{name: "r", annotations: collectortest.Ann("ttl", "5m", "set-identifier", "eu"), status: admitted},
			want:  []events.Endpoint{collectortest.WithSetID(events.NewEndpoint("app.example.org", "CNAME", 300, "router.apps.example.org"), "eu")}},
		{name: "IP target annotation gives A",
			route: route{name: "r", annotations: collectortest.Ann("target", "192.0.2.1,2001:db8::1"), status: admitted},
			want:  []events.Endpoint{collectortest.EP("app.example.org", "A", "192.0.2.1"), collectortest.EP("app.example.org", "AAAA", "2001:db8::1")}},
		{name: "router without canonical hostname is skipped",
			route: route{name: "r", status: []routerVerdict{admittedBy("a.example.org", "one", ""), admittedBy("b.example.org", "two", "router-two.example.org")}},
			want:  []events.Endpoint{cname("b.example.org", "router-two.example.org")}},
	})
	// The template's names carry the namespace: a case of its own.
	t.Run("template when no router admitted the Route", func(t *testing.T) {
		ns := collectortest.NewNamespace(t)
		route{name: "r", annotations: collectortest.Ann("target", "192.0.2.1")}.create(t, ns)
		cfg := routeConfig(ns)
		cfg.FQDNTemplate = "{{.Name}}.{{.Namespace}}.example.org"
		expectFull(t, cfg, routeSubject(ns, "r"), []events.Endpoint{collectortest.EP("r."+ns+".example.org", "A", "192.0.2.1")})
	})
}

// Bad input on a Route is reported on it (Event, metric); its valid
// endpoints are still published.
func TestOpenShiftRouteInvalidInputReported(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	before := collectortest.InvalidInput(t, "openshift-route", "InvalidAnnotation")
	route{name: "bad", annotations: collectortest.Ann("ttl", "abc", "hostname", "ok.example.org,bad..example.org"),
		status: []routerVerdict{admittedBy("app.example.org", "default", "router.apps.example.org")}}.create(t, ns)
	collectortest.StartCollector(t, routeConfig(ns))
	collectortest.WaitState(t, routeSubject(ns, "bad"), []events.Endpoint{
		cname("app.example.org", "router.apps.example.org"), cname("ok.example.org", "router.apps.example.org")})
	collectortest.ExpectEvents(t, ns, "Route", "bad", `ttl "abc"`, `bad..example.org`)
	if got := collectortest.InvalidInput(t, "openshift-route", "InvalidAnnotation") - before; got < 2 {
		t.Errorf("metric grew by %v, want >= 2", got)
	}
}

// A router's new verdict republishes the Route; a deleted Route becomes a
// tombstone.
func TestOpenShiftRouteLifecycle(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	r := route{name: "web", status: []routerVerdict{admittedBy("web.example.org", "default", "router-a.example.org")}}
	r.create(t, ns)
	collectortest.StartCollector(t, routeConfig(ns))
	subj := routeSubject(ns, "web")
	collectortest.WaitState(t, subj, []events.Endpoint{cname("web.example.org", "router-a.example.org")})

	dc := collectortest.DynamicClient(t, collectortest.Cluster.Config)
	got, err := dc.Resource(routes).Namespace(ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Object["status"] = route{status: []routerVerdict{admittedBy("web.example.org", "default", "router-b.example.org")}}.statusObject()
	if _, err := dc.Resource(routes).Namespace(ns).UpdateStatus(t.Context(), got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	collectortest.WaitState(t, subj, []events.Endpoint{cname("web.example.org", "router-b.example.org")})

	if err := dc.Resource(routes).Namespace(ns).Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	collectortest.WaitState(t, subj, nil)
}

// OpenShift's Route CRD installed while the collector runs: the source
// starts reading Routes without a restart (and was ready before).
func TestOpenShiftRouteCRDAppears(t *testing.T) {
	other := kube.StartT(t)
	const ns = "default"
	cfg := routeConfig(collectortest.NewNamespace(t))
	clusterName := cfg.ClusterName
	cfg.Namespace = ns
	cfg.RESTConfig = other.Config
	cfg.Workers = 1
	c, err := collector.New(cfg, collectortest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	collectortest.RunCollector(t, c)

	if err := other.InstallCRDs("testdata"); err != nil {
		t.Fatal(err)
	}
	dc := collectortest.DynamicClient(t, other.Config)
	r := route{name: "late", status: []routerVerdict{admittedBy("late.example.org", "default", "router.apps.example.org")}}
	got, err := dc.Resource(routes).Namespace(ns).Create(t.Context(), r.object(), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Object["status"] = r.statusObject()
	if _, err := dc.Resource(routes).Namespace(ns).UpdateStatus(t.Context(), got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	collectortest.WaitState(t, events.SourceSubject(clusterName, "openshift-route", ns, "late"),
		[]events.Endpoint{cname("late.example.org", "router.apps.example.org")})
}
