package collector_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
	"github.com/zonestream/zonestream/services/collector/kubestatus"
)

// syncBuffer is a log sink tests read while the collector writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// restrictedConfig is the cluster's config acting as a user allowed to
// read what the collector reads, and to write nothing: no Events, no
// DNSEndpoint status.
func restrictedConfig(t *testing.T, user string) *rest.Config {
	t.Helper()
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"services", "namespaces", "pods", "nodes"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"externaldns.k8s.io"}, Resources: []string{"dnsendpoints"}, Verbs: []string{"get", "list", "watch"}},
	}
	rbac := collectortest.Cluster.Client.RbacV1()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: rules}
	if _, err := rbac.ClusterRoles().Create(t.Context(), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: user},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: user}}}
	if _, err := rbac.ClusterRoleBindings().Create(t.Context(), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = rbac.ClusterRoleBindings().Delete(t.Context(), user, metav1.DeleteOptions{})
		_ = rbac.ClusterRoles().Delete(t.Context(), user, metav1.DeleteOptions{})
	})
	cfg := rest.CopyConfig(collectortest.Cluster.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	// The apiserver's authorizer learns of a new binding from a watch: the
	// user may be refused for a moment after the binding is created.
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(collectortest.WaitFor); ; time.Sleep(50 * time.Millisecond) {
		_, err := kc.CoreV1().Namespaces().Get(t.Context(), "kube-system", metav1.GetOptions{})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the binding of %s never took effect: %v", user, err)
		}
	}
	return cfg
}

// TestStatusWritesRefusedLeaveDNSWorkAlone runs a collector whose RBAC
// forbids Events and DNSEndpoint status: the refusals are counted and
// logged, and its objects are still published.
func TestStatusWritesRefusedLeaveDNSWorkAlone(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	logs := &syncBuffer{}
	cfg := collectortest.CRDConfig(ns)
	cfg.RESTConfig, cfg.Sources, cfg.Workers, cfg.KubeStatus = restrictedConfig(t, "zs-restricted-"+ns), []string{"service", "crd"}, 1, true
	cfg.EmitEvents = kubestatus.EventReasons
	c, err := collector.New(cfg, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	collectortest.RunCollector(t, c)
	before := map[string]float64{}
	for _, what := range []string{"event", "condition"} {
		before[what] = statusErrors(t, what)
	}

	dc := collectortest.DynamicClient(t, collectortest.Cluster.Config)
	name := "web." + ns + ".example.org"
	collectortest.CreateDNSEndpoint(t, dc, ns, collectortest.DNSEndpoint("web", collectortest.Entry(name, "A", "192.0.2.1")))
	ep := events.Endpoint{DNSName: name, RecordType: "A", Targets: []string{"192.0.2.1"}}
	collectortest.WaitState(t, collectortest.CRDSubject(ns, ns, "web"), []events.Endpoint{ep})

	// The test plays dedup and the applier: the name is wanted by the
	// DNSEndpoint, and the provider holds it.
	obj := events.ObjectRef{Cluster: ns, Source: "crd", Namespace: ns, Name: "web"}
	publish(t, events.DesiredSubject(name), &events.DesiredState{DNSName: name, Endpoints: []events.Endpoint{ep},
		Contributors: []events.ObjectRef{obj}, Holders: []events.RRsetHolder{{RecordType: "A", Objects: []events.ObjectRef{obj}}}})
	publish(t, events.ObservedSubject("test", name), &events.ObservedState{Provider: "test", Zone: "example.org",
		DNSName: name, Records: []events.Endpoint{ep}})

	deadline := time.Now().Add(collectortest.WaitFor)
	for {
		var missing []string
		for what, n := range before {
			if statusErrors(t, what) <= n {
				missing = append(missing, what+": metric")
			}
			if !strings.Contains(logs.String(), "what="+what) {
				missing = append(missing, what+": log line")
			}
		}
		if !strings.Contains(logs.String(), "forbidden=true") {
			missing = append(missing, "forbidden=true in the log")
		}
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("refused status writes not reported: %v\n%s", missing, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}

	// DNS work goes on: a change of the object is published.
	u, err := dc.Resource(collectortest.DNSEndpointGVR).Namespace(ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedSlice(u.Object, []any{collectortest.Entry(name, "A", "192.0.2.2")}, "spec", "endpoints"); err != nil {
		t.Fatal(err)
	}
	if _, err := dc.Resource(collectortest.DNSEndpointGVR).Namespace(ns).Update(t.Context(), u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	ep.Targets = []string{"192.0.2.2"}
	collectortest.WaitState(t, collectortest.CRDSubject(ns, ns, "web"), []events.Endpoint{ep})
	if u, err = dc.Resource(collectortest.DNSEndpointGVR).Namespace(ns).Get(t.Context(), "web", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if conds, found, _ := unstructured.NestedSlice(u.Object, "status", "conditions"); found {
		t.Fatalf("conditions written without the right to: %v", conds)
	}
}

// statusErrors reads zonestream_collector_kube_status_errors_total{what}.
func statusErrors(t *testing.T, what string) float64 {
	t.Helper()
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "zonestream_collector_kube_status_errors_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "what" && l.GetValue() == what {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// counterTotal is the sum of every series of the counter called name.
func counterTotal(t *testing.T, name string) float64 {
	t.Helper()
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

func publish(t *testing.T, subject string, ev events.Event) {
	t.Helper()
	if _, _, err := events.Publish(t.Context(), collectortest.JS, subject, ev, ""); err != nil {
		t.Fatal(fmt.Errorf("publish %s: %w", subject, err))
	}
}
