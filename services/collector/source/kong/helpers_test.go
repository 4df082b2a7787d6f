package kong_test

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

var tcpIngresses = schema.GroupVersionResource{Group: "configuration.konghq.com", Version: "v1beta1", Resource: "tcpingresses"}

func kongConfig(ns string) collector.Config {
	cfg := collector.Config{ClusterName: ns, Namespace: ns, Sources: []string{"kong-tcpingress"}}
	cfg.Kong.PollInterval = 100 * time.Millisecond
	return cfg
}

func kongSubject(ns, name string) string {
	return events.SourceSubject(ns, "kong-tcpingress", ns, name)
}

// tcpIngress is a TCPIngress to create: one rule per host (port 9000 and
// up, to a Service), and the load balancer Kong writes to its status.
type tcpIngress struct {
	name        string
	annotations map[string]string
	labels      map[string]string
	hosts       []string
	lb          []string // IPs and hostnames, one entry each
}

func (ti tcpIngress) object() *unstructured.Unstructured {
	var rules []any
	for i, h := range ti.hosts {
		rules = append(rules, map[string]any{"host": h, "port": int64(9000 + i),
			"backend": map[string]any{"serviceName": "tcp", "servicePort": int64(8080)}})
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "configuration.konghq.com/v1beta1", "kind": "TCPIngress",
		"metadata": map[string]any{"name": ti.name}, "spec": map[string]any{"rules": rules},
	}}
	u.SetAnnotations(ti.annotations)
	u.SetLabels(ti.labels)
	return u
}

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

// create creates u in ns and writes the load balancer to its status, as
// Kong does.
func create(t *testing.T, ns string, u *unstructured.Unstructured, lb ...string) {
	t.Helper()
	dc := collectortest.DynamicClient(t, collectortest.Cluster.Config)
	got := collectortest.CreateObject(t, dc, tcpIngresses, ns, u)
	if len(lb) == 0 {
		return
	}
	got.Object["status"] = loadBalancer(lb...)
	if _, err := dc.Resource(tcpIngresses).Namespace(ns).UpdateStatus(t.Context(), got, metav1.UpdateOptions{}); err != nil {
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

func cnames(target string, names ...string) []events.Endpoint {
	var eps []events.Endpoint
	for _, n := range names {
		eps = append(eps, collectortest.EP(n, "CNAME", target))
	}
	return eps
}
