package contour_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

// proxyCase is one case of ExternalDNS' tables: HTTPProxies sharing one
// load balancer, each with the endpoints ExternalDNS' expected list holds
// for it (ExternalDNS merges them into one list; zonestream publishes one
// state per HTTPProxy).
type proxyCase struct {
	name    string
	cfg     func(*collector.Config)
	lb      []string
	proxies []proxy
}

func runProxyCases(t *testing.T, cases []proxyCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := collectortest.NewNamespace(t)
			for _, p := range tc.proxies {
				p.lb = tc.lb
				p.create(t, ns)
			}
			cfg := contourConfig(ns)
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			collectortest.StartCollector(t, cfg)
			for _, p := range tc.proxies {
				expectFull(t, proxySubject(ns, ns, p.name), p.want)
			}
		})
	}
}

func template(tmpl string, combine bool) func(*collector.Config) {
	return func(c *collector.Config) { c.FQDNTemplate, c.CombineFQDNAnnotation = tmpl, combine }
}

// ExternalDNS v0.21's testEndpointsFromHTTPProxy, case by case
// (source/contour_httpproxy_test.go; its source has --fqdn-template
// "{{.Name}}").
func TestContourEndpointsFromHTTPProxyExternalDNSCases(t *testing.T) {
	name := template("{{.Name}}", false)
	runProxyCases(t, []proxyCase{
		{name: "one rule.host one lb.hostname", cfg: name, lb: []string{"lb.com"},
			proxies: []proxy{{name: "p", fqdn: "foo.bar", want: []events.Endpoint{ep("foo.bar", "CNAME", "lb.com")}}}},
		{name: "one rule.host one lb.IP", cfg: name, lb: []string{"8.8.8.8"},
			proxies: []proxy{{name: "p", fqdn: "foo.bar", want: []events.Endpoint{ep("foo.bar", "A", "8.8.8.8")}}}},
		{name: "one rule.host two lb.IP and two lb.Hostname", cfg: name, lb: []string{"8.8.8.8", "127.0.0.1", "elb.com", "alb.com"},
			proxies: []proxy{{name: "p", fqdn: "foo.bar", want: []events.Endpoint{ep("foo.bar", "A", "8.8.8.8", "127.0.0.1"), ep("foo.bar", "CNAME", "elb.com", "alb.com")}}}},
		{name: "no rule.host", cfg: name, proxies: []proxy{{name: "p"}}},
		{name: "no targets", cfg: name, proxies: []proxy{{name: "p", fqdn: "foo.bar"}}},
		{name: "delegate httpproxy", cfg: name, proxies: []proxy{{name: "p"}}},
		{name: "provider-specific annotation is converted to endpoint property", cfg: name, lb: []string{"8.8.8.8"},
			proxies: []proxy{{name: "p", fqdn: "foo.bar", annotations: map[string]string{"external-dns.alpha.kubernetes.io/aws-weight": "10"},
				want: []events.Endpoint{withProps(ep("foo.bar", "A", "8.8.8.8"), "aws/weight", "10")}}}},
	})
}

