package contour_test

import (
	"fmt"
	"net/netip"
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

var httpProxies = schema.GroupVersionResource{Group: "projectcontour.io", Version: "v1", Resource: "httpproxies"}

func contourConfig(ns string) collector.Config {
	cfg := collector.Config{ClusterName: ns, Namespace: ns, Sources: []string{"contour-httpproxy"}}
	cfg.Contour.PollInterval = 100 * time.Millisecond
	return cfg
}

func proxySubject(cluster, ns, name string) string {
	return events.SourceSubject(cluster, "contour-httpproxy", ns, name)
}

// proxy is an HTTPProxy to create: its virtual host's fqdn and the load
// balancer Contour writes to its status (IPs and hostnames, one entry
// each). No fqdn: no virtual host (an included proxy, ExternalDNS'
// "delegate"): Contour's CRD refuses an empty fqdn, which ExternalDNS'
// tests write for "no host".
type proxy struct {
	name        string
	annotations map[string]string
	labels      map[string]string
	fqdn        string
	lb          []string
	want        []events.Endpoint // nil: nothing published
}

func (p proxy) object() *unstructured.Unstructured {
	spec := map[string]any{"routes": []any{map[string]any{"services": []any{map[string]any{"name": "web", "port": int64(80)}}}}}
	if p.fqdn != "" {
		spec["virtualhost"] = map[string]any{"fqdn": p.fqdn}
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "projectcontour.io/v1", "kind": "HTTPProxy",
		"metadata": map[string]any{"name": p.name}, "spec": spec,
	}}
	u.SetAnnotations(p.annotations)
	u.SetLabels(p.labels)
	return u
}

// loadBalancer is the status's load balancer: ExternalDNS' tests list the
// IPs, then the hostnames.
func loadBalancer(addrs ...string) map[string]any {
	var ing []any
	for _, a := range addrs {
		if _, err := netip.ParseAddr(a); err == nil {
			ing = append(ing, map[string]any{"ip": a})
		} else {
			ing = append(ing, map[string]any{"hostname": a})
		}
	}
	return map[string]any{"loadBalancer": map[string]any{"ingress": ing}}
}

// create creates the HTTPProxy in ns and writes its status, as Contour
// does.
func (p proxy) create(t *testing.T, ns string) {
	t.Helper()
	dc := collectortest.DynamicClient(t, collectortest.Cluster.Config)
	got := collectortest.CreateObject(t, dc, httpProxies, ns, p.object())
	if len(p.lb) == 0 {
		return
	}
	got.Object["status"] = loadBalancer(p.lb...)
	if _, err := dc.Resource(httpProxies).Namespace(ns).UpdateStatus(t.Context(), got, metav1.UpdateOptions{}); err != nil {
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

// expectFull checks that the running collector publishes exactly want
// (compared in full) for subj, or nothing for an empty want (the
// collector being ready, its first pass is done).
func expectFull(t *testing.T, subj string, want []events.Endpoint) {
	t.Helper()
	if len(want) == 0 {
		if s, ok := collectortest.LastState(t, subj); ok {
			t.Fatalf("%s: published %v, want nothing", subj, full(s.Endpoints))
		}
		return
	}
	got := collectortest.WaitState(t, subj, slices.Clone(want))
	if full(got.Endpoints) != full(want) {
		t.Fatalf("%s: published\n%swant\n%s", subj, full(got.Endpoints), full(want))
	}
}

func ep(name, typ string, targets ...string) events.Endpoint {
	return collectortest.EP(name, typ, targets...)
}

func withProps(e events.Endpoint, kv ...string) events.Endpoint {
	for i := 0; i+1 < len(kv); i += 2 {
		e.ProviderSpecific = append(e.ProviderSpecific, events.ProviderSpecificProperty{Name: kv[i], Value: kv[i+1]})
	}
	return e
}

func withTTL(e events.Endpoint, ttl int64) events.Endpoint {
	e.RecordTTL = ttl
	return e
}
