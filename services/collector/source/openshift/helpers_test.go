package openshift_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

var routes = schema.GroupVersionResource{Group: "route.openshift.io", Version: "v1", Resource: "routes"}

func routeConfig(ns string) collector.Config {
	cfg := collector.Config{ClusterName: ns, Namespace: ns, Sources: []string{"openshift-route"}}
	cfg.OpenShift.PollInterval = 100 * time.Millisecond
	return cfg
}

func routeSubject(ns, name string) string {
	return events.SourceSubject(ns, "openshift-route", ns, name)
}

// routerVerdict is one status.ingress entry: a router's verdict.
type routerVerdict struct {
	host, router, canonical string
	admitted                string // "True", "False"; "": no condition
}

func admittedBy(host, router, canonical string) routerVerdict {
	return routerVerdict{host: host, router: router, canonical: canonical, admitted: "True"}
}

func rejectedBy(host, router, canonical string) routerVerdict {
	return routerVerdict{host: host, router: router, canonical: canonical, admitted: "False"}
}

// route is a Route to create: spec.host (may be empty) and the routers'
// verdicts, written to its status subresource as the routers would.
type route struct {
	name        string
	annotations map[string]string
	labels      map[string]string
	specHost    string
	status      []routerVerdict
}

func (r route) object() *unstructured.Unstructured {
	spec := map[string]any{"to": map[string]any{"kind": "Service", "name": "web"}}
	if r.specHost != "" {
		spec["host"] = r.specHost
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "route.openshift.io/v1", "kind": "Route",
		"metadata": map[string]any{"name": r.name}, "spec": spec,
	}}
	u.SetAnnotations(r.annotations)
	u.SetLabels(r.labels)
	return u
}

func (r route) statusObject() map[string]any {
	var ingress []any
	for _, v := range r.status {
		ing := map[string]any{"host": v.host, "routerName": v.router, "routerCanonicalHostname": v.canonical}
		if v.admitted != "" {
			ing["conditions"] = []any{map[string]any{"type": "Admitted", "status": v.admitted,
				"lastTransitionTime": "2025-01-01T00:00:00Z"}}
		}
		ingress = append(ingress, ing)
	}
	return map[string]any{"ingress": ingress}
}

// create creates the Route in ns and sets its status.
func (r route) create(t *testing.T, ns string) {
	t.Helper()
	dc := collectortest.DynamicClient(t, collectortest.Cluster.Config)
	got := collectortest.CreateObject(t, dc, routes, ns, r.object())
	if len(r.status) == 0 {
		return
	}
	got.Object["status"] = r.statusObject()
	if _, err := dc.Resource(routes).Namespace(ns).UpdateStatus(t.Context(), got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// full renders endpoints with what collectortest.Render leaves out: set
// identifier and provider-specific properties.
func full(eps []events.Endpoint) string {
	events.SortEndpoints(eps)
	var b strings.Builder
	for _, e := range eps {
		fmt.Fprintf(&b, "%s %s ttl=%d %v set=%q %v\n", e.DNSName, e.RecordType, e.RecordTTL, e.Targets, e.SetIdentifier, e.ProviderSpecific)
	}
	return b.String()
}

// expectFull starts a collector with cfg and checks that it publishes
// exactly want (compared in full) for subj, or nothing for an empty want.
func expectFull(t *testing.T, cfg collector.Config, subj string, want []events.Endpoint) {
	t.Helper()
	collectortest.StartCollector(t, cfg)
	if len(want) == 0 {
		if s, ok := collectortest.LastState(t, subj); ok {
			t.Fatalf("published %v, want nothing", full(s.Endpoints))
		}
		return
	}
	got := collectortest.WaitState(t, subj, slices.Clone(want))
	if full(got.Endpoints) != full(want) {
		t.Fatalf("published\n%swant\n%s", full(got.Endpoints), full(want))
	}
}

func cname(name, target string) events.Endpoint { return collectortest.EP(name, "CNAME", target) }

func withProps(e events.Endpoint, kv ...string) events.Endpoint {
	for i := 0; i+1 < len(kv); i += 2 {
		e.ProviderSpecific = append(e.ProviderSpecific, events.ProviderSpecificProperty{Name: kv[i], Value: kv[i+1]})
	}
	return e
}