// ExternalDNS v0.21's testHTTPProxyEndpoints, case by case; its cases of
// --namespace and of an annotation filter that does not parse are
// TestContourNamespace and TestContourInvalidAnnotationFilter.
func TestContourHTTPProxyEndpointsExternalDNSCases(t *testing.T) {
	const classFilter = "contour.heptio.com/ingress.class"
	tmpl := "{{.Name}}.ext-dns.test.com"
	runProxyCases(t, []proxyCase{
		{name: "no httpproxy"},
		{name: "two simple httpproxys", lb: []string{"8.8.8.8", "lb.com"}, proxies: []proxy{
			{name: "fake1", fqdn: "example.org", want: []events.Endpoint{ep("example.org", "A", "8.8.8.8"), ep("example.org", "CNAME", "lb.com")}},
			{name: "fake2", fqdn: "new.org", want: []events.Endpoint{ep("new.org", "A", "8.8.8.8"), ep("new.org", "CNAME", "lb.com")}}}},
		{name: "valid matching annotation filter expression", cfg: func(c *collector.Config) { c.AnnotationFilter = classFilter + " in (alb, contour)" },
			lb: []string{"8.8.8.8"}, proxies: []proxy{{name: "fake1", fqdn: "example.org", annotations: map[string]string{classFilter: "contour"},
				want: []events.Endpoint{ep("example.org", "A", "8.8.8.8")}}}},
		{name: "valid non-matching annotation filter expression", cfg: func(c *collector.Config) { c.AnnotationFilter = classFilter + " in (alb, contour)" },
			lb: []string{"8.8.8.8"}, proxies: []proxy{{name: "fake1", fqdn: "example.org", annotations: map[string]string{classFilter: "tectonic"}}}},
		{name: "valid matching annotation filter label", cfg: func(c *collector.Config) { c.AnnotationFilter = classFilter + "=contour" },
			lb: []string{"8.8.8.8"}, proxies: []proxy{{name: "fake1", fqdn: "example.org", annotations: map[string]string{classFilter: "contour"},
				want: []events.Endpoint{ep("example.org", "A", "8.8.8.8")}}}},
		{name: "valid non-matching annotation filter label", cfg: func(c *collector.Config) { c.AnnotationFilter = classFilter + "=contour" },
			lb: []string{"8.8.8.8"}, proxies: []proxy{{name: "fake1", fqdn: "example.org", annotations: map[string]string{classFilter: "alb"}}}},
		{name: "our controller type is dns-controller", lb: []string{"8.8.8.8"},
			proxies: []proxy{{name: "fake1", fqdn: "example.org", annotations: collectortest.Ann("controller", "dns-controller"),
				want: []events.Endpoint{ep("example.org", "A", "8.8.8.8")}}}},
		{name: "different controller types are ignored", lb: []string{"8.8.8.8"},
			proxies: []proxy{{name: "fake1", fqdn: "example.org", annotations: collectortest.Ann("controller", "some-other-tool")}}},
		{name: "template for httpproxy if host is missing", cfg: template(tmpl, false), lb: []string{"8.8.8.8", "elb.com"},
			proxies: []proxy{{name: "fake1", annotations: collectortest.Ann("controller", "dns-controller"),
				want: []events.Endpoint{ep("fake1.ext-dns.test.com", "A", "8.8.8.8"), ep("fake1.ext-dns.test.com", "CNAME", "elb.com")}}}},
		{name: "another controller annotation skipped even with template", cfg: template(tmpl, false), lb: []string{"8.8.8.8"},
			proxies: []proxy{{name: "fake1", annotations: collectortest.Ann("controller", "other-controller")}}},
		{name: "multiple FQDN template hostnames", cfg: template("{{.Name}}.ext-dns.test.com, {{.Name}}.ext-dna.test.com", false), lb: []string{"8.8.8.8"},
			proxies: []proxy{{name: "fake1", want: []events.Endpoint{ep("fake1.ext-dns.test.com", "A", "8.8.8.8"), ep("fake1.ext-dna.test.com", "A", "8.8.8.8")}}}},
		{name: "multiple FQDN template hostnames, combined", cfg: template("{{.Name}}.ext-dns.test.com, {{.Name}}.ext-dna.test.com", true), lb: []string{"8.8.8.8"},
			proxies: []proxy{
				{name: "fake1", want: []events.Endpoint{ep("fake1.ext-dns.test.com", "A", "8.8.8.8"), ep("fake1.ext-dna.test.com", "A", "8.8.8.8")}},
				{name: "fake2", fqdn: "example.org", annotations: collectortest.Ann("target", "httpproxy-target.com"),
					want: []events.Endpoint{ep("example.org", "CNAME", "httpproxy-target.com"), ep("fake2.ext-dns.test.com", "CNAME", "httpproxy-target.com"),
						ep("fake2.ext-dna.test.com", "CNAME", "httpproxy-target.com")}}}},
		{name: "httpproxy rules with annotation", lb: []string{"8.8.8.8"}, proxies: []proxy{
			{name: "fake1", fqdn: "example.org", annotations: collectortest.Ann("target", "httpproxy-target.com"), want: []events.Endpoint{ep("example.org", "CNAME", "httpproxy-target.com")}},
			{name: "fake2", fqdn: "example2.org", annotations: collectortest.Ann("target", "httpproxy-target.com"), want: []events.Endpoint{ep("example2.org", "CNAME", "httpproxy-target.com")}},
			{name: "fake3", fqdn: "example3.org", annotations: collectortest.Ann("target", "1.2.3.4"), want: []events.Endpoint{ep("example3.org", "A", "1.2.3.4")}}}},
		{name: "httpproxy rules with hostname annotation", lb: []string{"1.2.3.4"}, proxies: []proxy{
			{name: "fake1", fqdn: "example.org", annotations: collectortest.Ann("hostname", "dns-through-hostname.com"),
				want: []events.Endpoint{ep("example.org", "A", "1.2.3.4"), ep("dns-through-hostname.com", "A", "1.2.3.4")}}}},
		{name: "httpproxy rules with hostname annotation having multiple hostnames", lb: []string{"1.2.3.4"}, proxies: []proxy{
			{name: "fake1", fqdn: "example.org", annotations: collectortest.Ann("hostname", "dns-through-hostname.com, another-dns-through-hostname.com"),
				want: []events.Endpoint{ep("example.org", "A", "1.2.3.4"), ep("dns-through-hostname.com", "A", "1.2.3.4"), ep("another-dns-through-hostname.com", "A", "1.2.3.4")}}}},
		{name: "httpproxy rules with hostname and target annotation", proxies: []proxy{
			{name: "fake1", fqdn: "example.org", annotations: collectortest.Ann("hostname", "dns-through-hostname.com", "target", "httpproxy-target.com"),
				want: []events.Endpoint{ep("example.org", "CNAME", "httpproxy-target.com"), ep("dns-through-hostname.com", "CNAME", "httpproxy-target.com")}}}},
		{name: "httpproxy rules with annotation and custom TTL", lb: []string{"8.8.8.8"}, proxies: []proxy{
			{name: "fake1", fqdn: "example.org", annotations: collectortest.Ann("target", "httpproxy-target.com", "ttl", "6"),
				want: []events.Endpoint{withTTL(ep("example.org", "CNAME", "httpproxy-target.com"), 6)}},
			{name: "fake2", fqdn: "example2.org", annotations: collectortest.Ann("target", "httpproxy-target.com", "ttl", "1"),
				want: []events.Endpoint{withTTL(ep("example2.org", "CNAME", "httpproxy-target.com"), 1)}},
			{name: "fake3", fqdn: "example3.org", annotations: collectortest.Ann("target", "httpproxy-target.com", "ttl", "10s"),
				want: []events.Endpoint{withTTL(ep("example3.org", "CNAME", "httpproxy-target.com"), 10)}}}},
		{name: "template for httpproxy with annotation", cfg: template(tmpl, false), proxies: []proxy{
			{name: "fake1", annotations: collectortest.Ann("target", "httpproxy-target.com"), want: []events.Endpoint{ep("fake1.ext-dns.test.com", "CNAME", "httpproxy-target.com")}},
			{name: "fake2", annotations: collectortest.Ann("target", "httpproxy-target.com"), want: []events.Endpoint{ep("fake2.ext-dns.test.com", "CNAME", "httpproxy-target.com")}},
			{name: "fake3", annotations: collectortest.Ann("target", "1.2.3.4"), want: []events.Endpoint{ep("fake3.ext-dns.test.com", "A", "1.2.3.4")}}}},
		{name: "httpproxy with empty annotation", cfg: template(tmpl, false), proxies: []proxy{
			{name: "fake1", annotations: collectortest.Ann("target", "")}}},
		{name: "ignore hostname annotations", cfg: func(c *collector.Config) { c.IgnoreHostnameAnnotation = true }, lb: []string{"8.8.8.8", "lb.com"}, proxies: []proxy{
			{name: "fake1", fqdn: "example.org", annotations: collectortest.Ann("hostname", "ignore.me"),
				want: []events.Endpoint{ep("example.org", "A", "8.8.8.8"), ep("example.org", "CNAME", "lb.com")}},
			{name: "fake2", fqdn: "new.org", annotations: collectortest.Ann("hostname", "ignore.me.too"),
				want: []events.Endpoint{ep("new.org", "A", "8.8.8.8"), ep("new.org", "CNAME", "lb.com")}}}},
	})
}

