package collector_test

import (
	"context"
	"flag"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
	"github.com/zonestream/zonestream/stage"
)

// A status change publishes the new state, an update that changes no
// endpoint publishes nothing, a delete publishes a tombstone.
func TestUpdatesAndDelete(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	collectortest.StartCollector(t, collector.Config{ClusterName: ns, Namespace: ns})
	subj := collectortest.ServiceSubject(ns, ns, "web")

	s := collectortest.CreateService(t, ns, collectortest.LoadBalancerService("web", "web.example.org", nil), collectortest.LoadBalancerIP("192.0.2.1"))
	collectortest.WaitState(t, subj, []events.Endpoint{collectortest.EP("web.example.org", "A", "192.0.2.1")})

	s = collectortest.SetLoadBalancer(t, s, collectortest.LoadBalancerIP("192.0.2.2"))
	collectortest.WaitState(t, subj, []events.Endpoint{collectortest.EP("web.example.org", "A", "192.0.2.2")})
	if n := collectortest.Count(t, subj); n != 2 {
		t.Fatalf("%d messages after create and status change, want 2", n)
	}

	skipped := collectortest.PublishSkipped(t, "service")
	s.Labels = map[string]string{"unrelated": "change"}
	s.Annotations["example.com/foreign"] = "dropped by the transform"
	if _, err := collectortest.Cluster.Client.CoreV1().Services(ns).Update(t.Context(), s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	collectortest.Barrier(t, ns, ns)
	if n := collectortest.Count(t, subj); n != 2 {
		t.Fatalf("%d messages after an update that changes no endpoint, want still 2", n)
	}
	if got := collectortest.PublishSkipped(t, "service"); got <= skipped {
		t.Fatalf("publish_skipped_total did not grow (%v -> %v)", skipped, got)
	}

	if err := collectortest.Cluster.Client.CoreV1().Services(ns).Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	st := collectortest.WaitState(t, subj, nil)
	if !st.IsTombstone() {
		t.Fatalf("not a tombstone: %+v", st)
	}
	collectortest.Barrier(t, ns, ns)
	if n := collectortest.Count(t, subj); n != 1 {
		t.Fatalf("%d messages after delete, want 1: the tombstone replaces the subject's history", n)
	}
}

// A restarted collector publishes nothing for unchanged objects, a
// tombstone for an object deleted while it was down, and nothing again
// for an object whose tombstone was already published.
func TestRestart(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	cfg := collector.Config{ClusterName: ns, Namespace: ns, RESTConfig: collectortest.Cluster.Config, Sources: []string{"service"}, Workers: 1}
	c, err := collector.New(cfg, collectortest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	first := collectortest.RunCollector(t, c)

	collectortest.CreateService(t, ns, collectortest.LoadBalancerService("keep", "keep.example.org", nil), collectortest.LoadBalancerIP("192.0.2.1"))
	collectortest.CreateService(t, ns, collectortest.LoadBalancerService("gone", "gone.example.org", nil), collectortest.LoadBalancerIP("192.0.2.2"))
	collectortest.CreateService(t, ns, collectortest.LoadBalancerService("old", "old.example.org", nil), collectortest.LoadBalancerIP("192.0.2.3"))
	collectortest.CreateService(t, ns, collectortest.LoadBalancerService("skipped", "skipped.example.org", map[string]string{collectortest.Alpha + "controller": "other"}), collectortest.LoadBalancerIP("192.0.2.4"))
	collectortest.WaitState(t, collectortest.ServiceSubject(ns, ns, "keep"), []events.Endpoint{collectortest.EP("keep.example.org", "A", "192.0.2.1")})
	collectortest.WaitState(t, collectortest.ServiceSubject(ns, ns, "gone"), []events.Endpoint{collectortest.EP("gone.example.org", "A", "192.0.2.2")})
	collectortest.WaitState(t, collectortest.ServiceSubject(ns, ns, "old"), []events.Endpoint{collectortest.EP("old.example.org", "A", "192.0.2.3")})
	if err := collectortest.Cluster.Client.CoreV1().Services(ns).Delete(t.Context(), "old", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	collectortest.WaitState(t, collectortest.ServiceSubject(ns, ns, "old"), nil)
	collectortest.Barrier(t, ns, ns)
	first.Stop()

	before := map[string]uint64{}
	for _, n := range []string{"keep", "gone", "old", "skipped"} {
		before[n] = collectortest.Count(t, collectortest.ServiceSubject(ns, ns, n))
	}
	if before["skipped"] != 0 {
		t.Fatalf("an object of another controller was published")
	}
	// Deleted while no collector runs.
	if err := collectortest.Cluster.Client.CoreV1().Services(ns).Delete(t.Context(), "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// The same Collector, Run again: Ready means the first pass is done.
	second := collectortest.RunCollector(t, c)
	if n := collectortest.Count(t, collectortest.ServiceSubject(ns, ns, "keep")); n != before["keep"] {
		t.Fatalf("unchanged object republished after restart: %d messages, want %d", n, before["keep"])
	}
	if n := collectortest.Count(t, collectortest.ServiceSubject(ns, ns, "old")); n != before["old"] {
		t.Fatalf("tombstone republished after restart: %d messages, want %d", n, before["old"])
	}
	if n := collectortest.Count(t, collectortest.ServiceSubject(ns, ns, "skipped")); n != 0 {
		t.Fatalf("skipped object published after restart")
	}
	st := collectortest.WaitState(t, collectortest.ServiceSubject(ns, ns, "gone"), nil)
	if !st.IsTombstone() || collectortest.Count(t, collectortest.ServiceSubject(ns, ns, "gone")) != 1 {
		t.Fatalf("no single tombstone for the object deleted while stopped")
	}
	second.Stop()

	// A brand-new Collector (new process) behaves the same.
	before["gone"] = 1
	collectortest.StartCollector(t, cfg)
	for _, n := range []string{"keep", "gone", "old"} {
		if got := collectortest.Count(t, collectortest.ServiceSubject(ns, ns, n)); got != before[n] {
			t.Fatalf("%s: %d messages after a second restart, want %d", n, got, before[n])
		}
	}
}

// Collectors of other clusters and namespaces are left alone: a collector
// limited to one namespace does not tombstone another namespace's objects.
func TestScopeOfTombstones(t *testing.T) {
	nsA, nsB := collectortest.NewNamespace(t), collectortest.NewNamespace(t)
	clusterName := nsA
	a := collectortest.StartCollector(t, collector.Config{ClusterName: clusterName, Namespace: nsA})
	b := collectortest.StartCollector(t, collector.Config{ClusterName: clusterName, Namespace: nsB})
	collectortest.CreateService(t, nsA, collectortest.LoadBalancerService("a", "a.example.org", nil), collectortest.LoadBalancerIP("192.0.2.1"))
	collectortest.CreateService(t, nsB, collectortest.LoadBalancerService("b", "b.example.org", nil), collectortest.LoadBalancerIP("192.0.2.2"))
	collectortest.WaitState(t, collectortest.ServiceSubject(clusterName, nsA, "a"), []events.Endpoint{collectortest.EP("a.example.org", "A", "192.0.2.1")})
	collectortest.WaitState(t, collectortest.ServiceSubject(clusterName, nsB, "b"), []events.Endpoint{collectortest.EP("b.example.org", "A", "192.0.2.2")})
	a.Stop()
	b.Stop()
	collectortest.StartCollector(t, collector.Config{ClusterName: clusterName, Namespace: nsA})
	if n := collectortest.Count(t, collectortest.ServiceSubject(clusterName, nsB, "b")); n != 1 {
		t.Fatalf("collector of %s touched %s: %d messages", nsA, nsB, n)
	}
}

// Bad input: a Warning event on the Service, a metric, and the valid
// endpoints still published.
func TestInvalidInputReported(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	collectortest.StartCollector(t, collector.Config{ClusterName: ns, Namespace: ns})
	before := collectortest.InvalidInput(t, "service", "InvalidAnnotation")
	collectortest.CreateService(t, ns, collectortest.LoadBalancerService("bad", "ok.example.org,not_valid-.example.org", map[string]string{
		collectortest.Alpha + "ttl":    "abc",
		collectortest.Alpha + "target": "203.0.113.5,300.1.1.1 x",
	}), collectortest.LoadBalancerIP("192.0.2.1"))
	collectortest.WaitState(t, collectortest.ServiceSubject(ns, ns, "bad"), []events.Endpoint{collectortest.EP("ok.example.org", "A", "203.0.113.5")})
	msgs := waitEvents(t, ns, "bad", 3)
	for _, want := range []string{"ttl", "target", "hostname"} {
		if !strings.Contains(msgs, want) {
			t.Errorf("no event about %s in:\n%s", want, msgs)
		}
	}
	if got := collectortest.InvalidInput(t, "service", "InvalidAnnotation"); got < before+3 {
		t.Errorf("invalid_input_total{InvalidAnnotation} went %v -> %v, want +3", before, got)
	}
}

// A template that fails on an object is reported on that object; the
// collector goes on.
func TestFailingTemplateReported(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	collectortest.StartCollector(t, collector.Config{ClusterName: ns, Namespace: ns, FQDNTemplate: "{{.Spec.NoSuchField}}.example.org"})
	collectortest.CreateService(t, ns, collectortest.Service("tmpl", corev1.ServiceTypeLoadBalancer, nil), collectortest.LoadBalancerIP("192.0.2.1"))
	msgs := waitEvents(t, ns, "tmpl", 1)
	if !strings.Contains(msgs, "FQDNTemplateFailed") {
		t.Fatalf("no FQDNTemplateFailed event: %s", msgs)
	}
	// Still working: an annotated Service is published.
	collectortest.CreateService(t, ns, collectortest.LoadBalancerService("fine", "fine.example.org", nil), collectortest.LoadBalancerIP("192.0.2.2"))
	collectortest.WaitState(t, collectortest.ServiceSubject(ns, ns, "fine"), []events.Endpoint{collectortest.EP("fine.example.org", "A", "192.0.2.2")})
	if _, ok := collectortest.LastState(t, collectortest.ServiceSubject(ns, ns, "tmpl")); ok {
		t.Fatal("the Service whose template failed was published")
	}
}

// waitEvents waits for at least n Warning events on the Service and returns
// them as "reason: message" lines.
func waitEvents(t *testing.T, ns, name string, n int) string {
	t.Helper()
	return collectortest.WaitObjectEvents(t, ns, "Service", name, n)
}

func TestNewValidates(t *testing.T) {
	base := func() collector.Config {
		return collector.Config{RESTConfig: collectortest.Cluster.Config, Sources: []string{"service"}}
	}
	for _, tc := range []struct {
		name string
		mod  func(*collector.Config)
		want string
	}{
		{"no source", func(c *collector.Config) { c.Sources = nil }, "no --source"},
		{"unknown source", func(c *collector.Config) { c.Sources = []string{"service", "gateway"} }, `"gateway": unknown source`},
		{"ingress-class with class annotation filter", func(c *collector.Config) {
			c.Sources = []string{"ingress"}
			c.Ingress.IngressClasses = []string{"nginx"}
			c.AnnotationFilter = "kubernetes.io/ingress.class=nginx"
		}, "--ingress-class is mutually exclusive"},
		{"bad crd apiversion", func(c *collector.Config) { c.Sources = []string{"crd"}; c.CRD.APIVersion = "v1" }, "--crd-source-apiversion"},
		{"bad label filter", func(c *collector.Config) { c.LabelFilter = "a=(" }, "--label-filter"},
		{"bad annotation filter", func(c *collector.Config) { c.AnnotationFilter = "!!" }, "--annotation-filter"},
		{"bad template", func(c *collector.Config) { c.FQDNTemplate = "{{.Name" }, "--fqdn-template"},
		{"bad service type", func(c *collector.Config) { c.Service.ServiceTypeFilter = []string{"Headless"} }, "--service-type-filter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base()
			tc.mod(&cfg)
			_, err := collector.New(cfg, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: %v, want an error with %q", err, tc.want)
			}
		})
	}
	c, err := collector.New(base(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Ready() == nil {
		t.Fatal("ready before Run")
	}
}

func TestFlags(t *testing.T) {
	var cfg collector.Config
	fs := flag.NewFlagSet("collector", flag.ContinueOnError)
	cfg.RegisterFlags(fs)
	err := fs.Parse([]string{
		"--source=service", "--cluster-name=eu1",
		"--namespace=web", "--label-filter=a=b", "--annotation-filter=c=d", "--fqdn-template={{.Name}}.x",
		"--combine-fqdn-annotation", "--ignore-hostname-annotation", "--publish-internal-services",
		"--service-type-filter=LoadBalancer", "--service-type-filter=ClusterIP,NodePort",
		"--publish-host-ip", "--always-publish-not-ready-addresses",
		"--ingress-class=nginx", "--ingress-class=internal", "--ignore-ingress-tls-spec", "--ignore-ingress-rules-spec",
		"--crd-source-apiversion=example.com/v1", "--crd-source-kind=Record",
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Sources) != 1 || cfg.ClusterName != "eu1" ||
		strings.Join(cfg.Namespaces, ",") != "web" || cfg.LabelFilter != "a=b" || cfg.AnnotationFilter != "c=d" || cfg.FQDNTemplate == "" ||
		!cfg.CombineFQDNAnnotation || !cfg.IgnoreHostnameAnnotation || !cfg.Service.PublishInternal ||
		strings.Join(cfg.Service.ServiceTypeFilter, ",") != "LoadBalancer,ClusterIP,NodePort" ||
		!cfg.Service.PublishHostIP || !cfg.Service.AlwaysPublishNotReadyAddresses ||
		strings.Join(cfg.Ingress.IngressClasses, ",") != "nginx,internal" || !cfg.Ingress.IgnoreTLSSpec || !cfg.Ingress.IgnoreRulesSpec ||
		cfg.CRD.APIVersion != "example.com/v1" || cfg.CRD.Kind != "Record" {
		t.Fatalf("flags parsed into %+v", cfg)
	}
	// --managed-record-types is the planner's too: defined once, in
	// stage.Shared, which the collector's Stage says it reads.
	if fs.Lookup("managed-record-types") != nil {
		t.Fatal("RegisterFlags registers --managed-record-types")
	}
	var shared stage.Shared
	shared.RegisterFlags(fs, collector.Stage().Shared)
	if err := fs.Parse([]string{"--managed-record-types=A,SRV", "--managed-record-types=AAAA",
		"--kubeconfig=/k", "--master=https://127.0.0.1:6443"}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(shared.ManagedRecordTypes, ",") != "A,SRV,AAAA" {
		t.Fatalf("--managed-record-types parsed into %v", shared.ManagedRecordTypes)
	}
	// --kubeconfig and --master are the applier's too (--registry=crd).
	if shared.Kubeconfig != "/k" || shared.Master != "https://127.0.0.1:6443" {
		t.Fatalf("--kubeconfig, --master parsed into %q, %q", shared.Kubeconfig, shared.Master)
	}
	var def collector.Config
	def.RegisterFlags(flag.NewFlagSet("x", flag.ContinueOnError))
	if def.ClusterName != "default" || def.CRD.APIVersion != "externaldns.k8s.io/v1alpha1" || def.CRD.Kind != "DNSEndpoint" {
		t.Fatalf("--cluster-name default %q", def.ClusterName)
	}
}

// Run stops promptly when its context ends, even before the informers
// have synced (here: an unreachable API server).
func TestRunStopsWithoutAPIServer(t *testing.T) {
	cfg := collector.Config{Sources: []string{"service"}, Master: "https://127.0.0.1:1", ClusterName: "unreachable"}
	c, err := collector.New(cfg, collectortest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err = c.Run(ctx, collectortest.JS)
	if ctx.Err() == nil || err == nil {
		t.Fatalf("Run returned %v before its context ended", err)
	}
	if c.Ready() == nil {
		t.Fatal("ready without an API server")
	}
}

// An object whose only hostname turns invalid keeps its last published
// state (reported, not deleted); once fixed, it is published again.
func TestBadInputNeverTombstones(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	collectortest.StartCollector(t, collector.Config{ClusterName: ns, Namespace: ns})
	subj := collectortest.ServiceSubject(ns, ns, "web")
	s := collectortest.CreateService(t, ns, collectortest.LoadBalancerService("web", "web.example.org", nil), collectortest.LoadBalancerIP("192.0.2.1"))
	collectortest.WaitState(t, subj, []events.Endpoint{collectortest.EP("web.example.org", "A", "192.0.2.1")})

	s.Annotations[collectortest.Alpha+"hostname"] = "web..example.org"
	s, err := collectortest.Cluster.Client.CoreV1().Services(ns).Update(t.Context(), s, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitEvents(t, ns, "web", 1)
	collectortest.Barrier(t, ns, ns)
	if n := collectortest.Count(t, subj); n != 1 {
		t.Fatalf("%d messages after the hostname turned invalid, want still 1", n)
	}

	s.Annotations[collectortest.Alpha+"hostname"] = "www.example.org"
	if _, err := collectortest.Cluster.Client.CoreV1().Services(ns).Update(t.Context(), s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	collectortest.WaitState(t, subj, []events.Endpoint{collectortest.EP("www.example.org", "A", "192.0.2.1")})
}