// ExternalDNS' "two simple httpproxys on different namespaces" cases: all
// namespaces, or only --namespace's.
func TestContourNamespace(t *testing.T) {
	cluster := collectortest.NewNamespace(t)
	ns1, ns2 := collectortest.NewNamespace(t), collectortest.NewNamespace(t)
	lb := []string{"8.8.8.8", "lb.com"}
	proxy{name: "fake1", fqdn: "example.org", lb: lb}.create(t, ns1)
	proxy{name: "fake2", fqdn: "new.org", lb: lb}.create(t, ns2)
	one := contourConfig(cluster)
	one.Namespace = ns1
	collectortest.StartCollector(t, one)
	expectFull(t, proxySubject(cluster, ns1, "fake1"), []events.Endpoint{ep("example.org", "A", "8.8.8.8"), ep("example.org", "CNAME", "lb.com")})
	expectFull(t, proxySubject(cluster, ns2, "fake2"), nil)

	all := contourConfig(collectortest.NewNamespace(t))
	all.Namespace = ""
	collectortest.StartCollector(t, all)
	expectFull(t, proxySubject(all.ClusterName, ns1, "fake1"), []events.Endpoint{ep("example.org", "A", "8.8.8.8"), ep("example.org", "CNAME", "lb.com")})
	expectFull(t, proxySubject(all.ClusterName, ns2, "fake2"), []events.Endpoint{ep("new.org", "A", "8.8.8.8"), ep("new.org", "CNAME", "lb.com")})
}

// ExternalDNS' "invalid annotation filter expression": an error, at start.
func TestContourInvalidAnnotationFilter(t *testing.T) {
	cfg := contourConfig("any")
	cfg.RESTConfig = collectortest.Cluster.Config
	cfg.AnnotationFilter = "contour.heptio.com/ingress.name in (a b)"
	if _, err := collector.New(cfg, collectortest.Logger(t)); err == nil || !strings.Contains(err.Error(), "--annotation-filter") {
		t.Fatalf("collector.New = %v, want an --annotation-filter error", err)
	}
}

// Bad input is reported on the HTTPProxy (Event, metric); its valid
// endpoints are still published.
func TestContourInvalidInputReported(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	before := collectortest.InvalidInput(t, "contour-httpproxy", "InvalidAnnotation")
	proxy{name: "bad", fqdn: "app.example.org", annotations: collectortest.Ann("ttl", "abc", "hostname", "bad..example.org,ok.example.org"), lb: []string{"192.0.2.1"}}.create(t, ns)
	collectortest.StartCollector(t, contourConfig(ns))
	collectortest.WaitState(t, proxySubject(ns, ns, "bad"), []events.Endpoint{ep("app.example.org", "A", "192.0.2.1"), ep("ok.example.org", "A", "192.0.2.1")})
	collectortest.ExpectEvents(t, ns, "HTTPProxy", "bad", `ttl "abc"`, `bad..example.org`)
	if got := collectortest.InvalidInput(t, "contour-httpproxy", "InvalidAnnotation") - before; got < 2 {
		t.Errorf("metric grew by %v, want >= 2", got)
	}
}

// Contour writing a new load balancer republishes the HTTPProxy; a
// deleted one is a tombstone; --label-filter applies (ExternalDNS v0.23).
func TestContourLifecycle(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	proxy{name: "web", fqdn: "web.example.org", lb: []string{"192.0.2.1"}, labels: map[string]string{"dns": "public"}}.create(t, ns)
	proxy{name: "private", fqdn: "private.example.org", lb: []string{"192.0.2.1"}, labels: map[string]string{"dns": "private"}}.create(t, ns)
	cfg := contourConfig(ns)
	cfg.LabelFilter = "dns=public"
	collectortest.StartCollector(t, cfg)
	subj := proxySubject(ns, ns, "web")
	collectortest.WaitState(t, subj, []events.Endpoint{ep("web.example.org", "A", "192.0.2.1")})
	expectFull(t, proxySubject(ns, ns, "private"), nil)

	res := collectortest.DynamicClient(t, collectortest.Cluster.Config).Resource(httpProxies).Namespace(ns)
	u, err := res.Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	u.Object["status"] = loadBalancer("192.0.2.2", "lb.example.net")
	if _, err := res.UpdateStatus(t.Context(), u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	collectortest.WaitState(t, subj, []events.Endpoint{ep("web.example.org", "A", "192.0.2.2"), ep("web.example.org", "CNAME", "lb.example.net")})
	if err := res.Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	collectortest.WaitState(t, subj, nil)
}

// Contour rewrites an HTTPProxy's status conditions often: such a rewrite
// (load balancer unchanged) is dropped in the handler, not recomputed.
func TestContourStatusRewriteIgnored(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	proxy{name: "web", fqdn: "web.example.org", lb: []string{"192.0.2.1"}}.create(t, ns)
	collectortest.StartCollector(t, contourConfig(ns))
	subj := proxySubject(ns, ns, "web")
	collectortest.WaitState(t, subj, []events.Endpoint{ep("web.example.org", "A", "192.0.2.1")})
	skipped, published := collectortest.PublishSkipped(t, "contour-httpproxy"), collectortest.Count(t, subj)

	res := collectortest.DynamicClient(t, collectortest.Cluster.Config).Resource(httpProxies).Namespace(ns)
	for _, state := range []string{"valid", "invalid", "valid"} {
		u, err := res.Get(t.Context(), "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		status := loadBalancer("192.0.2.1")
		status["currentStatus"], status["description"] = state, "rewritten by the test as Contour would"
		u.Object["status"] = status
		if _, err := res.UpdateStatus(t.Context(), u, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Barrier: a new HTTPProxy, processed after everything before it.
	proxy{name: "zz-barrier", fqdn: "barrier.example.org", annotations: collectortest.Ann("target", "192.0.2.254")}.create(t, ns)
	collectortest.WaitState(t, proxySubject(ns, ns, "zz-barrier"), []events.Endpoint{ep("barrier.example.org", "A", "192.0.2.254")})
	if got := collectortest.PublishSkipped(t, "contour-httpproxy") - skipped; got != 0 {
		t.Errorf("%v HTTPProxies recomputed after status rewrites; want none", got)
	}
	if got := collectortest.Count(t, subj); got != published {
		t.Errorf("%d messages on %s, want %d", got, subj, published)
	}
}
